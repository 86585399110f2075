//! The catalogue: versioned data (in `catalogue/` at the repository root)
//! that says which codes exist, which class each belongs to, and which rules
//! recognise them. This module loads it, validates it loudly, and compiles
//! the rules into matchers.
//!
//! Files, all embedded into the binary so the CLI works from any directory:
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
//! patterns that can match; only those run (see `prefilter`).

use super::evidence::Evidence;
use super::extract::{kind, Facts, Source};
use super::prefilter::{Hit, Prefilter};
use super::provenance::{Mask, Provenance, ProvenanceSpec};
use super::timing::TimingSource;
use app::policy::ErrorClass;
use regex::bytes::{Regex, RegexBuilder};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::sync::LazyLock;

/// How sure a rule is. Recovering codes need `medium` or `high`.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

impl Confidence {
    fn parse(s: &str) -> Option<Confidence> {
        Some(match s {
            "low" => Confidence::Low,
            "medium" => Confidence::Medium,
            "high" => Confidence::High,
            _ => return None,
        })
    }
}

/// What a failure is about, when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    Provider,
    Account,
    Model,
    Profile,
    Request,
}

impl Scope {
    fn parse(s: &str) -> Option<Scope> {
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

// ---------------------------------------------------------------------------
// The data as written

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

#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
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

/// Every problem found while loading a catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueError {
    pub problems: Vec<String>,
}

impl fmt::Display for CatalogueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "invalid catalogue ({} problems):", self.problems.len())?;
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CatalogueError {}

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
        "rules/openai-compatible.toml",
        include_str!("../../../catalogue/rules/openai-compatible.toml"),
    ),
    (
        "rules/cn-providers.toml",
        include_str!("../../../catalogue/rules/cn-providers.toml"),
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
];

// ---------------------------------------------------------------------------
// Compiled form

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

#[derive(Debug, Default)]
pub(crate) struct Conditions {
    statuses: Vec<u16>,
    status_range: Option<(u16, u16)>,
    has_status: Option<bool>,
    error_types: Vec<String>,
    quota_id: Option<Regex>,
    not_quota_id: Option<Regex>,
    acp_codes: Vec<i64>,
    exit_codes: Vec<i64>,
    signals: Vec<String>,
    stop_reasons: Vec<String>,
    text: bool,
    not_text: bool,
    no_response: Option<bool>,
    tool_failed: Option<bool>,
}

#[derive(Debug)]
pub(crate) struct Rule {
    pub id: String,
    pub tier: usize,
    pub code: usize,
    pub confidence: Confidence,
    pub scope: Option<Scope>,
    /// Trusted timing sources, in precedence order.
    pub timing: Vec<TimingSource>,
    pub text_re: Option<Regex>,
    pub not_text_re: Option<Regex>,
    /// Index of the text / not_text pattern in each haystack's prefilter.
    text_slots: [Option<usize>; 3],
    not_text_slots: [Option<usize>; 3],
    /// Haystacks (`Source` bits) the text conditions read.
    pub text_mask: u8,
    pub cond: Conditions,
    pub weight: usize,
    /// Fact kinds (`Facts::kinds`) the rule's conditions need; a rule whose
    /// kinds are not all present is skipped without looking further.
    needs: u16,
}

impl Rule {
    pub(crate) fn cond_error_types(&self) -> &[String] {
        &self.cond.error_types
    }
}

#[derive(Debug, Clone, Copy)]
enum Role {
    Text,
    NotText,
}

/// The validated, compiled catalogue.
#[derive(Debug)]
pub struct Catalogue {
    version: String,
    tiers: Vec<TierSpec>,
    pub(crate) codes: Vec<Code>,
    code_ix: HashMap<String, usize>,
    pub(crate) rules: Vec<Rule>,
    prefilters: [Prefilter; 3],
    owners: [Vec<(usize, Role)>; 3],
    rule_bits: RuleBits,
    provenance: Provenance,
    pub(crate) unknown: usize,
}

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
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CatalogueSummary {
    pub version: String,
    pub tiers: Vec<TierSpec>,
    pub codes: Vec<CodeSummary>,
    pub rule_count: usize,
}

/// One code, with its class and a plain explanation.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct CodeSummary {
    pub code: String,
    #[schema(value_type = String, example = "transient")]
    pub class: ErrorClass,
    pub scope: Option<Scope>,
    pub description: String,
    pub example: String,
}

/// The outcome of evaluating every rule.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// Index of the winning rule.
    Rule(usize),
    /// The best tier's rules disagree.
    Conflict(Vec<usize>),
    /// No rule matched.
    None,
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
        let mut problems = Vec::new();
        let mut spec: Option<CatalogueSpec> = match toml::from_str(catalogue_toml) {
            Ok(s) => Some(s),
            Err(e) => {
                problems.push(format!("catalogue.toml: {e}"));
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
                Err(e) => problems.push(format!("{name}: {e}")),
            }
        }
        if !problems.is_empty() {
            return Err(CatalogueError { problems });
        }
        let mut spec = spec.take().ok_or_else(|| CatalogueError {
            problems: vec!["catalogue.toml: missing".into()],
        })?;
        spec.rules = rules;
        Ok(spec)
    }

    /// Validates a parsed catalogue and compiles its matchers.
    pub fn compile(spec: CatalogueSpec) -> Result<Catalogue, CatalogueError> {
        let mut p: Vec<String> = Vec::new();
        if spec.version.trim().is_empty() {
            p.push("version is empty".into());
        }
        if spec.tiers.is_empty() {
            p.push("no tiers".into());
        }
        let mut tier_ix = HashMap::new();
        for (i, t) in spec.tiers.iter().enumerate() {
            if tier_ix.insert(t.name.clone(), i).is_some() {
                p.push(format!("tier `{}` is listed twice", t.name));
            }
        }
        let mut profiles: HashMap<&str, Vec<TimingSource>> = HashMap::new();
        for (name, sources) in &spec.timing_profiles {
            let mut v = Vec::new();
            for s in sources {
                match TimingSource::parse(s) {
                    Some(t) => v.push(t),
                    None => p.push(format!(
                        "timing profile `{name}`: unknown timing source `{s}`"
                    )),
                }
            }
            profiles.insert(name.as_str(), v);
        }

        // Codes
        let mut codes = Vec::new();
        let mut code_ix = HashMap::new();
        for (name, c) in &spec.codes {
            let class = match c.class.as_deref() {
                None => {
                    p.push(format!("code `{name}` has no class"));
                    ErrorClass::Unclassified
                }
                Some(s) => ErrorClass::parse(s).unwrap_or_else(|| {
                    p.push(format!("code `{name}`: unknown class `{s}`"));
                    ErrorClass::Unclassified
                }),
            };
            let scope = c.scope.as_deref().and_then(|s| {
                let sc = Scope::parse(s);
                if sc.is_none() {
                    p.push(format!("code `{name}`: unknown scope `{s}`"));
                }
                sc
            });
            if c.description.trim().is_empty() || c.example.trim().is_empty() {
                p.push(format!("code `{name}` needs a description and an example"));
            }
            code_ix.insert(name.clone(), codes.len());
            codes.push(Code {
                name: name.clone(),
                class,
                scope,
                description: c.description.trim().to_owned(),
                example: c.example.trim().to_owned(),
                long_wait: None,
            });
        }
        for (name, c) in &spec.codes {
            if let Some(lw) = &c.long_wait {
                match code_ix.get(&lw.code) {
                    Some(&target) if lw.seconds > 0 => {
                        if let Some(&me) = code_ix.get(name) {
                            codes[me].long_wait = Some((lw.seconds as f64, target));
                        }
                    }
                    Some(_) => p.push(format!("code `{name}`: long_wait.seconds must be > 0")),
                    None => p.push(format!(
                        "code `{name}`: long_wait names unknown code `{}`",
                        lw.code
                    )),
                }
            }
        }
        let unknown = match code_ix.get("unknown") {
            Some(&u) if codes[u].class == ErrorClass::Unclassified => u,
            _ => {
                p.push("the registry needs code `unknown` with class `unclassified`".into());
                0
            }
        };

        // Rules in tier order, then id order, so nothing depends on file order.
        let tier_rank = |t: &str| tier_ix.get(t).copied().unwrap_or(usize::MAX);
        let mut specs = spec.rules.clone();
        specs.sort_by(|a, b| (tier_rank(&a.tier), &a.id).cmp(&(tier_rank(&b.tier), &b.id)));
        let mut seen = HashSet::new();
        let mut rules = Vec::new();
        let mut set_patterns: [Vec<String>; 3] = Default::default();
        let mut owners: [Vec<(usize, Role)>; 3] = Default::default();
        for r in &specs {
            let at = format!("{} rule `{}`", r.file, r.id);
            if r.id.is_empty()
                || !r
                    .id
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
            {
                p.push(format!("{at}: ids use a-z, 0-9, '.', '_' and '-'"));
            }
            if !seen.insert(r.id.clone()) {
                p.push(format!("{at}: duplicate rule id"));
            }
            let tier = tier_ix.get(&r.tier).copied().unwrap_or_else(|| {
                p.push(format!("{at}: unknown tier `{}`", r.tier));
                0
            });
            let code = code_ix.get(&r.code).copied().unwrap_or_else(|| {
                p.push(format!("{at}: unknown code `{}`", r.code));
                unknown
            });
            let class = codes.get(code).map(|c| c.class);
            let recovering = matches!(class, Some(ErrorClass::Transient | ErrorClass::Hard));
            let confidence = match r.confidence.as_deref() {
                None => Confidence::High,
                Some(s) => Confidence::parse(s).unwrap_or_else(|| {
                    p.push(format!("{at}: unknown confidence `{s}`"));
                    Confidence::Low
                }),
            };
            if recovering && confidence == Confidence::Low {
                p.push(format!(
                    "{at}: a low-confidence rule cannot give a recovering code (use `unknown`)"
                ));
            }
            let scope = r.scope.as_deref().and_then(|s| {
                let sc = Scope::parse(s);
                if sc.is_none() {
                    p.push(format!("{at}: unknown scope `{s}`"));
                }
                sc
            });
            let timing = match r.timing.as_deref() {
                None => Vec::new(),
                Some(name) => match profiles.get(name) {
                    Some(v) => {
                        if !recovering {
                            p.push(format!("{at}: only transient or hard codes carry timing"));
                        }
                        super::timing::precedence(v)
                    }
                    None => {
                        p.push(format!("{at}: unknown timing profile `{name}`"));
                        Vec::new()
                    }
                },
            };
            let mut text_mask = 0u8;
            for s in r.text_in.as_deref().unwrap_or(&[]) {
                match Source::parse(s) {
                    Some(src) => text_mask |= src.bit(),
                    None => p.push(format!("{at}: unknown text_in `{s}`")),
                }
            }
            if text_mask == 0 {
                text_mask = Source::Error.bit();
            }
            let mut cond = Conditions::default();
            let mut weight = 0;
            if let Some(v) = &r.status {
                if v.iter().any(|s| !(100..=599).contains(s)) {
                    p.push(format!("{at}: statuses are 100..=599"));
                }
                cond.statuses = v.clone();
                weight += 1;
            }
            if let Some([a, b]) = r.status_range {
                if a > b {
                    p.push(format!("{at}: status_range is [low, high]"));
                }
                cond.status_range = Some((a, b));
                weight += 1;
            }
            cond.has_status = r.has_status;
            if let Some(v) = &r.error_type {
                for t in v {
                    if super::extract::norm_token(t).as_deref() != Some(t.as_str()) {
                        p.push(format!(
                            "{at}: error_type `{t}` must be written normalised (snake_case)"
                        ));
                    }
                }
                cond.error_types = v.clone();
                weight += 1;
            }
            let mut regex = |pat: &Option<String>, what: &str| -> Option<Regex> {
                let pat = pat.as_deref()?;
                match build_regex(pat) {
                    Ok(re) => Some(re),
                    Err(e) => {
                        p.push(format!("{at}: bad {what} pattern: {e}"));
                        None
                    }
                }
            };
            cond.quota_id = regex(&r.quota_id, "quota_id");
            cond.not_quota_id = regex(&r.not_quota_id, "not_quota_id");
            let text_re = regex(&r.text, "text");
            let not_text_re = regex(&r.not_text, "not_text");
            if r.quota_id.is_some() {
                weight += 1;
            }
            if let Some(v) = &r.acp_code {
                cond.acp_codes = v.clone();
                weight += 1;
            }
            if let Some(v) = &r.exit_code {
                cond.exit_codes = v.clone();
                weight += 1;
            }
            if let Some(v) = &r.signal {
                cond.signals = v.iter().map(|s| s.to_ascii_uppercase()).collect();
                weight += 1;
            }
            if let Some(v) = &r.stop_reason {
                cond.stop_reasons = v.clone();
                weight += 1;
            }
            cond.no_response = r.no_response;
            cond.tool_failed = r.tool_failed;
            if r.no_response == Some(true) {
                weight += 1;
            }
            if r.tool_failed == Some(true) {
                weight += 1;
            }
            let idx = rules.len();
            let mut text_slots = [None; 3];
            let mut not_text_slots = [None; 3];
            if let Some(pat) = &r.text {
                if text_re.is_some() {
                    cond.text = true;
                    weight += 1;
                    for src in Source::ALL {
                        if text_mask & src.bit() != 0 {
                            text_slots[src as usize] = Some(set_patterns[src as usize].len());
                            set_patterns[src as usize].push(pat.clone());
                            owners[src as usize].push((idx, Role::Text));
                        }
                    }
                }
            }
            if let Some(pat) = &r.not_text {
                if not_text_re.is_some() {
                    cond.not_text = true;
                    for src in Source::ALL {
                        if text_mask & src.bit() != 0 {
                            not_text_slots[src as usize] = Some(set_patterns[src as usize].len());
                            set_patterns[src as usize].push(pat.clone());
                            owners[src as usize].push((idx, Role::NotText));
                        }
                    }
                }
            }
            if weight == 0 {
                p.push(format!(
                    "{at}: a rule needs at least one positive condition"
                ));
            }
            let needs = cond.needs();
            rules.push(Rule {
                needs,
                id: r.id.clone(),
                tier,
                code,
                confidence,
                scope,
                timing,
                text_re,
                not_text_re,
                text_slots,
                not_text_slots,
                text_mask,
                cond,
                weight,
            });
        }
        let provenance = match Provenance::compile(&spec.provenance) {
            Ok(v) => Some(v),
            Err(e) => {
                p.extend(e);
                None
            }
        };
        let mut prefilters: [Prefilter; 3] = Default::default();
        if p.is_empty() {
            for src in Source::ALL {
                let pats: Vec<&str> = set_patterns[src as usize]
                    .iter()
                    .map(String::as_str)
                    .collect();
                match Prefilter::build(&pats) {
                    Ok(pf) => prefilters[src as usize] = pf,
                    Err(e) => p.push(format!("text prefilter ({src:?}): {e}")),
                }
            }
        }
        let Some(provenance) = provenance.filter(|_| p.is_empty()) else {
            return Err(CatalogueError { problems: p });
        };
        Ok(Catalogue {
            provenance,
            version: spec.version.trim().to_owned(),
            tiers: spec.tiers,
            codes,
            code_ix,
            rule_bits: RuleBits::new(&rules),
            rules,
            prefilters,
            owners,
            unknown,
        })
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

    /// Extracts the evidence part of `ev` and finds the deciding rules and
    /// verdict, then hands them to `then`. Provenance first (echoes,
    /// superseded notices, errors the agent carried on after are dropped);
    /// then, when the deciding tier disagrees across items, the last item's
    /// report is the outcome: earlier items are dropped and the rules run
    /// again.
    pub(crate) fn analyse<R>(
        &self,
        ev: &Evidence,
        then: impl FnOnce(&Facts, &Evaluation<'_>, &Verdict, Option<&Mask>) -> R,
    ) -> R {
        let first = Facts::extract(ev, None);
        let mask = self.provenance.mask(ev, &first);
        let facts = match &mask {
            Some(m) => Facts::extract(ev, Some(m)),
            None => first,
        };
        let earlier = {
            let evaluation = self.deciding_rules(&facts);
            let verdict = self.verdict(&evaluation.matched);
            match self.superseded_reports(&facts, &evaluation, &verdict) {
                None => return then(&facts, &evaluation, &verdict, mask.as_ref()),
                Some(items) => items,
            }
        };
        let mut mask = mask.unwrap_or_else(|| Mask::all(ev.items.len()));
        for i in earlier {
            mask.drop_item(i);
        }
        let facts = Facts::extract(ev, Some(&mask));
        let evaluation = self.deciding_rules(&facts);
        let verdict = self.verdict(&evaluation.matched);
        then(&facts, &evaluation, &verdict, Some(&mask))
    }

    /// When the deciding tier's rules disagree, each found its evidence in
    /// one item, and the rules of the latest of those items agree: the
    /// earlier items (their reports are superseded by the final one).
    fn superseded_reports(
        &self,
        facts: &Facts,
        evaluation: &Evaluation<'_>,
        verdict: &Verdict,
    ) -> Option<Vec<usize>> {
        let Verdict::Conflict(top) = verdict else {
            return None;
        };
        let place = |i: usize| match evaluation.text_place(i) {
            Some((src, pos)) => facts.item_at(src, pos),
            None => self.rules[i].cond.decisive_item(facts),
        };
        let places = top
            .iter()
            .map(|&i| place(i))
            .collect::<Option<Vec<usize>>>()?;
        let last = *places.iter().max()?;
        let codes: HashSet<usize> = top
            .iter()
            .zip(&places)
            .filter(|(_, p)| **p == last)
            .map(|(&i, _)| self.rules[i].code)
            .collect();
        let mut earlier: Vec<usize> = places.into_iter().filter(|&p| p != last).collect();
        earlier.sort_unstable();
        earlier.dedup();
        (codes.len() == 1 && !earlier.is_empty()).then_some(earlier)
    }

    /// Indexes of every rule whose conditions hold.
    pub(crate) fn matching_rules(&self, f: &Facts) -> Vec<usize> {
        self.evaluate(f, false).matched
    }

    /// The matching rules of the best tier that has any (lower tiers are
    /// not evaluated), with where their text patterns matched.
    pub(crate) fn deciding_rules<'a>(&'a self, f: &'a Facts) -> Evaluation<'a> {
        self.evaluate(f, true)
    }

    /// Rules are stored by tier, then id. Structured conditions are checked
    /// first; a rule's patterns run only when everything else already holds.
    fn evaluate<'a>(&'a self, f: &'a Facts, stop_at_first_tier: bool) -> Evaluation<'a> {
        let mut text = TextHits::new(self, f);
        let have = f.kinds();
        let mut matched = Vec::new();
        let mut current_tier = None;
        // Cheapest rejections first, 64 rules at a time: rules that need a
        // kind of fact the envelope lacks, and rules whose text pattern's
        // literals do not occur, are never looked at.
        let words = self.rule_bits.words;
        // Rules naming an error identifier the envelope has: the others
        // that need one cannot hold.
        let mut typed_ok = vec![0u64; words];
        for (t, _) in &f.tokens {
            if let Some(set) = self.rule_bits.by_type.get(t) {
                typed_ok
                    .iter_mut()
                    .zip(set)
                    .for_each(|(ok, bits)| *ok |= bits);
            }
        }
        'words: for w in 0..words {
            let mut excluded = self.rule_bits.typed[w] & !typed_ok[w];
            for (k, needs) in self.rule_bits.needs.chunks(words).enumerate() {
                if have & (1 << k) == 0 {
                    excluded |= needs[w];
                }
            }
            let text_ok = !self.rule_bits.text[w] | text.may_text[w];
            let mut candidates = self.rule_bits.all[w] & !excluded & text_ok;
            while candidates != 0 {
                let i = w * 64 + candidates.trailing_zeros() as usize;
                candidates &= candidates - 1;
                let r = &self.rules[i];
                if stop_at_first_tier && !matched.is_empty() && current_tier != Some(r.tier) {
                    break 'words;
                }
                current_tier = Some(r.tier);
                if !r.cond.holds(f) {
                    continue;
                }
                if r.cond.text && !text.hit(i, Role::Text) {
                    continue;
                }
                if r.cond.not_text && text.may_not(i) && text.hit(i, Role::NotText) {
                    continue;
                }
                matched.push(i);
            }
        }
        Evaluation { matched, text }
    }

    /// The winner among matching rules: best tier; agreeing rules break ties
    /// by confidence, weight, id; disagreeing ones are a conflict.
    pub(crate) fn verdict(&self, matched: &[usize]) -> Verdict {
        let Some(best_tier) = matched.iter().map(|&i| self.rules[i].tier).min() else {
            return Verdict::None;
        };
        let top: Vec<usize> = matched
            .iter()
            .copied()
            .filter(|&i| self.rules[i].tier == best_tier)
            .collect();
        let code = self.rules[top[0]].code;
        if top.iter().any(|&i| self.rules[i].code != code) {
            return Verdict::Conflict(top);
        }
        let winner = top
            .iter()
            .copied()
            .min_by(|&a, &b| {
                let (ra, rb) = (&self.rules[a], &self.rules[b]);
                rb.confidence
                    .cmp(&ra.confidence)
                    .then(rb.weight.cmp(&ra.weight))
                    .then(ra.id.cmp(&rb.id))
            })
            .unwrap_or(top[0]);
        Verdict::Rule(winner)
    }
}

#[cfg(test)]
impl Catalogue {
    /// Per haystack (`Source` order): its prefilter and the compiled text and
    /// not_text patterns it was built over, in the prefilter's pattern order.
    pub(crate) fn text_sets(&self) -> [(&Prefilter, Vec<&Regex>); 3] {
        std::array::from_fn(|slot| {
            let mut pats: Vec<(usize, &Regex)> = Vec::new();
            for r in &self.rules {
                if let (Some(i), Some(re)) = (r.text_slots[slot], &r.text_re) {
                    pats.push((i, re));
                }
                if let (Some(i), Some(re)) = (r.not_text_slots[slot], &r.not_text_re) {
                    pats.push((i, re));
                }
            }
            pats.sort_by_key(|&(i, _)| i);
            assert!(pats.iter().enumerate().all(|(k, &(i, _))| k == i));
            (
                &self.prefilters[slot],
                pats.into_iter().map(|(_, re)| re).collect(),
            )
        })
    }
}

/// Rule sets as bits (bit `i % 64` of word `i / 64` is rule `i`), so the
/// rules an envelope can match are found with a few word operations.
#[derive(Debug, Default)]
struct RuleBits {
    /// Words per set.
    words: usize,
    /// Every rule.
    all: Vec<u64>,
    /// Rules with a text condition.
    text: Vec<u64>,
    /// Per fact kind (bit `k` of `Facts::kinds`), one set after another:
    /// the rules that need that kind.
    needs: Vec<u64>,
    /// Rules that need one of their error identifiers.
    typed: Vec<u64>,
    /// Per error identifier a rule names: the rules naming it.
    by_type: HashMap<String, Vec<u64>>,
}

impl RuleBits {
    fn new(rules: &[Rule]) -> RuleBits {
        let words = rules.len().div_ceil(64);
        let mut b = RuleBits {
            words,
            all: vec![0; words],
            text: vec![0; words],
            needs: vec![0; words * kind::COUNT],
            typed: vec![0; words],
            by_type: HashMap::new(),
        };
        for (i, r) in rules.iter().enumerate() {
            let (w, bit) = (i / 64, 1u64 << (i % 64));
            b.all[w] |= bit;
            if r.cond.text {
                b.text[w] |= bit;
            }
            for k in 0..kind::COUNT {
                if r.needs & (1 << k) != 0 {
                    b.needs[k * words + w] |= bit;
                }
            }
            if !r.cond.error_types.is_empty() {
                b.typed[w] |= bit;
            }
            for t in &r.cond.error_types {
                b.by_type.entry(t.clone()).or_insert_with(|| vec![0; words])[w] |= bit;
            }
        }
        b
    }
}

/// What evaluating the rules found.
pub(crate) struct Evaluation<'a> {
    /// Indexes of the matching rules, in rule order.
    pub matched: Vec<usize>,
    text: TextHits<'a>,
}

impl Evaluation<'_> {
    /// Where a matching rule's text pattern matched: the haystack and the
    /// start of the deciding segment (the latest one holding a match).
    /// `None` for rules without text.
    pub(crate) fn text_place(&self, rule: usize) -> Option<(Source, usize)> {
        let (src, start, _) = self.text.segment(rule)?;
        Some((src, start))
    }

    /// Where the rule's last match in that segment starts (past any
    /// separator the match begins with), for centring an excerpt. For some
    /// patterns this takes a regex search, so it is asked only when the
    /// segment is too long to show whole.
    pub(crate) fn text_focus(&self, rule: usize) -> Option<usize> {
        self.text.focus(rule)
    }
}

/// Text matches. The prefilter runs once per haystack and says, per
/// pattern, which segments (lines, messages) hold one of its literals and
/// where; a pattern is checked only on those segments. Patterns match within
/// one segment, never across unrelated lines.
struct TextHits<'a> {
    catalogue: &'a Catalogue,
    facts: &'a Facts,
    /// Per haystack: its segments' byte ranges, in order.
    segments: [Vec<(usize, usize)>; 3],
    /// Per haystack: literal hits, sorted by pattern, segment, start.
    hits: [Vec<Hit>; 3],
    /// Rules whose text pattern may match (bits, as in [`RuleBits`]).
    may_text: Vec<u64>,
    /// Rules whose not_text pattern may match.
    may_not: Vec<u64>,
    /// Where text patterns matched: `(rule, haystack, segment index)`.
    found: Vec<(usize, Source, usize)>,
}

impl<'a> TextHits<'a> {
    fn new(catalogue: &'a Catalogue, facts: &'a Facts) -> Self {
        let words = catalogue.rule_bits.words;
        let mut may_text = vec![0u64; words];
        let mut may_not = vec![0u64; words];
        let segments: [Vec<(usize, usize)>; 3] = std::array::from_fn(|slot| {
            facts
                .segments
                .iter()
                .filter(|g| g.source as usize == slot)
                .map(|g| (g.start, g.end))
                .collect()
        });
        let hits: [Vec<Hit>; 3] = std::array::from_fn(|slot| {
            let hay = facts.hay[slot].as_bytes();
            let segs = &segments[slot];
            if hay.is_empty() || segs.is_empty() {
                return Vec::new();
            }
            let pf = &catalogue.prefilters[slot];
            let hits = pf.hits(&facts.lower[slot], segs);
            let mut mark = |pattern: usize| {
                let (rule, role) = catalogue.owners[slot][pattern];
                let set = match role {
                    Role::Text => &mut may_text,
                    Role::NotText => &mut may_not,
                };
                set[rule / 64] |= 1 << (rule % 64);
            };
            for &p in pf.always() {
                mark(p);
            }
            for h in &hits {
                mark(h.pattern as usize);
            }
            hits
        });
        TextHits {
            catalogue,
            facts,
            segments,
            hits,
            may_text,
            may_not,
            found: Vec::new(),
        }
    }

    fn may_not(&self, rule: usize) -> bool {
        self.may_not[rule / 64] & (1 << (rule % 64)) != 0
    }

    /// The hits of one pattern in one haystack.
    fn pattern_hits(&self, slot: usize, pattern: usize) -> &[Hit] {
        let hits = &self.hits[slot];
        let p = pattern as u32;
        let lo = hits.partition_point(|h| h.pattern < p);
        let hi = lo + hits[lo..].partition_point(|h| h.pattern <= p);
        &hits[lo..hi]
    }

    /// Whether the rule's text (or not_text) pattern matches; for text, the
    /// latest segment where it does is remembered for [`Self::segment`] and
    /// [`Self::focus`].
    /// Called at most once per rule and role.
    fn hit(&mut self, rule: usize, role: Role) -> bool {
        let r = &self.catalogue.rules[rule];
        let (re, slots) = match role {
            Role::Text => (r.text_re.as_ref(), &r.text_slots),
            Role::NotText => (r.not_text_re.as_ref(), &r.not_text_slots),
        };
        let Some(re) = re else { return false };
        for src in Source::ALL {
            let slot = src as usize;
            let Some(pattern) = slots[slot] else { continue };
            let hay = self.facts.hay[slot].as_bytes();
            let segs = &self.segments[slot];
            if hay.is_empty() || segs.is_empty() {
                continue;
            }
            let pf = &self.catalogue.prefilters[slot];
            // Latest segment first: the excerpt shows the last match.
            let found = if pf.is_always(pattern) {
                (0..segs.len()).rev().find(|&g| {
                    let (start, end) = segs[g];
                    re.is_match(&hay[start..end])
                })
            } else {
                let hits = self.pattern_hits(slot, pattern);
                let mut found = None;
                let mut end = hits.len();
                while end > 0 {
                    let g = hits[end - 1].segment;
                    let begin = hits[..end].partition_point(|h| h.segment < g);
                    let (start, stop) = segs[g as usize];
                    if pf.confirm(&hits[begin..end], &hay[start..stop], start, re) {
                        found = Some(g as usize);
                        break;
                    }
                    end = begin;
                }
                found
            };
            if let Some(g) = found {
                if matches!(role, Role::Text) {
                    self.found.push((rule, src, g));
                }
                return true;
            }
        }
        false
    }

    /// The deciding segment of a rule whose text matched: its haystack and
    /// byte range, and its index among that haystack's segments.
    fn segment(&self, rule: usize) -> Option<(Source, usize, usize)> {
        let &(_, src, g) = self.found.iter().find(|(r, _, _)| *r == rule)?;
        Some((src, self.segments[src as usize][g].0, g))
    }

    /// See [`Evaluation::text_focus`].
    fn focus(&self, rule: usize) -> Option<usize> {
        let (src, _, g) = self.segment(rule)?;
        let r = &self.catalogue.rules[rule];
        let slot = src as usize;
        let (start, end) = self.segments[slot][g];
        let text = &self.facts.hay[slot].as_bytes()[start..end];
        let pattern = r.text_slots[slot]?;
        let pf = &self.catalogue.prefilters[slot];
        let last = if pf.is_always(pattern) {
            None
        } else {
            let hits = self.pattern_hits(slot, pattern);
            let lo = hits.partition_point(|h| (h.segment as usize) < g);
            let hi = hits.partition_point(|h| (h.segment as usize) <= g);
            pf.last_literal_match(&hits[lo..hi], text, start)
        };
        let (m_start, m_end) = match last {
            Some(m) => m,
            None => {
                let m = r.text_re.as_ref()?.find_iter(text).last()?;
                (m.start(), m.end())
            }
        };
        // A match may start on the separator before its words.
        let skip = text[m_start..m_end]
            .iter()
            .take_while(|c| !c.is_ascii_alphanumeric())
            .count()
            .min(m_end - m_start);
        Some(start + m_start + skip)
    }
}

impl Conditions {
    /// The fact kinds these conditions require (see `Facts::kinds`).
    fn needs(&self) -> u16 {
        use super::extract::kind::*;
        let mut n = 0;
        if !self.statuses.is_empty() || self.status_range.is_some() || self.has_status == Some(true)
        {
            n |= STATUS;
        }
        if !self.error_types.is_empty() {
            n |= TOKEN;
        }
        if self.quota_id.is_some() {
            n |= QUOTA;
        }
        if !self.acp_codes.is_empty() {
            n |= ACP;
        }
        if !self.exit_codes.is_empty() {
            n |= EXIT;
        }
        if !self.signals.is_empty() {
            n |= SIGNAL;
        }
        if !self.stop_reasons.is_empty() {
            n |= STOP;
        }
        if self.no_response == Some(true) {
            n |= NO_RESPONSE;
        }
        if self.tool_failed == Some(true) {
            n |= TOOL_FAILED;
        }
        n
    }

    /// Every condition except the text patterns.
    fn holds(&self, f: &Facts) -> bool {
        if !self.statuses.is_empty() && !f.statuses.iter().any(|(s, _)| self.statuses.contains(s)) {
            return false;
        }
        if let Some((lo, hi)) = self.status_range {
            if !f.statuses.iter().any(|(s, _)| (lo..=hi).contains(s)) {
                return false;
            }
        }
        if let Some(want) = self.has_status {
            if want == f.statuses.is_empty() {
                return false;
            }
        }
        if !self.error_types.is_empty()
            && !f.tokens.iter().any(|(t, _)| self.error_types.contains(t))
        {
            return false;
        }
        if let Some(re) = &self.quota_id {
            if !f.quota_ids.iter().any(|q| re.is_match(q.as_bytes())) {
                return false;
            }
        }
        if let Some(re) = &self.not_quota_id {
            if f.quota_ids.iter().any(|q| re.is_match(q.as_bytes())) {
                return false;
            }
        }
        if !self.acp_codes.is_empty()
            && !f.acp_codes.iter().any(|(c, _)| self.acp_codes.contains(c))
        {
            return false;
        }
        if !self.exit_codes.is_empty()
            && !f
                .exit_codes
                .iter()
                .any(|(c, _)| self.exit_codes.contains(c))
        {
            return false;
        }
        if !self.signals.is_empty() && !f.signals.iter().any(|(s, _)| self.signals.contains(s)) {
            return false;
        }
        if !self.stop_reasons.is_empty()
            && !f
                .stop_reasons
                .iter()
                .any(|(s, _)| self.stop_reasons.contains(s))
        {
            return false;
        }
        if let Some(want) = self.no_response {
            if want != f.no_response.is_some() {
                return false;
            }
        }
        if let Some(want) = self.tool_failed {
            if want != f.tool_failed.is_some() {
                return false;
            }
        }
        true
    }

    /// The last item that carries one of this rule's structured facts.
    pub(crate) fn decisive_item(&self, f: &Facts) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut see = |i: usize| best = Some(best.map_or(i, |b| b.max(i)));
        for (t, i) in &f.tokens {
            if self.error_types.contains(t) {
                see(*i);
            }
        }
        for (s, i) in &f.statuses {
            if self.statuses.contains(s)
                || self
                    .status_range
                    .is_some_and(|(lo, hi)| (lo..=hi).contains(s))
            {
                see(*i);
            }
        }
        for (c, i) in &f.acp_codes {
            if self.acp_codes.contains(c) {
                see(*i);
            }
        }
        for (c, i) in &f.exit_codes {
            if self.exit_codes.contains(c) {
                see(*i);
            }
        }
        for (s, i) in &f.signals {
            if self.signals.contains(s) {
                see(*i);
            }
        }
        for (s, i) in &f.stop_reasons {
            if self.stop_reasons.contains(s) {
                see(*i);
            }
        }
        if self.no_response == Some(true) {
            if let Some(i) = f.no_response {
                see(i);
            }
        }
        if self.tool_failed == Some(true) {
            if let Some(i) = f.tool_failed {
                see(i);
            }
        }
        best
    }
}

/// Compiles one catalogue pattern with the same options the sets use.
pub(crate) fn build_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .multi_line(true)
        .size_limit(16 << 20)
        .build()
}
