//! The compiled catalogue: the codes, the rules as the verdict and the
//! classification read them, the matcher that finds which rules hold, and
//! the provenance patterns; with the confidence and scope a rule gives.
//! `compile` builds it, `verdict` and the public API in `mod.rs` read it.
//! It is a module of its own so that neither of them depends on the other.

use super::format::TierSpec;
use crate::matcher::Matcher;
use crate::provenance::Provenance;
use crate::timing::TimingSource;
use domain::policy::ErrorClass;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

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
    pub(super) fn parse(s: &str) -> Option<Confidence> {
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
    pub(super) fn parse(s: &str) -> Option<Scope> {
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

#[derive(Debug)]
pub(crate) struct Code {
    pub name: String,
    pub class: ErrorClass,
    pub scope: Option<Scope>,
    pub description: String,
    pub example: String,
    /// (seconds, code index)
    pub long_wait: Option<(f64, usize)>,
}

/// One rule, as the verdict and the classification read it; what it takes
/// to match lives with the same index in the [`Matcher`].
#[derive(Debug)]
pub(crate) struct Rule {
    pub id: String,
    pub tier: usize,
    pub code: usize,
    pub confidence: Confidence,
    pub scope: Option<Scope>,
    /// Trusted timing sources, in precedence order.
    pub timing: Vec<TimingSource>,
    /// Haystacks (`Source` bits) the text conditions read.
    pub text_mask: u8,
    /// How many positive conditions the rule has (a tie-break).
    pub weight: usize,
}

/// The validated, compiled catalogue.
#[derive(Debug)]
pub struct Catalogue {
    pub(crate) version: String,
    pub(crate) tiers: Vec<TierSpec>,
    pub(crate) codes: Vec<Code>,
    pub(crate) code_ix: HashMap<String, usize>,
    /// Best tier first, then by id.
    pub(crate) rules: Vec<Rule>,
    pub(crate) matcher: Matcher,
    pub(crate) provenance: Provenance,
    pub(crate) unknown: usize,
}
