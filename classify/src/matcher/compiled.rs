//! The matcher as compiled: every rule's conditions and patterns
//! ([`Matcher`]), and how the catalogue's compiler collects them, rule by
//! rule, and builds each haystack's prefilter ([`MatcherBuilder`]).
//! Evaluating it is `mod.rs`'s, and the text hits of one envelope
//! `text_hits`'s, both reading it.

use super::conditions::Conditions;
use super::prefilter::Prefilter;
use super::rule::{Role, RuleTest};
use super::rule_bits::RuleBits;
use crate::facts::Source;
use regex::bytes::Regex;

/// Every rule's conditions and patterns, compiled for matching. Rule `i`
/// here is rule `i` of the catalogue.
#[derive(Debug)]
pub(crate) struct Matcher {
    pub(super) rules: Vec<RuleTest>,
    /// Per haystack (`Source` order): the prefilter over its patterns…
    pub(super) prefilters: [Prefilter; 3],
    /// …and, per pattern, the rule it belongs to and in which role.
    pub(super) owners: [Vec<(usize, Role)>; 3],
    pub(super) bits: RuleBits,
}

/// Collects rules, in the catalogue's order, into a [`Matcher`].
#[derive(Debug, Default)]
pub(crate) struct MatcherBuilder {
    rules: Vec<RuleTest>,
    /// Per haystack: the pattern texts, in prefilter order.
    patterns: [Vec<String>; 3],
    owners: [Vec<(usize, Role)>; 3],
}

impl MatcherBuilder {
    /// Adds the next rule: its tier, its structured conditions, and its
    /// `text` and `not_text` patterns (source and compiled form), read in
    /// the haystacks of `text_mask` (`Source` bits).
    pub(crate) fn push(
        &mut self,
        tier: usize,
        mut cond: Conditions,
        text: Option<(&str, Regex)>,
        not_text: Option<(&str, Regex)>,
        text_mask: u8,
    ) {
        let idx = self.rules.len();
        let mut slots = |pattern: Option<&str>, role: Role| {
            let mut slots = [None; 3];
            let Some(pattern) = pattern else {
                return slots;
            };
            for src in Source::ALL {
                if text_mask & src.bit() != 0 {
                    slots[src as usize] = Some(self.patterns[src as usize].len());
                    self.patterns[src as usize].push(pattern.to_owned());
                    self.owners[src as usize].push((idx, role));
                }
            }
            slots
        };
        let text_slots = slots(text.as_ref().map(|t| t.0), Role::Text);
        let not_text_slots = slots(not_text.as_ref().map(|t| t.0), Role::NotText);
        cond.text = text.is_some();
        cond.not_text = not_text.is_some();
        self.rules.push(RuleTest {
            needs: cond.needs(),
            tier,
            cond,
            text_re: text.map(|t| t.1),
            not_text_re: not_text.map(|t| t.1),
            text_slots,
            not_text_slots,
        });
    }

    /// Builds each haystack's prefilter; the problems name the haystack.
    pub(crate) fn build(self) -> Result<Matcher, Vec<(Source, String)>> {
        let mut prefilters: [Prefilter; 3] = Default::default();
        let mut problems = Vec::new();
        for src in Source::ALL {
            let pats: Vec<&str> = self.patterns[src as usize]
                .iter()
                .map(String::as_str)
                .collect();
            match Prefilter::build(&pats) {
                Ok(pf) => prefilters[src as usize] = pf,
                Err(e) => problems.push((src, e)),
            }
        }
        if !problems.is_empty() {
            return Err(problems);
        }
        Ok(Matcher {
            bits: RuleBits::new(&self.rules),
            rules: self.rules,
            prefilters,
            owners: self.owners,
        })
    }
}

#[cfg(test)]
impl Matcher {
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
