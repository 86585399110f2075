//! The classification: what the classifier answers for one evidence
//! envelope (the `classify` crate makes it; the server records it with each
//! attempt; adapters and the browser read it).

use crate::evidence::Phase;
use crate::policy::ErrorClass;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize, Serializer};

/// How sure a rule is. Recovering codes need `medium` or `high`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    pub fn parse(s: &str) -> Option<Confidence> {
        Some(match s {
            "low" => Confidence::Low,
            "medium" => Confidence::Medium,
            "high" => Confidence::High,
            _ => return None,
        })
    }
}

/// What a failure is about, when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Provider,
    Account,
    Model,
    Profile,
    Request,
}

impl Scope {
    pub fn parse(s: &str) -> Option<Scope> {
        Some(match s {
            "provider" => Scope::Provider,
            "account" => Scope::Account,
            "model" => Scope::Model,
            "profile" => Scope::Profile,
            "request" => Scope::Request,
            _ => return None,
        })
    }
}

/// The classifier's answer, as the API answers it and every attempt records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Classification {
    /// Stable semantic cause, e.g. `provider_overloaded`.
    pub code: String,
    /// `transient`, `hard`, `not_provider` or `unclassified`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "transient"))]
    pub class: ErrorClass,
    pub catalogue_version: String,
    pub confidence: Confidence,
    pub scope: Option<Scope>,
    /// Stable id of the rule that decided (`fallback.*` when none did).
    pub classifier_rule: String,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    pub phase: Option<Phase>,
    /// The reference time: the envelope's, or the classifier's clock.
    #[serde(serialize_with = "rfc3339")]
    pub occurred_at: DateTime<Utc>,
    /// Validated wait from `occurred_at`, in seconds (millisecond precision).
    #[serde(serialize_with = "seconds")]
    pub retry_after_seconds: Option<f64>,
    /// `occurred_at + retry_after_seconds`, RFC 3339 UTC.
    #[serde(serialize_with = "rfc3339_opt")]
    pub reset_at: Option<DateTime<Utc>>,
    /// At most 240 characters, secrets and identities redacted.
    pub safe_excerpt: String,
    /// Why: the rules that matched in each tier, the one that decided,
    /// where its evidence came from, the timing source. Present when asked
    /// for (`classify --explain`) and on every attempt the service records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explain: Option<crate::explain::Explain>,
}

fn rfc3339<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

fn rfc3339_opt<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => rfc3339(t, s),
        None => s.serialize_none(),
    }
}

/// Whole seconds print as integers (`12`), others as decimals (`1.574`).
fn seconds<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => s.serialize_i64(*x as i64),
        Some(x) => s.serialize_f64(*x),
        None => s.serialize_none(),
    }
}
