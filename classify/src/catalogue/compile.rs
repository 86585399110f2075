//! The catalogue's compiler: a [`CatalogueSpec`] as read from the files in,
//! a [`Catalogue`] out, or every problem found, each with where it lies.
//! One function per section of the files — version, tiers, timing
//! profiles, codes, rules, provenance — in that order, since later sections
//! name earlier ones (a rule names a tier, a code and a timing profile). A
//! section that refers to something broken still compiles with a stand-in,
//! so one mistake does not hide the others.

use super::compiled::{Catalogue, Code, Rule};
use super::format::{CatalogueSpec, CodeSpec, RuleSpec, TierSpec};
use super::problems::CatalogueError;
use super::problems::{Location, Problems};
use crate::extract::norm_token;
use crate::facts::Source;
use crate::matcher::conditions::Conditions;
use crate::matcher::{build_regex, Matcher, MatcherBuilder};
use crate::provenance::{Provenance, ProvenanceSpec};
use crate::timing::{self, TimingSource};
use domain::classification::{Confidence, Scope};
use domain::policy::ErrorClass;
use regex::bytes::Regex;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The file holding every section but the rules.
const CATALOGUE_FILE: &str = "catalogue.toml";

/// Validates a parsed catalogue and compiles its matchers.
pub(super) fn compile(spec: CatalogueSpec) -> Result<Catalogue, CatalogueError> {
    let mut problems = Problems::default();
    version(&spec.version, &mut problems);
    let tiers = tiers(&spec.tiers, &mut problems);
    let profiles = timing_profiles(&spec.timing_profiles, &mut problems);
    let registry = codes(&spec.codes, &mut problems);
    let names = Names {
        tiers: &tiers,
        profiles: &profiles,
        registry: &registry,
    };
    let (rules, matcher) = rules(&spec.rules, &names, &mut problems);
    let provenance = provenance(&spec.provenance, &mut problems);
    // The prefilters are the costliest part to build, and pointless for a
    // catalogue that is rejected anyway.
    let matcher = if problems.is_empty() {
        text_prefilters(matcher, &mut problems)
    } else {
        None
    };
    let (Some(provenance), Some(matcher)) = (provenance, matcher) else {
        return Err(problems.into_error());
    };
    Ok(Catalogue {
        provenance,
        version: spec.version.trim().to_owned(),
        tiers: spec.tiers,
        codes: registry.codes,
        code_ix: registry.index,
        rules,
        matcher,
        unknown: registry.unknown,
    })
}

/// `version`: every classification carries it, so it must say something.
fn version(version: &str, problems: &mut Problems) {
    if version.trim().is_empty() {
        problems.push(
            &Location::file(CATALOGUE_FILE).field("version"),
            "version is empty",
        );
    }
}

/// `[[tiers]]`, best first: each name's rank.
fn tiers(tiers: &[TierSpec], problems: &mut Problems) -> HashMap<String, usize> {
    if tiers.is_empty() {
        problems.push(&Location::file(CATALOGUE_FILE).field("tiers"), "no tiers");
    }
    let mut rank = HashMap::new();
    for (i, t) in tiers.iter().enumerate() {
        if rank.insert(t.name.clone(), i).is_some() {
            problems.push(
                &Location::entry(CATALOGUE_FILE, "tier", &t.name),
                "listed twice",
            );
        }
    }
    rank
}

/// `[timing_profiles]`: each profile's timing sources.
fn timing_profiles<'a>(
    profiles: &'a BTreeMap<String, Vec<String>>,
    problems: &mut Problems,
) -> HashMap<&'a str, Vec<TimingSource>> {
    let mut out = HashMap::new();
    for (name, sources) in profiles {
        let at = Location::entry(CATALOGUE_FILE, "timing profile", name);
        let mut v = Vec::new();
        for s in sources {
            match TimingSource::parse(s) {
                Some(t) => v.push(t),
                None => problems.push(&at, format!("unknown timing source `{s}`")),
            }
        }
        out.insert(name.as_str(), v);
    }
    out
}

/// The compiled code registry.
struct Registry {
    codes: Vec<Code>,
    index: HashMap<String, usize>,
    /// The code given when no rule decides.
    unknown: usize,
}

/// `[codes.*]`: the registry, then each code's `long_wait` (which names
/// another code), then the one code every catalogue needs.
fn codes(specs: &BTreeMap<String, CodeSpec>, problems: &mut Problems) -> Registry {
    let mut codes = Vec::new();
    let mut index = HashMap::new();
    for (name, c) in specs {
        let at = Location::entry(CATALOGUE_FILE, "code", name);
        let class = match c.class.as_deref() {
            None => {
                problems.push(&at.field("class"), format!("code `{name}` has no class"));
                ErrorClass::Unclassified
            }
            Some(s) => ErrorClass::parse(s).unwrap_or_else(|| {
                problems.push(&at.field("class"), format!("unknown class `{s}`"));
                ErrorClass::Unclassified
            }),
        };
        let scope = scope(c.scope.as_deref(), &at, problems);
        if c.description.trim().is_empty() || c.example.trim().is_empty() {
            problems.push(&at, "needs a description and an example");
        }
        index.insert(name.clone(), codes.len());
        codes.push(Code {
            name: name.clone(),
            class,
            scope,
            description: c.description.trim().to_owned(),
            example: c.example.trim().to_owned(),
            long_wait: None,
        });
    }
    for (name, c) in specs {
        let Some(lw) = &c.long_wait else { continue };
        let at = Location::entry(CATALOGUE_FILE, "code", name);
        match index.get(&lw.code) {
            Some(&target) if lw.seconds > 0 => {
                if let Some(&me) = index.get(name) {
                    codes[me].long_wait = Some((lw.seconds as f64, target));
                }
            }
            Some(_) => problems.push(&at.field("long_wait.seconds"), "must be > 0"),
            None => problems.push(
                &at.field("long_wait.code"),
                format!("names unknown code `{}`", lw.code),
            ),
        }
    }
    let unknown = match index.get("unknown") {
        Some(&u) if codes[u].class == ErrorClass::Unclassified => u,
        _ => {
            problems.push(
                &Location::file(CATALOGUE_FILE),
                "the registry needs code `unknown` with class `unclassified`",
            );
            0
        }
    };
    Registry {
        codes,
        index,
        unknown,
    }
}

/// A `scope` value (of a code or a rule), reported at `at` when unknown.
fn scope(value: Option<&str>, at: &Location, problems: &mut Problems) -> Option<Scope> {
    let s = value?;
    let scope = Scope::parse(s);
    if scope.is_none() {
        problems.push(&at.field("scope"), format!("unknown scope `{s}`"));
    }
    scope
}

/// What a rule may name, from the sections before it.
struct Names<'a> {
    tiers: &'a HashMap<String, usize>,
    profiles: &'a HashMap<&'a str, Vec<TimingSource>>,
    registry: &'a Registry,
}

/// `[[rule]]` in every rule file, in tier order, then id order, so nothing
/// depends on file order: the rules, and their conditions and patterns
/// gathered for the matcher.
fn rules(
    specs: &[RuleSpec],
    names: &Names<'_>,
    problems: &mut Problems,
) -> (Vec<Rule>, MatcherBuilder) {
    let tier_rank = |t: &str| names.tiers.get(t).copied().unwrap_or(usize::MAX);
    let mut specs: Vec<&RuleSpec> = specs.iter().collect();
    specs.sort_by(|a, b| (tier_rank(&a.tier), &a.id).cmp(&(tier_rank(&b.tier), &b.id)));
    let mut seen = HashSet::new();
    let mut rules = Vec::new();
    let mut matcher = MatcherBuilder::default();
    for r in specs {
        let at = Location::entry(&r.file, "rule", &r.id);
        if r.id.is_empty()
            || !r
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        {
            problems.push(&at.field("id"), "ids use a-z, 0-9, '.', '_' and '-'");
        }
        if !seen.insert(r.id.as_str()) {
            problems.push(&at, "duplicate rule id");
        }
        rules.push(rule(r, &at, names, &mut matcher, problems));
    }
    (rules, matcher)
}

/// One rule: what it gives (tier, code, confidence, scope, timing) and
/// what it takes (its conditions, handed to `matcher`).
fn rule(
    r: &RuleSpec,
    at: &Location,
    names: &Names<'_>,
    matcher: &mut MatcherBuilder,
    problems: &mut Problems,
) -> Rule {
    let Names {
        tiers,
        profiles,
        registry,
    } = names;
    let tier = tiers.get(&r.tier).copied().unwrap_or_else(|| {
        problems.push(&at.field("tier"), format!("unknown tier `{}`", r.tier));
        0
    });
    let code = registry.index.get(&r.code).copied().unwrap_or_else(|| {
        problems.push(&at.field("code"), format!("unknown code `{}`", r.code));
        registry.unknown
    });
    let class = registry.codes.get(code).map(|c| c.class);
    let recovering = matches!(class, Some(ErrorClass::Transient | ErrorClass::Hard));
    let confidence = match r.confidence.as_deref() {
        None => Confidence::High,
        Some(s) => Confidence::parse(s).unwrap_or_else(|| {
            problems.push(&at.field("confidence"), format!("unknown confidence `{s}`"));
            Confidence::Low
        }),
    };
    if recovering && confidence == Confidence::Low {
        problems.push(
            &at.field("confidence"),
            "a low-confidence rule cannot give a recovering code (use `unknown`)",
        );
    }
    let scope = scope(r.scope.as_deref(), at, problems);
    let timing = match r.timing.as_deref() {
        None => Vec::new(),
        Some(name) => match profiles.get(name) {
            Some(v) => {
                if !recovering {
                    problems.push(
                        &at.field("timing"),
                        "only transient or hard codes carry timing",
                    );
                }
                timing::precedence(v)
            }
            None => {
                problems.push(
                    &at.field("timing"),
                    format!("unknown timing profile `{name}`"),
                );
                Vec::new()
            }
        },
    };
    let mut text_mask = 0u8;
    for s in r.text_in.as_deref().unwrap_or(&[]) {
        match Source::parse(s) {
            Some(src) => text_mask |= src.bit(),
            None => problems.push(&at.field("text_in"), format!("unknown text_in `{s}`")),
        }
    }
    if text_mask == 0 {
        text_mask = Source::Error.bit();
    }
    let (cond, mut weight) = conditions(r, at, problems);
    let text = text_pattern(r.text.as_deref(), at, "text", problems);
    let not_text = text_pattern(r.not_text.as_deref(), at, "not_text", problems);
    if text.is_some() {
        weight += 1;
    }
    if weight == 0 {
        problems.push(at, "a rule needs at least one positive condition");
    }
    matcher.push(tier, cond, text, not_text, text_mask);
    Rule {
        id: r.id.clone(),
        tier,
        code,
        confidence,
        scope,
        timing,
        text_mask,
        weight,
    }
}

/// A rule's structured conditions, and how many of them ask something
/// (text patterns are counted by [`rule`]).
fn conditions(r: &RuleSpec, at: &Location, problems: &mut Problems) -> (Conditions, usize) {
    let mut cond = Conditions::default();
    let mut weight = 0;
    if let Some(v) = &r.status {
        if v.iter().any(|s| !(100..=599).contains(s)) {
            problems.push(&at.field("status"), "statuses are 100..=599");
        }
        cond.statuses = v.clone();
        weight += 1;
    }
    if let Some([a, b]) = r.status_range {
        if a > b {
            problems.push(&at.field("status_range"), "status_range is [low, high]");
        }
        cond.status_range = Some((a, b));
        weight += 1;
    }
    cond.has_status = r.has_status;
    if let Some(v) = &r.error_type {
        for t in v {
            if norm_token(t).as_deref() != Some(t.as_str()) {
                problems.push(
                    &at.field("error_type"),
                    format!("error_type `{t}` must be written normalised (snake_case)"),
                );
            }
        }
        cond.error_types = v.clone();
        weight += 1;
    }
    let mut quota = |pattern: &Option<String>, field: &'static str| {
        regex(pattern.as_deref()?, &at.field(field), field, problems)
    };
    cond.quota_id = quota(&r.quota_id, "quota_id");
    cond.not_quota_id = quota(&r.not_quota_id, "not_quota_id");
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
    (cond, weight)
}

/// One of a rule's patterns, compiled; a bad one is reported at `at`.
fn regex(pattern: &str, at: &Location, what: &str, problems: &mut Problems) -> Option<Regex> {
    match build_regex(pattern) {
        Ok(re) => Some(re),
        Err(e) => {
            problems.push(at, format!("bad {what} pattern: {e}"));
            None
        }
    }
}

/// A `text` or `not_text` pattern, with its source for the prefilter.
fn text_pattern<'p>(
    pattern: Option<&'p str>,
    at: &Location,
    field: &'static str,
    problems: &mut Problems,
) -> Option<(&'p str, Regex)> {
    let pattern = pattern?;
    regex(pattern, &at.field(field), field, problems).map(|re| (pattern, re))
}

/// `[provenance]`: its line patterns.
fn provenance(spec: &ProvenanceSpec, problems: &mut Problems) -> Option<Provenance> {
    match Provenance::compile(spec) {
        Ok(v) => Some(v),
        Err(e) => {
            let at = Location::entry(CATALOGUE_FILE, "section", "provenance");
            for (field, what) in e {
                problems.push(&at.field(field), what);
            }
            None
        }
    }
}

/// Every rule's text patterns, one prefilter per haystack they read.
fn text_prefilters(matcher: MatcherBuilder, problems: &mut Problems) -> Option<Matcher> {
    match matcher.build() {
        Ok(m) => Some(m),
        Err(e) => {
            for (src, what) in e {
                let haystack = format!("{src:?}").to_ascii_lowercase();
                problems.push(
                    &Location::entry("rules/*.toml", "text patterns read in", &haystack),
                    format!("the prefilter cannot be built: {what}"),
                );
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::catalogue::{Catalogue, CATALOGUE_SOURCE};

    fn problems(catalogue: &str, rules: &str) -> Vec<String> {
        match Catalogue::from_sources(catalogue, &[("rules/test.toml", rules)]) {
            Ok(_) => Vec::new(),
            Err(e) => e.problems,
        }
    }

    #[test]
    fn problems_name_their_file_entry_and_field() {
        let p = problems(
            CATALOGUE_SOURCE.1,
            "[[rule]]\nid = \"x.a\"\ntier = \"best\"\ncode = \"cancelled\"\ntext = '(a'\n",
        );
        assert_eq!(p.len(), 3, "{p:#?}");
        assert_eq!(
            p[0],
            "rules/test.toml, rule `x.a`, field `tier`: unknown tier `best`"
        );
        assert!(
            p[1].starts_with("rules/test.toml, rule `x.a`, field `text`: bad text pattern: "),
            "{p:#?}"
        );
        assert_eq!(
            p[2],
            "rules/test.toml, rule `x.a`: a rule needs at least one positive condition"
        );
        let broken = CATALOGUE_SOURCE.1.replacen(
            "class = \"hard\"\nscope = \"model\"",
            "class = \"fatal\"\nscope = \"model\"",
            1,
        );
        let p = problems(&broken, "");
        assert!(
            p.iter().any(|x| x.starts_with("catalogue.toml, code `")
                && x.ends_with("`, field `class`: unknown class `fatal`")),
            "{p:#?}"
        );
        let p = problems("version = ", "");
        assert_eq!(p.len(), 1);
        assert!(p[0].starts_with("catalogue.toml: "), "{p:#?}");
    }
}
