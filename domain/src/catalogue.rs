//! The catalogue in force on the wire: which version a server classifies
//! with, where it came from, and what a reload answers. Shared by the
//! server (which loads catalogues, see its `catalogue` module) and the
//! browser (which shows the version).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

wire_names! {
    /// Where the catalogue in force was loaded from.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum CatalogueSource {
        /// The catalogue compiled into the binary (no `serve --catalogue`).
        Embedded,
        /// A catalogue directory (`serve --catalogue DIR`), reloadable.
        Directory,
    }
}

/// The catalogue this server instance classifies with now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogueInForce {
    /// The catalogue's `version`, as every classification records it.
    pub version: String,
    pub source: CatalogueSource,
    /// The directory it was read from (with `directory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// When this instance loaded it.
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub loaded_at: DateTime<Utc>,
    /// How many rules it has.
    pub rule_count: u64,
}

/// What `POST /api/v1/catalogue/reload` answers when the directory loaded:
/// the catalogue now in force and the version it replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogueReload {
    pub in_force: CatalogueInForce,
    pub previous_version: String,
}

/// The browser's readers (`crate::wire_json`), field for field as serde's.
#[cfg(any(test, feature = "reader"))]
mod read {
    use super::*;
    use crate::wire_json::{Error, Fields, FromJson};
    use serde_json::Value;

    impl FromJson for CatalogueInForce {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(CatalogueInForce {
                version: o.get("version")?,
                source: o.get("source")?,
                directory: o.get("directory")?,
                loaded_at: o.get("loaded_at")?,
                rule_count: o.get("rule_count")?,
            })
        }
    }
}

/// What an unrecognised failure looked like, without anything secret: the
/// shape of its evidence envelope, kept with each unknown-log entry so a
/// fixture can be written from it (`catalogue fixture-from-unknown`) and a
/// newer catalogue tried on it (`catalogue reclassify-unknown`). Every text
/// is the classifier's sanitiser's bounded excerpt; header values are
/// dropped, only their names kept.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EvidenceSkeleton {
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub provider_id: Option<String>,
    #[serde(default)]
    pub model_id: Option<String>,
    #[serde(default)]
    pub phase: Option<crate::evidence::Phase>,
    /// The envelope's items, in order.
    pub items: Vec<SkeletonItem>,
}

/// One item of an [`EvidenceSkeleton`].
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SkeletonItem {
    /// The item's kind as the envelope names it (`http`, `stderr`,
    /// `process_exit`, …).
    pub kind: String,
    /// `http`: the response status (absent: no response).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// `http`: the response's header names (values are never kept).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header_names: Vec<String>,
    /// `acp_error`: the JSON-RPC error code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// `acp_update`: the update's name (`agent_message_chunk`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<String>,
    /// `process_exit`: the exit code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// `process_exit`: the signal (`SIGKILL`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
    /// The item's text (body and error, message and data, lines, stop
    /// reason) as a bounded sanitised excerpt of its end; empty when it
    /// had none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
}

/// A route attempt an unknown-log entry was seen in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnknownAttempt {
    pub route_id: String,
    /// The attempt's `seq` in the route's history.
    pub attempt_seq: i64,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub seen_at: DateTime<Utc>,
}

/// One distinct unrecognised failure: every sighting whose sanitised
/// excerpt is the same once digit runs are folded (`exit code 1` and
/// `exit code 2` are one entry).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnknownEntry {
    /// The entry's signature: a stable short hash of its folded excerpt,
    /// the id `GET /catalogue/unknown/{id}` and `catalogue
    /// fixture-from-unknown` take.
    pub id: String,
    pub safe_excerpt: String,
    pub count: u64,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub first_seen: DateTime<Utc>,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub last_seen: DateTime<Utc>,
    /// `fallback.unmatched`, `fallback.conflict` or an explicit near-miss rule.
    pub classifier_rule: String,
    /// The agent of the latest sighting, when the envelope named one.
    #[serde(default)]
    pub agent: Option<String>,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    pub catalogue_version: String,
    /// The route attempts it was seen in, newest first (the latest few;
    /// sightings outside a route, `POST /classify`, have none; attempts
    /// of routes retention pruned are left out).
    #[serde(default)]
    pub attempts: Vec<UnknownAttempt>,
}

/// The unknown log, most frequent first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnknownSnapshot {
    pub capacity: usize,
    pub evicted: u64,
    pub entries: Vec<UnknownEntry>,
}

/// One unknown-log entry with the skeleton of its latest sighting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnknownDetail {
    pub entry: UnknownEntry,
    /// Absent for entries logged before skeletons were kept.
    #[serde(default)]
    pub skeleton: Option<EvidenceSkeleton>,
}

/// What a catalogue makes of the logged unknowns
/// (`GET /catalogue/unknown/reclassify`, `catalogue reclassify-unknown`):
/// each entry's skeleton classified again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UnknownReclassification {
    /// The catalogue that classified them.
    pub catalogue_version: String,
    /// Entries in the log.
    pub entries: u64,
    /// Entries with a skeleton to classify (older ones have none).
    pub with_skeleton: u64,
    /// Entries the catalogue now classifies (a code other than
    /// `unclassified`), and how many sightings they stand for.
    pub classified: u64,
    pub classified_sightings: u64,
    /// Entries still unknown.
    pub still_unknown: u64,
    /// The codes they would now get, most entries first.
    pub by_code: Vec<ReclassifiedCode>,
    /// Each entry that would now be classified: its id and its new code.
    pub changed: Vec<ReclassifiedEntry>,
}

/// One code in an [`UnknownReclassification`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReclassifiedCode {
    pub code: String,
    /// The code's class (`transient`, `usage_limit`, …).
    pub class: String,
    pub entries: u64,
    pub sightings: u64,
}

/// One entry an [`UnknownReclassification`] would now classify.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ReclassifiedEntry {
    pub id: String,
    pub code: String,
    pub classifier_rule: String,
}
