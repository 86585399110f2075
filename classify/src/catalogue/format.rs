//! The catalogue's file format: `catalogue.toml` and `rules/*.toml` as
//! written, read into serde types and nothing more. Every field is kept as
//! text or numbers the way the file spells it; what the values mean, and
//! whether they are valid, is the compiler's business (`compile`), so one
//! bad value is reported beside every other instead of stopping the read.

use super::problems::CatalogueError;
use super::problems::{Location, Problems};
use crate::provenance::ProvenanceSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `catalogue.toml` plus every rule, before validation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CatalogueSpec {
    pub version: String,
    #[serde(default)]
    pub description: String,
    pub tiers: Vec<TierSpec>,
    #[serde(default)]
    pub timing_profiles: BTreeMap<String, Vec<String>>,
    pub codes: BTreeMap<String, CodeSpec>,
    /// Which parts of an envelope are evidence (see `provenance`).
    pub provenance: ProvenanceSpec,
    /// Filled from the rule files.
    #[serde(skip)]
    pub rules: Vec<RuleSpec>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct TierSpec {
    pub name: String,
    pub description: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodeSpec {
    pub class: Option<String>,
    pub scope: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub example: String,
    pub long_wait: Option<LongWaitSpec>,
}

/// A code whose validated wait is at least `seconds` becomes `code`
/// (a "rate limit" that lasts hours is a usage window).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LongWaitSpec {
    pub seconds: u64,
    pub code: String,
}

/// One `rules/*.toml` file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default)]
    #[allow(dead_code)]
    about: String,
    #[serde(default)]
    #[allow(dead_code)]
    docs: Vec<String>,
    #[serde(default)]
    rule: Vec<RuleSpec>,
}

/// One rule as written. All given conditions must hold.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSpec {
    pub id: String,
    pub tier: String,
    pub code: String,
    pub confidence: Option<String>,
    pub scope: Option<String>,
    /// A timing profile name; without one the rule sets no timing.
    pub timing: Option<String>,
    #[serde(default)]
    pub note: String,
    /// Any of these HTTP statuses (from responses, JSON or prose).
    pub status: Option<Vec<u16>>,
    /// A status in this inclusive range.
    pub status_range: Option<[u16; 2]>,
    /// Whether any status is known at all.
    pub has_status: Option<bool>,
    /// Any of these normalised error identifiers (type, code, status, reason,
    /// exception name, codex_error_info).
    pub error_type: Option<Vec<String>>,
    /// A Google QuotaFailure quota id matches this pattern.
    pub quota_id: Option<String>,
    /// No quota id matches this pattern.
    pub not_quota_id: Option<String>,
    pub acp_code: Option<Vec<i64>>,
    pub exit_code: Option<Vec<i64>>,
    pub signal: Option<Vec<String>>,
    pub stop_reason: Option<Vec<String>>,
    /// A pattern over the text haystacks named by `text_in` (default `error`).
    pub text: Option<String>,
    /// A pattern that must not match (same haystacks).
    pub not_text: Option<String>,
    pub text_in: Option<Vec<String>>,
    /// An HTTP request got no response.
    pub no_response: Option<bool>,
    /// A tool call failed.
    pub tool_failed: Option<bool>,
    /// The file the rule came from (set while loading).
    #[serde(skip)]
    pub file: String,
}

/// Reads `catalogue.toml` text and the rule files (`(name, text)`) into one
/// spec; every file that does not read is reported.
pub(super) fn read(
    catalogue_toml: &str,
    rule_files: &[(&str, &str)],
) -> Result<CatalogueSpec, CatalogueError> {
    let mut problems = Problems::default();
    let catalogue_file = Location::file("catalogue.toml");
    let spec: Option<CatalogueSpec> = match toml::from_str(catalogue_toml) {
        Ok(s) => Some(s),
        Err(e) => {
            problems.push(&catalogue_file, e.to_string());
            None
        }
    };
    let mut rules = Vec::new();
    for (name, text) in rule_files {
        match toml::from_str::<RuleFile>(text) {
            Ok(f) => rules.extend(f.rule.into_iter().map(|mut r| {
                r.file = (*name).to_owned();
                r
            })),
            Err(e) => problems.push(&Location::file(name), e.to_string()),
        }
    }
    if !problems.is_empty() {
        return Err(problems.into_error());
    }
    let Some(mut spec) = spec else {
        problems.push(&catalogue_file, "missing");
        return Err(problems.into_error());
    };
    spec.rules = rules;
    Ok(spec)
}
