//! What the matching rules decide: the best tier with a match wins; its
//! rules agree (ties break on confidence, then on the number of conditions,
//! then on the id) or conflict. Around that, [`Catalogue::analyse`] runs the
//! whole judgement of one envelope: provenance first, then the rules, then,
//! when the deciding tier's reports disagree across items, once more
//! without the superseded earlier items.

use super::compiled::Catalogue;
use crate::evidence::Evidence;
use crate::facts::Facts;
use crate::mask::Mask;
use crate::matcher::Evaluation;
use std::collections::HashSet;

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

impl Catalogue {
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
            None => self.matcher.conditions(i).decisive_item(facts),
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
        self.matcher.evaluate(f, false).matched
    }

    /// The matching rules of the best tier that has any (lower tiers are
    /// not evaluated), with where their text patterns matched.
    pub(crate) fn deciding_rules<'a>(&'a self, f: &'a Facts) -> Evaluation<'a> {
        self.matcher.evaluate(f, true)
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
