//! Leave-one-family-out figures: how the catalogue does on an agent
//! family's cases when the rules written *only* from that family are
//! taken away — the closest honest stand-in for "rules written without a
//! family's cases, scored on them".
//!
//! Method (pure, deterministic):
//!
//! 1. With the whole catalogue, every fixture and every labelled case is
//!    classified; the rule that decided it is *supported* by the case's
//!    agent family (the envelope's `agent`, folded by [`agent_family`]).
//! 2. For each family with enough cases, the rules whose every supporting
//!    fixture and case comes from that family are disabled (removed from
//!    the catalogue before it is compiled), and the family's cases are
//!    scored with what is left, with the measures of [`super::score`].
//!
//! A rule that some other family's fixture or case also needs stays: it
//! was not written from this family alone. Rules learnt from a family but
//! worded so generally that another family's case also lands on them
//! count as generalising, which is the point of the figure.

use super::catalogue::{Catalogue, CatalogueError, CatalogueSpec};
use super::classifier::{classify_at, classify_json_at};
use super::fixtures::{Fixture, FIXTURE_NOW};
use super::score::{self, Case, Tally, CORPUS_NOW};
use chrono::{DateTime, Utc};
use std::collections::{BTreeMap, BTreeSet};

/// One family's figures.
#[derive(Debug, Clone)]
pub struct FamilyFigures {
    pub family: String,
    /// Its cases scored with every rule.
    pub with_all: Tally,
    /// Its cases scored without the rules only it supports.
    pub without_own: Tally,
    /// The rules only this family supports (disabled for `without_own`).
    pub own_rules: Vec<String>,
}

/// An agent family: the envelope's `agent`, lower-cased, without an
/// `-acp` adapter suffix, with the names one product goes by folded
/// together (`copilot-cli` and `copilot-chat` are Copilot).
pub fn agent_family(agent: Option<&str>) -> String {
    let a = agent.unwrap_or("-").trim().to_ascii_lowercase();
    let a = a.strip_suffix("-acp").unwrap_or(&a);
    let folded = match a {
        "copilot-cli" | "copilot-chat" | "copilot" => "copilot",
        "cursor" | "cursor-agent" | "cursor-cli" => "cursor",
        "kiro" | "kiro-cli" => "kiro",
        "hermes-agent" | "hermes-web-ui" | "hermes" => "hermes",
        "kilo-code" | "kilocode" => "kilo-code",
        "kimi-cli" | "kimi-code" => "kimi",
        "" => "-",
        other => other,
    };
    folded.to_owned()
}

fn instant(s: &str) -> DateTime<Utc> {
    s.parse().unwrap_or_else(|_| Utc::now())
}

/// Which families support each rule (decide at least one of their
/// fixtures or cases), by rule id.
pub fn support(
    catalogue: &Catalogue,
    fixtures: &[Fixture],
    cases: &[Case],
) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let fixture_now = instant(FIXTURE_NOW);
    for f in fixtures {
        let agent = f.evidence.get("agent").and_then(|a| a.as_str());
        if let Ok(c) = classify_json_at(catalogue, &f.evidence, fixture_now) {
            out.entry(c.classifier_rule)
                .or_default()
                .insert(agent_family(agent));
        }
    }
    let corpus_now = instant(CORPUS_NOW);
    for case in cases {
        let c = classify_at(catalogue, &case.evidence, corpus_now);
        out.entry(c.classifier_rule)
            .or_default()
            .insert(agent_family(case.evidence.agent.as_deref()));
    }
    out
}

/// The figures of every family with at least `min_cases` cases, most
/// cases first.
pub fn leave_one_family_out(
    spec: &CatalogueSpec,
    fixtures: &[Fixture],
    cases: &[Case],
    min_cases: usize,
) -> Result<Vec<FamilyFigures>, CatalogueError> {
    let full = Catalogue::compile(spec.clone())?;
    let support = support(&full, fixtures, cases);
    let mut by_family: BTreeMap<String, Vec<Case>> = BTreeMap::new();
    for c in cases {
        by_family
            .entry(agent_family(c.evidence.agent.as_deref()))
            .or_default()
            .push(c.clone());
    }
    let mut out = Vec::new();
    for (family, family_cases) in by_family {
        if family_cases.len() < min_cases {
            continue;
        }
        let own: Vec<String> = support
            .iter()
            .filter(|(_, fams)| fams.len() == 1 && fams.contains(&family))
            .map(|(rule, _)| rule.clone())
            .collect();
        let mut reduced = spec.clone();
        reduced.rules.retain(|r| !own.contains(&r.id));
        let without = Catalogue::compile(reduced)?;
        out.push(FamilyFigures {
            with_all: score::score(&full, &family_cases).total(),
            without_own: score::score(&without, &family_cases).total(),
            own_rules: own,
            family,
        });
    }
    out.sort_by(|a, b| {
        b.with_all
            .cases
            .cmp(&a.with_all.cases)
            .then(a.family.cmp(&b.family))
    });
    Ok(out)
}

/// The figures as a table, one family a row, then the sums.
pub fn table(figures: &[FamilyFigures]) -> String {
    let mut out = format!(
        "{:<14} {:>5} {:>9} {:>9} {:>6} {:>6} {:>5}\n",
        "family", "cases", "exact", "exact-LO", "false", "missed", "own"
    );
    let (mut n, mut all, mut lo, mut fr, mut mr) = (0, 0, 0, 0, 0);
    for f in figures {
        out.push_str(&format!(
            "{:<14} {:>5} {:>9.3} {:>9.3} {:>6} {:>6} {:>5}\n",
            f.family,
            f.with_all.cases,
            f.with_all.exact_rate(),
            f.without_own.exact_rate(),
            f.without_own.false_recoveries,
            f.without_own.missed_recoveries,
            f.own_rules.len()
        ));
        n += f.with_all.cases;
        all += f.with_all.exact;
        lo += f.without_own.exact;
        fr += f.without_own.false_recoveries;
        mr += f.without_own.missed_recoveries;
    }
    let rate = |a: usize| if n == 0 { 0.0 } else { a as f64 / n as f64 };
    out.push_str(&format!(
        "{:<14} {:>5} {:>9.3} {:>9.3} {:>6} {:>6}\n",
        "all above",
        n,
        rate(all),
        rate(lo),
        fr,
        mr
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::{CATALOGUE_SOURCE, RULE_SOURCES};

    #[test]
    fn families_fold_the_names_one_product_goes_by() {
        assert_eq!(agent_family(Some("Copilot-CLI")), "copilot");
        assert_eq!(agent_family(Some("claude-code-acp")), "claude-code");
        assert_eq!(agent_family(Some("kiro-cli")), "kiro");
        assert_eq!(agent_family(None), "-");
    }

    #[test]
    fn a_familys_own_rules_are_disabled_for_it_only() {
        // Two families: a rule only family "a" supports is disabled when
        // "a" is scored, so "a"'s case falls back to a lower tier, while
        // "b" keeps every rule.
        let spec = Catalogue::parse(CATALOGUE_SOURCE.1, RULE_SOURCES).unwrap();
        let case = |agent: &str, line: &str, code: &str| {
            let v: serde_json::Value = serde_json::from_str(&format!(
                r#"{{"id":"{agent}","evidence":{{"agent":"{agent}","occurred_at":"2026-11-30T12:00:00Z","items":[{{"kind":"stderr","lines":["{line}"]}}]}},"expect":{{"class":"transient","code":"{code}"}}}}"#
            ))
            .unwrap();
            let dir =
                std::env::temp_dir().join(format!("lofo-{}-{agent}.jsonl", std::process::id()));
            std::fs::write(&dir, v.to_string()).unwrap();
            let c = score::load(&dir).unwrap().remove(0);
            std::fs::remove_file(&dir).unwrap();
            c
        };
        let cases = vec![
            case(
                "a",
                "provider example is in cooldown (rate_limit)",
                "rate_limited",
            ),
            case("b", "Error: read ECONNRESET", "network_unavailable"),
        ];
        let figures = leave_one_family_out(&spec, &[], &cases, 1).unwrap();
        let a = figures.iter().find(|f| f.family == "a").unwrap();
        let b = figures.iter().find(|f| f.family == "b").unwrap();
        assert_eq!(a.own_rules, vec!["generic.rate_limited".to_owned()]);
        assert_eq!(a.with_all.exact, 1);
        assert_eq!(a.without_own.exact, 0);
        assert_eq!(b.own_rules, vec!["net.connection".to_owned()]);
        assert_eq!(b.without_own.exact, 0);
        assert!(table(&figures).contains("all above"));
    }
}
