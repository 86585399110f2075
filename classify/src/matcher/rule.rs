//! What the matcher keeps of one rule: its tier, its structured
//! conditions, its text and not_text patterns and where they sit in each
//! haystack's prefilter, and the fact kinds it needs. The compiled matcher,
//! the rule bits and the text hits all read it; it is a module of its own
//! so that none of them depends on another for it.

use super::conditions::Conditions;
use regex::bytes::Regex;

/// Whether a pattern is a rule's `text` or its `not_text`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Role {
    Text,
    NotText,
}

/// What the matcher keeps of one rule.
#[derive(Debug)]
pub(super) struct RuleTest {
    /// The rule's tier index (rules are stored best tier first).
    pub(super) tier: usize,
    pub(super) cond: Conditions,
    pub(super) text_re: Option<Regex>,
    pub(super) not_text_re: Option<Regex>,
    /// Index of the text / not_text pattern in each haystack's prefilter.
    pub(super) text_slots: [Option<usize>; 3],
    pub(super) not_text_slots: [Option<usize>; 3],
    /// Fact kinds (`Facts::kinds`) the rule's conditions need; a rule whose
    /// kinds are not all present is skipped without looking further.
    pub(super) needs: u16,
}
