//! The catalogue: versioned data (in `catalogue/` at the repository root)
//! that says which codes exist, which class each belongs to, and which rules
//! recognise them. This module holds the files embedded into the binary
//! and what the [`Catalogue`] answers (loading, describing, explaining);
//! the compiled form itself is `compiled`'s, reading the files is
//! `format`'s job, validating and compiling them `compile`'s (every
//! problem reported with where it lies, see `problems`), deciding between
//! matching rules `verdict`'s, and matching itself is `super::matcher`'s.
//!
//! Files, all embedded into the binary so the CLI works from any directory
//! (a directory in the same layout can stand in for them at run time:
//! `dir`):
//! - `catalogue.toml`: version, priority tiers, timing profiles, and the
//!   code registry (class, default scope, description, example).
//! - `rules/*.toml`: rules, one file per provider or agent. A rule has a
//!   stable id, a tier, a code, a confidence, an optional scope and timing
//!   profile, and conditions that must all hold (statuses, error
//!   identifiers, Google quota ids, ACP codes, stop reasons, exit codes,
//!   signals, text patterns and their exclusions).
//! - `fixtures/*.json`: sanitised evidence with its expected classification.
//!
//! Matching: every rule is evaluated; the best (first-listed) tier with a
//! match decides. If the matches in that tier disagree on the code the
//! evidence is conflicting and the answer is `unknown`. Rule order in the
//! files never matters: ties between agreeing rules break on confidence,
//! then on the number of conditions, then on the rule id.
//!
//! Text patterns are ASCII case-insensitive and multi-line. Per haystack, an
//! Aho-Corasick pass over literals every pattern requires picks the few
//! patterns that can match; only those run (see `matcher::prefilter`).

pub(crate) mod compile;
mod compiled;
pub mod dir;
mod format;
pub(crate) mod problems;
pub(crate) mod verdict;

pub use compiled::Catalogue;
pub use dir::CatalogueFiles;
pub use domain::classification::{Confidence, Scope};
pub use format::{CatalogueSpec, CodeSpec, LongWaitSpec, RuleSpec, TierSpec};
pub use problems::CatalogueError;

use super::evidence::Evidence;
use super::facts::Facts;
use domain::policy::ErrorClass;
use serde::Serialize;
use std::sync::LazyLock;
use verdict::Verdict;

// ---------------------------------------------------------------------------
// Embedded files

/// `catalogue.toml`.
pub const CATALOGUE_SOURCE: (&str, &str) = (
    "catalogue.toml",
    include_str!("../../../catalogue/catalogue.toml"),
);

/// Rule files, one per provider or agent.
pub const RULE_SOURCES: &[(&str, &str)] = &[
    (
        "rules/generic.toml",
        include_str!("../../../catalogue/rules/generic.toml"),
    ),
    (
        "rules/anthropic.toml",
        include_str!("../../../catalogue/rules/anthropic.toml"),
    ),
    (
        "rules/claude-code.toml",
        include_str!("../../../catalogue/rules/claude-code.toml"),
    ),
    (
        "rules/openai.toml",
        include_str!("../../../catalogue/rules/openai.toml"),
    ),
    (
        "rules/codex.toml",
        include_str!("../../../catalogue/rules/codex.toml"),
    ),
    (
        "rules/google.toml",
        include_str!("../../../catalogue/rules/google.toml"),
    ),
    (
        "rules/gemini-cli.toml",
        include_str!("../../../catalogue/rules/gemini-cli.toml"),
    ),
    (
        "rules/bedrock.toml",
        include_str!("../../../catalogue/rules/bedrock.toml"),
    ),
    (
        "rules/openrouter.toml",
        include_str!("../../../catalogue/rules/openrouter.toml"),
    ),
    (
        "rules/github-models.toml",
        include_str!("../../../catalogue/rules/github-models.toml"),
    ),
    (
        "rules/cerebras.toml",
        include_str!("../../../catalogue/rules/cerebras.toml"),
    ),
    (
        "rules/litellm-aider.toml",
        include_str!("../../../catalogue/rules/litellm-aider.toml"),
    ),
    (
        "rules/opencode.toml",
        include_str!("../../../catalogue/rules/opencode.toml"),
    ),
    (
        "rules/copilot.toml",
        include_str!("../../../catalogue/rules/copilot.toml"),
    ),
    (
        "rules/other-agents.toml",
        include_str!("../../../catalogue/rules/other-agents.toml"),
    ),
    (
        "rules/agent-wordings.toml",
        include_str!("../../../catalogue/rules/agent-wordings.toml"),
    ),
    (
        "rules/openai-compatible.toml",
        include_str!("../../../catalogue/rules/openai-compatible.toml"),
    ),
    (
        "rules/cn-providers.toml",
        include_str!("../../../catalogue/rules/cn-providers.toml"),
    ),
    (
        "rules/cn-provider-codes.toml",
        include_str!("../../../catalogue/rules/cn-provider-codes.toml"),
    ),
    (
        "rules/gateways.toml",
        include_str!("../../../catalogue/rules/gateways.toml"),
    ),
    (
        "rules/local-inference.toml",
        include_str!("../../../catalogue/rules/local-inference.toml"),
    ),
    (
        "rules/agent-runtime.toml",
        include_str!("../../../catalogue/rules/agent-runtime.toml"),
    ),
    (
        "rules/generic-tier.toml",
        include_str!("../../../catalogue/rules/generic-tier.toml"),
    ),
    (
        "rules/generic-services.toml",
        include_str!("../../../catalogue/rules/generic-services.toml"),
    ),
    (
        "rules/generic-components.toml",
        include_str!("../../../catalogue/rules/generic-components.toml"),
    ),
    (
        "rules/generic-libraries.toml",
        include_str!("../../../catalogue/rules/generic-libraries.toml"),
    ),
    (
        "rules/agent-components.toml",
        include_str!("../../../catalogue/rules/agent-components.toml"),
    ),
];

/// One rule that matched, for explanations and collision checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleMatch {
    pub rule: String,
    pub tier: String,
    /// 0 is the highest-priority tier.
    pub tier_rank: usize,
    pub code: String,
}

/// What the rules make of one envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// Every matching rule, best tier first, then by id.
    pub matches: Vec<RuleMatch>,
    /// Rules of the best matching tier that disagree on the code (empty when
    /// they agree).
    pub conflicting: Vec<String>,
}

/// The catalogue as the UI and docs see it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogueSummary {
    pub version: String,
    pub tiers: Vec<TierSpec>,
    pub codes: Vec<CodeSummary>,
    pub rule_count: usize,
}

/// One code, with its class and a plain explanation.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CodeSummary {
    pub code: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "transient"))]
    pub class: ErrorClass,
    pub scope: Option<Scope>,
    pub description: String,
    pub example: String,
}

static BUILTIN: LazyLock<Catalogue> = LazyLock::new(|| match Catalogue::load_builtin() {
    Ok(c) => c,
    // The catalogue is embedded at compile time and checked by tests; a
    // broken one must stop the process at start-up, loudly.
    Err(e) => panic!("{e}"),
});

impl Catalogue {
    /// The embedded catalogue, parsed and validated once.
    pub fn builtin() -> &'static Catalogue {
        &BUILTIN
    }

    /// Parses and validates the embedded catalogue, reporting every problem.
    pub fn load_builtin() -> Result<Catalogue, CatalogueError> {
        Catalogue::from_sources(CATALOGUE_SOURCE.1, RULE_SOURCES)
    }

    /// Parses and validates a catalogue from `catalogue.toml` text and rule files.
    pub fn from_sources(
        catalogue_toml: &str,
        rule_files: &[(&str, &str)],
    ) -> Result<Catalogue, CatalogueError> {
        Catalogue::compile(Catalogue::parse(catalogue_toml, rule_files)?)
    }

    /// Parses without validating, so tests can reorder or alter rules.
    pub fn parse(
        catalogue_toml: &str,
        rule_files: &[(&str, &str)],
    ) -> Result<CatalogueSpec, CatalogueError> {
        format::read(catalogue_toml, rule_files)
    }

    /// Validates a parsed catalogue and compiles its matchers.
    pub fn compile(spec: CatalogueSpec) -> Result<Catalogue, CatalogueError> {
        compile::compile(spec)
    }

    /// The catalogue version every classification carries.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Class of a code, if the registry knows it.
    pub fn class_of(&self, code: &str) -> Option<ErrorClass> {
        self.code_ix.get(code).map(|&i| self.codes[i].class)
    }

    /// Every code and its class, in code order.
    pub fn codes(&self) -> impl Iterator<Item = (&str, ErrorClass)> {
        self.codes.iter().map(|c| (c.name.as_str(), c.class))
    }

    /// Every rule id, best tier first, then by id.
    pub fn rule_ids(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|r| r.id.as_str())
    }

    /// Tier names, best first.
    pub fn tiers(&self) -> impl Iterator<Item = &str> {
        self.tiers.iter().map(|t| t.name.as_str())
    }

    /// Version, tiers and every code with its class, description and example.
    pub fn describe(&self) -> CatalogueSummary {
        CatalogueSummary {
            version: self.version.clone(),
            tiers: self.tiers.clone(),
            codes: self
                .codes
                .iter()
                .map(|c| CodeSummary {
                    code: c.name.clone(),
                    class: c.class,
                    scope: c.scope,
                    description: c.description.clone(),
                    example: c.example.clone(),
                })
                .collect(),
            rule_count: self.rules.len(),
        }
    }

    /// Every rule that matches the evidence part of `evidence` (see
    /// `provenance`), and whether the best tier agrees.
    pub fn explain(&self, evidence: &Evidence) -> Explanation {
        let mask = self.analyse(evidence, |_, _, _, mask| mask.cloned());
        let facts = Facts::extract(evidence, mask.as_ref());
        let matched = self.matching_rules(&facts);
        let mut matches: Vec<RuleMatch> = matched
            .iter()
            .map(|&i| {
                let r = &self.rules[i];
                RuleMatch {
                    rule: r.id.clone(),
                    tier: self.tiers[r.tier].name.clone(),
                    tier_rank: r.tier,
                    code: self.codes[r.code].name.clone(),
                }
            })
            .collect();
        matches.sort_by(|a, b| (a.tier_rank, &a.rule).cmp(&(b.tier_rank, &b.rule)));
        let conflicting = match self.verdict(&matched) {
            Verdict::Conflict(v) => v.iter().map(|&i| self.rules[i].id.clone()).collect(),
            _ => Vec::new(),
        };
        Explanation {
            matches,
            conflicting,
        }
    }
}

#[cfg(test)]
impl Catalogue {
    /// See `Matcher::text_sets`.
    pub(crate) fn text_sets(
        &self,
    ) -> [(
        &super::matcher::prefilter::Prefilter,
        Vec<&regex::bytes::Regex>,
    ); 3] {
        self.matcher.text_sets()
    }
}
