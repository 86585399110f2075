//! The matcher: which of the catalogue's rules hold for one envelope's
//! facts. This is the classifier's hot path — every rule is considered for
//! every envelope, and the service's throughput target (README, Benchmarks)
//! is met only because almost none of them is looked at one by one — so it
//! is shaped for speed rather than for reading, and kept apart from the
//! code that says what the rules mean (`catalogue`) and what a match
//! decides (`catalogue::verdict`):
//!
//! - `compiled`: every rule's conditions and patterns as compiled
//!   ([`Matcher`]) and how they are collected and built
//!   ([`MatcherBuilder`]); `rule`: what the matcher keeps of one rule;
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

mod compiled;
pub(crate) mod conditions;
pub(crate) mod prefilter;
mod rule;
mod rule_bits;
pub(crate) mod scan;
mod text_hits;

use super::facts::{Facts, Source};
pub(crate) use compiled::{Matcher, MatcherBuilder};
use conditions::Conditions;
use regex::bytes::{Regex, RegexBuilder};
use rule::Role;
use text_hits::TextHits;

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
    build_regex_lines(pattern, true)
}

/// [`build_regex`], or with `multi_line` false the same pattern for a
/// haystack without a `\n`: there `^` and `$` can only match at its ends
/// in either mode, so both answer alike, but a pattern whose every branch
/// starts with `^` is then anchored and fails at the first byte that cannot
/// start a match instead of scanning the whole haystack for line starts.
pub(crate) fn build_regex_lines(pattern: &str, multi_line: bool) -> Result<Regex, regex::Error> {
    RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .multi_line(multi_line)
        .size_limit(16 << 20)
        .build()
}
