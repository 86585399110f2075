//! Identities and fences as types, so a route id cannot be passed where a
//! profile id belongs and a generation is not just any integer. On the wire
//! each is its inner value (`"r_…"`, `3`).

use serde::{Deserialize, Serialize};
use std::fmt;

macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub String);

        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> $name {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> $name {
                $name(s.to_string())
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        #[cfg(any(test, feature = "reader"))]
        impl crate::wire_json::FromJson for $name {
            fn from_json(v: &serde_json::Value) -> Result<$name, crate::wire_json::Error> {
                crate::wire_json::FromJson::from_json(v).map($name)
            }
        }
    };
}

string_id!(
    /// A route's id (`r_…`).
    RouteId
);

string_id!(
    /// A dynamic profile's id (`p_…`).
    ProfileId
);

/// A route's generation: the fence every transition and manual action
/// names. It only grows.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Generation(pub i64);

impl Generation {
    /// The first generation of a new route.
    pub const FIRST: Generation = Generation(1);

    pub fn get(self) -> i64 {
        self.0
    }

    /// The generation after this one.
    pub fn next(self) -> Generation {
        Generation(self.0 + 1)
    }
}

impl std::ops::Add<i64> for Generation {
    type Output = Generation;

    fn add(self, n: i64) -> Generation {
        Generation(self.0 + n)
    }
}

impl From<i64> for Generation {
    fn from(g: i64) -> Generation {
        Generation(g)
    }
}

#[cfg(any(test, feature = "reader"))]
impl crate::wire_json::FromJson for Generation {
    fn from_json(v: &serde_json::Value) -> Result<Generation, crate::wire_json::Error> {
        crate::wire_json::FromJson::from_json(v).map(Generation)
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
