//! The explain trace (`domain::explain`): why the classifier answered as it
//! did — every tier's matching rules, the deciding rule and where it found
//! its evidence, what provenance set aside, which timing source gave the
//! reset. Built only when asked for (`classify --explain`, the service's
//! attempts): it evaluates every tier once more, which the plain
//! classification, stopping at the first tier with a match, never does.

use super::catalogue::verdict::Verdict;
use super::catalogue::Catalogue;
use super::evidence::{Evidence, Item};
use super::facts::{Facts, Source, NO_LINE};
use super::mask::Mask;
use super::timing::TimingSource;
use domain::explain::{
    Explain, ExplainOutcome, ExplainPlace, ExplainRule, ExplainText, ExplainTier, ExplainTiming,
};

/// What the decision rested on, as the classifier found it.
pub(crate) struct Decided<'a> {
    pub verdict: &'a Verdict,
    /// The deciding rule's text match: haystack and offset.
    pub text: Option<(Source, usize)>,
    /// The item its evidence came from.
    pub item: Option<usize>,
    /// The timing sources the deciding rule trusts.
    pub trusted: &'a [TimingSource],
    /// The one that gave the reset.
    pub source: Option<TimingSource>,
}

/// The trace for one classified envelope.
pub(crate) fn trace(
    catalogue: &Catalogue,
    evidence: &Evidence,
    facts: &Facts,
    mask: Option<&Mask>,
    decided: Decided<'_>,
) -> Explain {
    let mut tiers: Vec<ExplainTier> = Vec::new();
    let mut matched = catalogue.matching_rules(facts);
    matched.sort_by(|&a, &b| {
        let (ra, rb) = (&catalogue.rules[a], &catalogue.rules[b]);
        (ra.tier, &ra.id).cmp(&(rb.tier, &rb.id))
    });
    for i in matched {
        let r = &catalogue.rules[i];
        let name = &catalogue.tiers[r.tier].name;
        let rule = ExplainRule {
            rule: r.id.clone(),
            code: catalogue.codes[r.code].name.clone(),
        };
        match tiers.last_mut() {
            Some(t) if &t.tier == name => t.rules.push(rule),
            _ => tiers.push(ExplainTier {
                tier: name.clone(),
                rules: vec![rule],
            }),
        }
    }
    let (outcome, decided_by) = match decided.verdict {
        Verdict::Rule(i) => (ExplainOutcome::Rule, Some(catalogue.rules[*i].id.clone())),
        Verdict::Conflict(_) => (ExplainOutcome::Conflict, None),
        Verdict::None => (ExplainOutcome::Unmatched, None),
    };
    let evidence_place = match decided.verdict {
        Verdict::Rule(_) => place(evidence, facts, decided.text, decided.item),
        _ => None,
    };
    let set_aside = match mask {
        Some(m) => (0..evidence.items.len())
            .filter(|&i| m.drops_item(i))
            .map(|i| i as u32)
            .collect(),
        None => Vec::new(),
    };
    Explain {
        outcome,
        decided_by,
        tiers,
        evidence: evidence_place,
        set_aside,
        timing: ExplainTiming {
            trusted: decided.trusted.iter().filter_map(|t| wire(*t)).collect(),
            source: decided.source.and_then(wire),
        },
    }
}

fn place(
    evidence: &Evidence,
    facts: &Facts,
    text: Option<(Source, usize)>,
    item: Option<usize>,
) -> Option<ExplainPlace> {
    let segment = text.and_then(|(src, pos)| facts.segment_at(src, pos));
    let item = segment.map(|s| s.item).or(item)?;
    Some(ExplainPlace {
        item: item as u32,
        kind: evidence.items.get(item).map(kind).unwrap_or("").to_string(),
        text: segment.map(|s| match s.source {
            Source::Error => ExplainText::Error,
            Source::Agent => ExplainText::Agent,
            Source::Tool => ExplainText::Tool,
        }),
        line: segment.map(|s| s.line).filter(|&l| l != NO_LINE),
    })
}

/// The item's kind, as the envelope names it.
fn kind(item: &Item) -> &'static str {
    match item {
        Item::Http(_) => "http",
        Item::AcpError(_) => "acp_error",
        Item::AcpUpdate(_) => "acp_update",
        Item::AcpStop(_) => "acp_stop",
        Item::Stderr(_) => "stderr",
        Item::Stdout(_) => "stdout",
        Item::ProcessExit(_) => "process_exit",
        Item::Other(_) => "other",
    }
}

/// The wire name of a timing source (the classifier's and the wire's
/// names are the same list).
fn wire(t: TimingSource) -> Option<domain::explain::TimingSource> {
    domain::explain::TimingSource::parse(t.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_timing_source_has_a_wire_name() {
        for t in TimingSource::ALL {
            assert_eq!(wire(t).map(|w| w.as_str()), Some(t.name()));
        }
        assert_eq!(
            domain::explain::TimingSource::ALL.len(),
            TimingSource::ALL.len()
        );
    }
}
