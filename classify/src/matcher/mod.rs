//! The matcher: which of the catalogue's rules hold for one envelope's
//! facts. This is the classifier's hot path — every rule is considered for
//! every envelope, and the service's throughput target (README, Benchmarks)
//! is met only because almost none of them is looked at one by one — so it
//! is shaped for speed rather than for reading, and kept apart from the
//! code that says what the rules mean (`catalogue`) and what a match
//! decides (`catalogue::verdict`):
//!
//! - [`rule_bits`]: rule sets as bit words, 64 rules per word, so the rules
//!   needing a kind of fact the envelope lacks, or an error identifier it
//!   does not carry, are dropped with a few word operations;
//! - [`prefilter`]: one Aho-Corasick pass per haystack over literals every
//!   text pattern requires, which picks the few patterns that can match and
//!   often confirms a match without running the regex;
//! - [`text_hits`]: the prefilter's hits for one envelope, and the regex
//!   confirmations run on just the segments that hold them;
//! - [`conditions`]: a rule's structured conditions, checked before its
//!   patterns;
//! - [`scan`]: word-at-a-time byte scans for the loops over every byte of
//!   text (extraction, excerpts, timing), used outside the matcher too.
//!
//! Changes here are measured, not guessed: `cargo bench -p server --bench
//! classify`, and callgrind's instruction count as docs/benchmarks.md
//! describes.
//! Text patterns are ASCII case-insensitive and multi-line
//! ([`build_regex`]).

pub(crate) mod conditions;
pub(crate) mod prefilter;
mod rule_bits;
pub(crate) mod scan;
mod text_hits;

use super::facts::{Facts, Source};
use conditions::Conditions;
use prefilter::Prefilter;
use regex::bytes::{Regex, RegexBuilder};
use rule_bits::RuleBits;
use text_hits::TextHits;

/// Whether a pattern is a rule's `text` or its `not_text`.
#[derive(Debug, Clone, Copy)]
enum Role {
    Text,
    NotText,
}

/// What the matcher keeps of one rule.
#[derive(Debug)]
struct RuleTest {
    /// The rule's tier index (rules are stored best tier first).
    tier: usize,
    cond: Conditions,
    text_re: Option<Regex>,
    not_text_re: Option<Regex>,
    /// Index of the text / not_text pattern in each haystack's prefilter.
    text_slots: [Option<usize>; 3],
    not_text_slots: [Option<usize>; 3],
    /// Fact kinds (`Facts::kinds`) the rule's conditions need; a rule whose
    /// kinds are not all present is skipped without looking further.
    needs: u16,
}

/// Every rule's conditions and patterns, compiled for matching. Rule `i`
/// here is rule `i` of the catalogue.
#[derive(Debug)]
pub(crate) struct Matcher {
    rules: Vec<RuleTest>,
    /// Per haystack (`Source` order): the prefilter over its patterns…
    prefilters: [Prefilter; 3],
    /// …and, per pattern, the rule it belongs to and in which role.
    owners: [Vec<(usize, Role)>; 3],
    bits: RuleBits,
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

impl Matcher {
    /// Rule `rule`'s structured conditions.
    pub(crate) fn conditions(&self, rule: usize) -> &Conditions {
        &self.rules[rule].cond
    }

    /// The rules whose conditions hold, in rule order, with where their text
    /// patterns matched. With `stop_at_first_tier`, only the best tier that
    /// has a match is evaluated to the end (lower tiers cannot decide).
    /// Structured conditions are checked first; a rule's patterns run only
    /// when everything else already holds.
    pub(crate) fn evaluate<'a>(&'a self, f: &'a Facts, stop_at_first_tier: bool) -> Evaluation<'a> {
        let mut text = TextHits::new(self, f);
        let have = f.kinds();
        let mut matched = Vec::new();
        let mut current_tier = None;
        // Cheapest rejections first, 64 rules at a time: rules that need a
        // kind of fact the envelope lacks, and rules whose text pattern's
        // literals do not occur, are never looked at.
        let words = self.bits.words;
        // Rules naming an error identifier the envelope has: the others
        // that need one cannot hold.
        let mut typed_ok = vec![0u64; words];
        for (t, _) in &f.tokens {
            if let Some(set) = self.bits.by_type.get(t) {
                typed_ok
                    .iter_mut()
                    .zip(set)
                    .for_each(|(ok, bits)| *ok |= bits);
            }
        }
        'words: for w in 0..words {
            let mut excluded = self.bits.typed[w] & !typed_ok[w];
            for (k, needs) in self.bits.needs.chunks(words).enumerate() {
                if have & (1 << k) == 0 {
                    excluded |= needs[w];
                }
            }
            let text_ok = !self.bits.text[w] | text.may_text[w];
            let mut candidates = self.bits.all[w] & !excluded & text_ok;
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

/// Compiles one catalogue pattern with the same options the sets use.
pub(crate) fn build_regex(pattern: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .multi_line(true)
        .size_limit(16 << 20)
        .build()
}
