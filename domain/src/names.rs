//! Wire names, declared once. Every closed set of names that crosses the
//! wire is an enum declared with [`wire_names!`]: serde's names and
//! `strum`'s (`Display`, `FromStr`, `&'static str`) come from the same
//! `snake_case` rule, so no hand-written table can drift from serde's.
//! Open sets (a name a newer server may add) keep what they do not know
//! in an `Other(String)` variant and read and write through
//! [`open_wire_names!`].

/// In the browser, a closed enum of wire names is read through its name's
/// text and strum's parser ([`crate::wire_json::FromJson`]); the server
/// keeps serde's own reader and its error messages.
macro_rules! read_by_name {
    ($name:ident) => {
        #[cfg(any(test, feature = "reader"))]
        impl crate::wire_json::FromJson for $name {
            fn from_json(v: &serde_json::Value) -> Result<$name, crate::wire_json::Error> {
                crate::wire_json::by_name(v)
            }
        }
    };
}

/// Declares a closed enum of wire names with `ALL`, `as_str` and `parse`.
macro_rules! wire_names {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $( $(#[$vmeta:meta])* $variant:ident ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[derive(serde::Serialize, serde::Deserialize)]
        #[derive(strum::Display, strum::EnumString, strum::IntoStaticStr, strum::VariantArray)]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        $vis enum $name {
            $( $(#[$vmeta])* $variant ),*
        }

        read_by_name!($name);

        impl $name {
            /// Every name, in declaration order.
            pub const ALL: &'static [$name] = <$name as strum::VariantArray>::VARIANTS;

            /// The wire name.
            pub fn as_str(self) -> &'static str {
                self.into()
            }

            /// The value a wire name names, if any.
            pub fn parse(s: &str) -> Option<$name> {
                s.parse().ok()
            }
        }
    };
}

/// Serde for an open set of names (an enum deriving `strum::Display` and
/// `strum::EnumString` with a `#[strum(default)] Other(String)` variant,
/// and `#[serde(from = "String", into = "String")]`).
macro_rules! open_wire_names {
    ($name:ident) => {
        impl From<String> for $name {
            fn from(s: String) -> $name {
                match s.parse() {
                    Ok(v) => v,
                    Err(_) => $name::Other(s),
                }
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.to_string()
            }
        }

        /// In the browser: any text, a name this build does not know kept
        /// as sent.
        #[cfg(any(test, feature = "reader"))]
        impl crate::wire_json::FromJson for $name {
            fn from_json(v: &serde_json::Value) -> Result<$name, crate::wire_json::Error> {
                <String as crate::wire_json::FromJson>::from_json(v).map($name::from)
            }
        }
    };
}
