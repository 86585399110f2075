//! A rule's structured conditions: statuses, error identifiers, quota ids,
//! ACP codes, exits, signals, stop reasons, and whether a request got no
//! response or a tool failed. All given ones must hold; they are checked
//! before any text pattern runs, since they are cheap and most rules fail
//! here.

use crate::facts::Facts;
use regex::bytes::Regex;

/// The compiled conditions of one rule (the catalogue's compiler fills
/// them from the rule as written). Empty lists and `None` ask nothing.
#[derive(Debug, Default)]
pub(crate) struct Conditions {
    pub(crate) statuses: Vec<u16>,
    pub(crate) status_range: Option<(u16, u16)>,
    pub(crate) has_status: Option<bool>,
    pub(crate) error_types: Vec<String>,
    pub(crate) quota_id: Option<Regex>,
    pub(crate) not_quota_id: Option<Regex>,
    pub(crate) acp_codes: Vec<i64>,
    pub(crate) exit_codes: Vec<i64>,
    pub(crate) signals: Vec<String>,
    pub(crate) stop_reasons: Vec<String>,
    /// The rule has a `text` pattern (set by [`super::MatcherBuilder`]).
    pub(super) text: bool,
    /// The rule has a `not_text` pattern.
    pub(super) not_text: bool,
    pub(crate) no_response: Option<bool>,
    pub(crate) tool_failed: Option<bool>,
}

impl Conditions {
    /// The error identifiers the rule names (any of them will do).
    pub(crate) fn error_types(&self) -> &[String] {
        &self.error_types
    }

    /// The fact kinds these conditions require (see `Facts::kinds`).
    pub(super) fn needs(&self) -> u16 {
        use crate::facts::kind::*;
        let mut n = 0;
        if !self.statuses.is_empty() || self.status_range.is_some() || self.has_status == Some(true)
        {
            n |= STATUS;
        }
        if !self.error_types.is_empty() {
            n |= TOKEN;
        }
        if self.quota_id.is_some() {
            n |= QUOTA;
        }
        if !self.acp_codes.is_empty() {
            n |= ACP;
        }
        if !self.exit_codes.is_empty() {
            n |= EXIT;
        }
        if !self.signals.is_empty() {
            n |= SIGNAL;
        }
        if !self.stop_reasons.is_empty() {
            n |= STOP;
        }
        if self.no_response == Some(true) {
            n |= NO_RESPONSE;
        }
        if self.tool_failed == Some(true) {
            n |= TOOL_FAILED;
        }
        n
    }

    /// Every condition except the text patterns.
    pub(super) fn holds(&self, f: &Facts) -> bool {
        if !self.statuses.is_empty() && !f.statuses.iter().any(|(s, _)| self.statuses.contains(s)) {
            return false;
        }
        if let Some((lo, hi)) = self.status_range {
            if !f.statuses.iter().any(|(s, _)| (lo..=hi).contains(s)) {
                return false;
            }
        }
        if let Some(want) = self.has_status {
            if want == f.statuses.is_empty() {
                return false;
            }
        }
        if !self.error_types.is_empty()
            && !f.tokens.iter().any(|(t, _)| self.error_types.contains(t))
        {
            return false;
        }
        if let Some(re) = &self.quota_id {
            if !f.quota_ids.iter().any(|q| re.is_match(q.as_bytes())) {
                return false;
            }
        }
        if let Some(re) = &self.not_quota_id {
            if f.quota_ids.iter().any(|q| re.is_match(q.as_bytes())) {
                return false;
            }
        }
        if !self.acp_codes.is_empty()
            && !f.acp_codes.iter().any(|(c, _)| self.acp_codes.contains(c))
        {
            return false;
        }
        if !self.exit_codes.is_empty()
            && !f
                .exit_codes
                .iter()
                .any(|(c, _)| self.exit_codes.contains(c))
        {
            return false;
        }
        if !self.signals.is_empty() && !f.signals.iter().any(|(s, _)| self.signals.contains(s)) {
            return false;
        }
        if !self.stop_reasons.is_empty()
            && !f
                .stop_reasons
                .iter()
                .any(|(s, _)| self.stop_reasons.contains(s))
        {
            return false;
        }
        if let Some(want) = self.no_response {
            if want != f.no_response.is_some() {
                return false;
            }
        }
        if let Some(want) = self.tool_failed {
            if want != f.tool_failed.is_some() {
                return false;
            }
        }
        true
    }

    /// The last item that carries one of this rule's structured facts.
    pub(crate) fn decisive_item(&self, f: &Facts) -> Option<usize> {
        let mut best: Option<usize> = None;
        let mut see = |i: usize| best = Some(best.map_or(i, |b| b.max(i)));
        for (t, i) in &f.tokens {
            if self.error_types.contains(t) {
                see(*i);
            }
        }
        for (s, i) in &f.statuses {
            if self.statuses.contains(s)
                || self
                    .status_range
                    .is_some_and(|(lo, hi)| (lo..=hi).contains(s))
            {
                see(*i);
            }
        }
        for (c, i) in &f.acp_codes {
            if self.acp_codes.contains(c) {
                see(*i);
            }
        }
        for (c, i) in &f.exit_codes {
            if self.exit_codes.contains(c) {
                see(*i);
            }
        }
        for (s, i) in &f.signals {
            if self.signals.contains(s) {
                see(*i);
            }
        }
        for (s, i) in &f.stop_reasons {
            if self.stop_reasons.contains(s) {
                see(*i);
            }
        }
        if self.no_response == Some(true) {
            if let Some(i) = f.no_response {
                see(i);
            }
        }
        if self.tool_failed == Some(true) {
            if let Some(i) = f.tool_failed {
                see(i);
            }
        }
        best
    }
}
