//! The compiled catalogue: the codes, the rules as the verdict and the
//! classification read them, the matcher that finds which rules hold, and
//! the provenance patterns; with the confidence and scope a rule gives.
//! `compile` builds it, `verdict` and the public API in `mod.rs` read it.
//! It is a module of its own so that neither of them depends on the other.

use super::format::TierSpec;
use crate::matcher::Matcher;
use crate::provenance::Provenance;
use crate::timing::TimingSource;
use domain::classification::{Confidence, Scope};
use domain::policy::ErrorClass;
use std::collections::HashMap;

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
