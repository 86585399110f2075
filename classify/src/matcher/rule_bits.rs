//! Rule sets as bit words: the cheapest rejections, 64 rules at a time,
//! before any rule is looked at on its own.

use super::rule::RuleTest;
use crate::facts::kind;
use std::collections::HashMap;

/// Rule sets as bits (bit `i % 64` of word `i / 64` is rule `i`), so the
/// rules an envelope can match are found with a few word operations.
#[derive(Debug, Default)]
pub(super) struct RuleBits {
    /// Words per set.
    pub(super) words: usize,
    /// Every rule.
    pub(super) all: Vec<u64>,
    /// Rules with a text condition.
    pub(super) text: Vec<u64>,
    /// Per fact kind (bit `k` of `Facts::kinds`), one set after another:
    /// the rules that need that kind.
    pub(super) needs: Vec<u64>,
    /// Rules that need one of their error identifiers.
    pub(super) typed: Vec<u64>,
    /// Per error identifier a rule names: the rules naming it.
    pub(super) by_type: HashMap<String, Vec<u64>>,
}

impl RuleBits {
    pub(super) fn new(rules: &[RuleTest]) -> RuleBits {
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
