//! Shared resource circuits on the wire: what `GET /api/v1/circuits`
//! answers and what a waiting route's pending schedule says about the
//! circuit holding it. Shared by server and browser; the rules live in the
//! server's `circuits` module, the wording in [`crate::words`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What kind of resource a circuit guards.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum CircuitScope {
    /// Every model and account of one provider (`anthropic`).
    Provider,
    /// One provider account a candidate names with `account_ref`.
    Account,
    /// One model of one provider (`anthropic/claude-sonnet-4-5`).
    Model,
    /// One candidate's own agent profile (`profile_ref`).
    Profile,
}

read_by_name!(CircuitScope);

impl CircuitScope {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Where a circuit is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum CircuitStatus {
    /// Working; nothing is held back.
    Closed,
    /// Failing: candidates on it are ineligible until `until`.
    Open,
    /// Expired, and one route's attempt is the probe.
    Probing,
}

read_by_name!(CircuitStatus);

impl CircuitStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One circuit as `GET /api/v1/circuits` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CircuitView {
    pub scope: CircuitScope,
    /// The resource's stable, non-secret name (`anthropic/team-a`).
    pub resource: String,
    /// The resource in words for people ("Anthropic account team-a").
    pub label: String,
    pub state: CircuitStatus,
    /// Open: until when candidates on it are ineligible.
    #[serde(default, deserialize_with = "crate::wire_time::rfc3339_opt")]
    pub until: Option<DateTime<Utc>>,
    /// Probing: the route whose attempt is the probe…
    pub probe_holder: Option<String>,
    /// …and when its lease ends (another route may probe after that).
    #[serde(default, deserialize_with = "crate::wire_time::rfc3339_opt")]
    pub probe_until: Option<DateTime<Utc>>,
    /// Routes whose pending schedule waits for this circuit.
    pub routes_waiting: i64,
    /// The code that opened it last (`quota_limited`).
    pub code: String,
    /// Openings in a row since the last successful probe.
    pub openings: u32,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub changed_at: DateTime<Utc>,
}

/// The answer of `GET /api/v1/circuits`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CircuitList {
    pub circuits: Vec<CircuitView>,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub server_time: DateTime<Utc>,
}

/// `POST /api/v1/circuits/release` and `POST /api/v1/circuits/probe`: the
/// circuit an administrator acts on, named as `GET /api/v1/circuits`
/// lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CircuitRequest {
    pub scope: CircuitScope,
    /// The resource's name (`anthropic/team-a`).
    pub resource: String,
}

impl CircuitRequest {
    /// `account:anthropic/team-a`, as the command line and schedules name
    /// a circuit.
    pub fn parse_key(key: &str) -> Option<CircuitRequest> {
        let (scope, resource) = key.split_once(':')?;
        Some(CircuitRequest {
            scope: scope.parse().ok()?,
            resource: resource.to_string(),
        })
        .filter(|r| !r.resource.trim().is_empty())
    }
}

/// The browser's readers (`crate::wire_json`), field for field as serde's.
#[cfg(any(test, feature = "reader"))]
mod read {
    use super::*;
    use crate::wire_json::{Error, Fields, FromJson};
    use serde_json::Value;

    impl FromJson for CircuitView {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(CircuitView {
                scope: o.get("scope")?,
                resource: o.get("resource")?,
                label: o.get("label")?,
                state: o.get("state")?,
                until: o.get("until")?,
                probe_holder: o.get("probe_holder")?,
                probe_until: o.get("probe_until")?,
                routes_waiting: o.get("routes_waiting")?,
                code: o.get("code")?,
                openings: o.get("openings")?,
                changed_at: o.get("changed_at")?,
            })
        }
    }

    impl FromJson for CircuitList {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(CircuitList {
                circuits: o.get("circuits")?,
                server_time: o.get("server_time")?,
            })
        }
    }

    impl FromJson for CircuitHold {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(CircuitHold {
                scope: o.get("scope")?,
                resource: o.get("resource")?,
                until: o.get("until")?,
                awaiting_probe: o.get("awaiting_probe")?,
            })
        }
    }
}

/// Why a waiting route's deadline is where it is: a shared circuit holds
/// its candidate, so the deadline is the circuit's (or its probe's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CircuitHold {
    pub scope: CircuitScope,
    pub resource: String,
    /// The circuit is open until then (or its probe's lease ends then).
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub until: DateTime<Utc>,
    /// Another route is probing: this one waits for the probe's outcome.
    pub awaiting_probe: bool,
}
