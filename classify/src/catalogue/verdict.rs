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
use domain::classification::Confidence;
use domain::policy::ErrorClass;
use std::collections::HashSet;

/// What [`Catalogue::settle`] makes of a first verdict.
enum Settled {
    /// The verdict stands (or became this one).
    Final(Verdict),
    /// These earlier items' reports are history: drop them and decide again.
    Superseded(Vec<usize>),
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
            match self.settle(ev, &facts, &evaluation, verdict) {
                Settled::Final(v) => return then(&facts, &evaluation, &v, mask.as_ref()),
                Settled::Superseded(items) => items,
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

    /// Where rule `i` found its evidence: the item of the latest segment its
    /// pattern matched, else the item carrying its structured fact.
    fn place(&self, facts: &Facts, evaluation: &Evaluation<'_>, i: usize) -> Option<usize> {
        match evaluation.text_place(i) {
            Some((src, pos)) => facts.item_at(src, pos),
            None => self.matcher.conditions(i).decisive_item(facts),
        }
    }

    /// What a first verdict becomes once the order of the reports is taken
    /// into account. Conservative by design: the items of one invocation
    /// that disagree across classes make the answer `unknown`, unless the
    /// agent itself retried the earlier error (then it is history); a later
    /// transient report never overrides an earlier hard one.
    fn settle(
        &self,
        ev: &Evidence,
        facts: &Facts,
        evaluation: &Evaluation<'_>,
        verdict: Verdict,
    ) -> Settled {
        match verdict {
            Verdict::Conflict(top) => self.settle_conflict(ev, facts, evaluation, top),
            Verdict::Rule(w) if self.class_of_rule(w) == ErrorClass::Transient => {
                match self.earlier_hard(facts, evaluation, w) {
                    Some(h) => Settled::Final(Verdict::Conflict(vec![h, w])),
                    None => Settled::Final(Verdict::Rule(w)),
                }
            }
            v => Settled::Final(v),
        }
    }

    fn class_of_rule(&self, i: usize) -> ErrorClass {
        self.codes[self.rules[i].code].class
    }

    /// The deciding tier's rules disagree. Transient codes with one scope
    /// (a 529 banner over a logged 500) are one outcome told twice: the
    /// latest report's rule decides. Reports in different items: the last
    /// item's report is the outcome when its rules agree and every earlier
    /// report is of the same class, or was retried by the agent and is not
    /// a hard error followed by a transient one. Anything else stays a
    /// conflict.
    fn settle_conflict(
        &self,
        ev: &Evidence,
        facts: &Facts,
        evaluation: &Evaluation<'_>,
        top: Vec<usize>,
    ) -> Settled {
        let places: Option<Vec<usize>> = top
            .iter()
            .map(|&i| self.place(facts, evaluation, i))
            .collect();
        let Some(places) = places else {
            return Settled::Final(Verdict::Conflict(top));
        };
        let last = places.iter().copied().max().unwrap_or(0);
        let scope = |i: usize| self.rules[i].scope.or(self.codes[self.rules[i].code].scope);
        let one_transient_outcome = top
            .iter()
            .all(|&i| self.class_of_rule(i) == ErrorClass::Transient && scope(i) == scope(top[0]));
        if one_transient_outcome {
            let latest = |i: &usize| {
                let text = evaluation.text_place(*i).map(|(_, pos)| pos);
                (self.place(facts, evaluation, *i), text)
            };
            let at = top.iter().map(latest).max();
            let winners: Vec<usize> = top
                .iter()
                .copied()
                .filter(|i| Some(latest(i)) == at)
                .collect();
            if let Verdict::Rule(w) = self.verdict(&winners) {
                return Settled::Final(Verdict::Rule(w));
            }
            return Settled::Final(Verdict::Conflict(top));
        }
        let last_rules: Vec<usize> = top
            .iter()
            .zip(&places)
            .filter(|(_, p)| **p == last)
            .map(|(&i, _)| i)
            .collect();
        let codes: HashSet<usize> = last_rules.iter().map(|&i| self.rules[i].code).collect();
        let mut earlier: Vec<usize> = places.iter().copied().filter(|&p| p != last).collect();
        earlier.sort_unstable();
        earlier.dedup();
        if codes.len() != 1 || earlier.is_empty() {
            return Settled::Final(Verdict::Conflict(top));
        }
        let last_class = self.class_of_rule(last_rules[0]);
        let mut full = None;
        for (&i, &p) in top.iter().zip(&places) {
            let class = self.class_of_rule(i);
            if p == last || class == last_class {
                continue;
            }
            let hard_then_transient =
                class == ErrorClass::Hard && last_class == ErrorClass::Transient;
            let facts = full.get_or_insert_with(|| Facts::extract(ev, None));
            if hard_then_transient || !self.provenance.retried(ev, facts, p, last) {
                return Settled::Final(Verdict::Conflict(top));
            }
        }
        Settled::Superseded(earlier)
    }

    /// A hard rule of high confidence that matched in an item before the
    /// one transient rule `w` decided from (any tier): a later transient
    /// report must not silently override it. Looked for only when there is
    /// an earlier item with evidence, so single-item envelopes cost nothing.
    fn earlier_hard(&self, facts: &Facts, evaluation: &Evaluation<'_>, w: usize) -> Option<usize> {
        let at = self.place(facts, evaluation, w)?;
        let first = facts.segments.iter().map(|s| s.item).min()?;
        let first = facts
            .statuses
            .iter()
            .map(|(_, i)| *i)
            .chain(facts.tokens.iter().map(|(_, i)| *i))
            .fold(first, usize::min);
        if first >= at {
            return None;
        }
        let all = self.matcher.evaluate(facts, false);
        all.matched.iter().copied().find(|&i| {
            self.class_of_rule(i) == ErrorClass::Hard
                && self.rules[i].confidence == Confidence::High
                && self.place(facts, &all, i).is_some_and(|p| p < at)
        })
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
