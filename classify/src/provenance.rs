//! Where text came from: which parts of an envelope are provider evidence.
//!
//! An envelope holds more than the failure. A CLI announces its own retries
//! ("Retrying in 4 seconds… (attempt 4/10)") and then fails differently, or
//! succeeds; a terminal transcript echoes the user's prompt ("> why do I get
//! 429s?"); an agent prints the commands it ran and their output; an agent
//! logs an error, carries on and finishes its turn. None of that is evidence
//! about the failure being reported. Item kinds and their order say which
//! text is, before any rule looks at it (patterns: `[provenance]` in
//! `catalogue.toml`):
//!
//! - **echoes**: stream lines that repeat the user's prompt (`echo`, and the
//!   block between `echo_block_open` and `echo_block_close` lines, as `codex
//!   exec` prints its prompt) are never evidence. An echoed prompt also
//!   starts a new turn: the errors before it are history and are dropped
//!   when anything follows the prompt;
//! - **tool transcripts**: the commands an agent prints that it ran (`tool`)
//!   and the output lines under them (`tool_continuation`) are the tool's,
//!   not the provider's: they are read as tool text (the `tool` haystack,
//!   which only the rules that name it read), never as provider errors;
//! - **notices**: stream lines in which a client announces its own retry,
//!   reconnection or fallback (`notice`; JSON that starts on such a line
//!   belongs to it) are evidence only when nothing else is: a line anywhere
//!   that reads like an error (`report`), a failed HTTP request or an ACP
//!   error item, anything printed after the notice, or a successful end
//!   supersedes them. So the final error before exit outranks the retries
//!   before it, and the last retry notice of a run that gave up is still
//!   read;
//! - **carried on**: when the run ended in success (the trailing
//!   `process_exit` and `acp_stop` items are exit 0 and `end_turn`), errors
//!   the agent produced output after (an agent message chunk, or a stdout
//!   line that is not an echo, a notice, a tool line or an error report) are
//!   history, not the outcome; when the turn itself ended with `end_turn`,
//!   every error item is (a side request's log line, a recovered retry).
//!
//! Dropped items and lines are not read at all (no text, no identifiers, no
//! timing). A second step runs after the rules (see `Catalogue::analyse`):
//! when the deciding tier's rules disagree and the disagreement is between
//! reports in different items, the last item's report is the outcome and
//! the earlier ones are dropped as well.

use super::evidence::{Evidence, Item};
use super::facts::{Facts, Source, NO_LINE};
use super::mask::{LineUse, Mask};
use super::matcher::build_regex_lines;
use super::matcher::prefilter::Run;
use regex::bytes::Regex;
use serde::Deserialize;

/// `[provenance]` in `catalogue.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProvenanceSpec {
    /// A client announcing its own retry, reconnection or fallback.
    pub notice: String,
    /// A stream line that repeats the user's prompt.
    pub echo: String,
    /// A line that reads like an error report.
    pub report: String,
    /// A line with which an agent shows a tool it ran…
    pub tool: String,
    /// …and the lines under it that hold the tool's output.
    pub tool_continuation: String,
    /// Lines (whole, trimmed, ASCII case-insensitive) that open a block of
    /// echoed prompt…
    #[serde(default)]
    pub echo_block_open: Vec<String>,
    /// …and the lines that close it.
    #[serde(default)]
    pub echo_block_close: Vec<String>,
}

/// A pattern tried on single lines: its regex, after a vectorised search for
/// the literals every match contains one of. The rules' literal prefilter is
/// no help here: on text as short as a line, stepping its automaton over
/// every byte costs more than the regex (docs/benchmarks.md).
#[derive(Debug)]
struct LinePattern {
    /// Literals one of which every match contains (`None`: some branch has
    /// none, as `report`'s `\b[45]\d\d\b`): without one the regex cannot
    /// match, and the patterns with a branch not anchored at the line's
    /// start (`notice`, `tool`) would otherwise scan the whole line.
    required: Option<Run>,
    /// The catalogue's regex (multi-line, as every pattern is compiled)…
    re: Regex,
    /// …and the same pattern single-line, for text without a `\n` (a
    /// stream line always): it answers alike there, and the anchored
    /// patterns (`echo`, parts of `tool`) stop at the line's first bytes
    /// instead of scanning a long line for line starts.
    line_re: Regex,
}

impl LinePattern {
    fn new(pattern: &str) -> Result<LinePattern, String> {
        let re = build_regex_lines(pattern, true).map_err(|e| e.to_string())?;
        let line_re = build_regex_lines(pattern, false).map_err(|e| e.to_string())?;
        Ok(LinePattern {
            required: Run::required_by(pattern),
            re,
            line_re,
        })
    }

    /// Whether the pattern matches `text` (`lower`, its ASCII-lower-cased
    /// copy; `single_line`: `text` holds no `\n`, found once for all the
    /// patterns a line is tried with).
    fn matches(&self, text: &[u8], lower: &[u8], single_line: bool) -> bool {
        if self.required.as_ref().is_some_and(|r| !r.occurs(lower)) {
            return false;
        }
        if single_line {
            self.line_re.is_match(text)
        } else {
            self.re.is_match(text)
        }
    }
}

/// The compiled `[provenance]` section.
#[derive(Debug)]
pub(crate) struct Provenance {
    notice: LinePattern,
    echo: LinePattern,
    report: LinePattern,
    tool: LinePattern,
    tool_continuation: LinePattern,
    block_open: Vec<String>,
    block_close: Vec<String>,
}

/// What a stream line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Echo,
    Tool,
    Notice,
    Report,
    /// Anything else: output, banners, stack frames.
    Other,
    /// `Report` or `Other`, not yet told apart: the `report` pattern runs
    /// only where the difference decides something ([`Provenance::is_report`]).
    Plain,
}

/// One stream line's role: `(item, line, role, segment)`, the segment its
/// text is (an index into the full extraction's segments).
type Line = (usize, usize, Role, usize);

/// Failed HTTP requests and ACP errors: items that report a failure by
/// their kind.
fn is_report_item(item: &Item) -> bool {
    match item {
        Item::Http(h) => h.status.is_none_or(|s| s >= 400),
        Item::AcpError(_) => true,
        _ => false,
    }
}

/// Items that may carry a provider's error text.
fn is_error_item(item: &Item) -> bool {
    matches!(
        item,
        Item::Http(_) | Item::AcpError(_) | Item::Stderr(_) | Item::Stdout(_)
    )
}

impl Provenance {
    /// The section compiled, or each bad pattern's field and what is wrong
    /// with it.
    pub(crate) fn compile(
        spec: &ProvenanceSpec,
    ) -> Result<Provenance, Vec<(&'static str, String)>> {
        let mut problems = Vec::new();
        let mut pattern = |name: &'static str, p: &str| match LinePattern::new(p) {
            Ok(lp) => Some(lp),
            Err(e) => {
                problems.push((name, e));
                None
            }
        };
        let notice = pattern("notice", &spec.notice);
        let echo = pattern("echo", &spec.echo);
        let report = pattern("report", &spec.report);
        let tool = pattern("tool", &spec.tool);
        let tool_continuation = pattern("tool_continuation", &spec.tool_continuation);
        match (notice, echo, report, tool, tool_continuation) {
            (Some(notice), Some(echo), Some(report), Some(tool), Some(tool_continuation))
                if problems.is_empty() =>
            {
                Ok(Provenance {
                    notice,
                    echo,
                    report,
                    tool,
                    tool_continuation,
                    block_open: lower_all(&spec.echo_block_open),
                    block_close: lower_all(&spec.echo_block_close),
                })
            }
            _ => Err(problems),
        }
    }

    /// The role of every stream line a full extraction read, in order,
    /// with [`Role::Plain`] for a line that is a report or other text: the
    /// `report` pattern is the dearest of the line patterns, and whether a
    /// line is a report matters only beside a notice, for the last output
    /// of a successful run and for [`Self::retried`].
    fn roles(&self, ev: &Evidence, facts: &Facts) -> Vec<Line> {
        let mut lines = Vec::new();
        let mut item = usize::MAX;
        let mut in_block = false;
        let mut in_tool = false;
        let mut json_depth: i64 = 0;
        let mut prev_line = NO_LINE;
        for (seg, s) in facts.segments.iter().enumerate() {
            if s.source != Source::Error || s.line == NO_LINE || !is_stream(ev, s.item) {
                continue;
            }
            if s.item != item {
                item = s.item;
                in_block = false;
                in_tool = false;
                json_depth = 0;
                prev_line = NO_LINE;
            }
            // A line's own text comes first; text read out of JSON later,
            // tied to lines already seen: one role per line.
            if prev_line != NO_LINE && s.line <= prev_line {
                continue;
            }
            prev_line = s.line;
            let text = facts.segment_text(s).as_bytes();
            let lower = facts.segment_lower(s);
            let trimmed = lower.trim_ascii();
            let single_line = memchr::memchr(b'\n', text).is_none();
            let role = if in_block {
                if self.block_close.iter().any(|c| c.as_bytes() == trimmed) {
                    in_block = false;
                    Role::Other
                } else {
                    Role::Echo
                }
            } else if self.block_open.iter().any(|c| c.as_bytes() == trimmed) {
                in_block = true;
                Role::Echo
            } else if json_depth > 0 {
                // The rest of a notice's JSON.
                Role::Notice
            } else if self.tool.matches(text, lower, single_line) {
                in_tool = true;
                Role::Tool
            } else if in_tool && self.tool_continuation.matches(text, lower, single_line) {
                Role::Tool
            } else if self.echo.matches(text, lower, single_line) {
                in_tool = false;
                Role::Echo
            } else if self.notice.matches(text, lower, single_line) {
                in_tool = false;
                Role::Notice
            } else {
                in_tool = false;
                Role::Plain
            };
            if role == Role::Notice {
                json_depth = (json_depth + brace_balance(text)).max(0);
            }
            lines.push((s.item, s.line as usize, role, seg));
        }
        lines
    }

    /// Whether a line [`Self::roles`] left [`Role::Plain`] reads like an
    /// error report (`report`), else it is [`Role::Other`].
    fn is_report(&self, facts: &Facts, seg: usize) -> bool {
        let s = &facts.segments[seg];
        let text = facts.segment_text(s).as_bytes();
        let single_line = memchr::memchr(b'\n', text).is_none();
        self.report
            .matches(text, facts.segment_lower(s), single_line)
    }

    /// A line's role, a [`Role::Plain`] one told apart.
    fn resolved(&self, facts: &Facts, &(_, _, role, seg): &Line) -> Role {
        match role {
            Role::Plain if self.is_report(facts, seg) => Role::Report,
            Role::Plain => Role::Other,
            r => r,
        }
    }

    /// Whether the agent itself retried after the error reported in item
    /// `earlier`, before the report in item `last`: a retry, reconnection
    /// or fallback notice after a report line of `earlier`, or in an item
    /// between the two; or a later HTTP request (each request an adapter
    /// records after a failed one is the agent trying again). `facts` is a
    /// full extraction's. Conflicts across classes are settled by this
    /// (`Catalogue::analyse`): only an error the agent retried is history.
    pub(crate) fn retried(
        &self,
        ev: &Evidence,
        facts: &Facts,
        earlier: usize,
        last: usize,
    ) -> bool {
        if ev.items[earlier + 1..=last.min(ev.items.len() - 1)]
            .iter()
            .any(|it| matches!(it, Item::Http(_)))
        {
            return true;
        }
        let mut reported = false;
        for line in self.roles(ev, facts) {
            let i = line.0;
            match self.resolved(facts, &line) {
                Role::Report if i == earlier => reported = true,
                Role::Notice if (i == earlier && reported) || (i > earlier && i <= last) => {
                    return true
                }
                _ => {}
            }
        }
        false
    }

    /// What of `ev` is evidence, judged from what a full extraction found;
    /// `None` when all of it is.
    pub(crate) fn mask(&self, ev: &Evidence, facts: &Facts) -> Option<Mask> {
        let lines = self.roles(ev, facts);
        let mut mask = Mask::all(ev.items.len());
        let stream_len = |i: usize| match &ev.items[i] {
            Item::Stderr(s) | Item::Stdout(s) => s.lines.len(),
            _ => 0,
        };
        // Position order of (item, line); whole items sort before their lines.
        let before =
            |(i, l): (usize, usize), (oi, ol): (usize, usize)| i < oi || (i == oi && l < ol);
        // Drops every error item and stream line before `at`.
        let history = |mask: &mut Mask, at: (usize, usize)| {
            for (i, it) in ev.items.iter().enumerate().take(at.0) {
                if is_error_item(it) {
                    mask.drop_item(i);
                }
            }
            for &(i, l, _, _) in &lines {
                if before((i, l), at) {
                    mask.set_line(i, l, stream_len(i), LineUse::Drop);
                }
            }
        };

        for &(i, l, role, _) in &lines {
            match role {
                Role::Echo => mask.set_line(i, l, stream_len(i), LineUse::Drop),
                Role::Tool => mask.set_line(i, l, stream_len(i), LineUse::Tool),
                _ => {}
            }
        }

        // A prompt echoed after an error starts a new turn.
        let last_echo = lines.iter().rev().find(|&&(_, _, r, _)| r == Role::Echo);
        if let Some(&(ei, el, _, _)) = last_echo {
            let anything_after = lines.iter().any(|&(i, l, _, _)| before((ei, el), (i, l)))
                || ev.items.len() > ei + 1;
            if anything_after {
                history(&mut mask, (ei, el));
            }
        }

        let success = ended_in_success(ev);
        if success {
            let turn_ended = ev.items.iter().any(
                |it| matches!(it, Item::AcpStop(s) if s.stop_reason.as_deref() == Some("end_turn")),
            );
            // The last output the agent produced, as (item, line).
            let output = ev
                .items
                .iter()
                .enumerate()
                .rev()
                .find_map(|(i, it)| match it {
                    Item::AcpUpdate(u)
                        if u.update == "agent_message_chunk"
                            && u.text.as_deref().is_some_and(|t| !t.trim().is_empty()) =>
                    {
                        Some((i, 0))
                    }
                    Item::Stdout(_) => lines
                        .iter()
                        .rev()
                        .find(|line| line.0 == i && self.resolved(facts, line) == Role::Other)
                        .map(|&(_, l, _, _)| (i, l)),
                    _ => None,
                });
            if turn_ended {
                for (i, it) in ev.items.iter().enumerate() {
                    if is_error_item(it) {
                        mask.drop_item(i);
                    }
                }
            } else if let Some(at) = output {
                history(&mut mask, at);
            }
        }

        // Notices: evidence only when nothing else is. A report anywhere
        // (a report line, an HTTP failure or ACP error item), anything the
        // agent printed after the notice, or success supersedes them.
        // (Asked only once a notice is found, and at most once.)
        let mut other_report = None;
        let mut other_report = || {
            *other_report.get_or_insert_with(|| {
                ev.items.iter().any(is_report_item)
                    || lines
                        .iter()
                        .any(|line| self.resolved(facts, line) == Role::Report)
            })
        };
        for (k, &(i, l, role, _)) in lines.iter().enumerate() {
            if role != Role::Notice {
                continue;
            }
            let later_line = lines[k + 1..]
                .iter()
                .any(|&(li, ll, r, _)| (li, ll) != (i, l) && r != Role::Echo);
            if success || later_line || other_report() {
                mask.set_line(i, l, stream_len(i), LineUse::Drop);
            }
        }
        (!mask.is_all()).then_some(mask)
    }
}

fn lower_all(v: &[String]) -> Vec<String> {
    v.iter().map(|s| s.trim().to_ascii_lowercase()).collect()
}

fn is_stream(ev: &Evidence, item: usize) -> bool {
    matches!(ev.items.get(item), Some(Item::Stderr(_) | Item::Stdout(_)))
}

/// `{` minus `}` on a line (quotes are not tracked: a rough count is enough
/// to follow a JSON object over the lines after the one it starts on).
fn brace_balance(text: &[u8]) -> i64 {
    text.iter().fold(0, |n, &c| match c {
        b'{' => n + 1,
        b'}' => n - 1,
        _ => n,
    })
}

/// Whether the envelope's trailing terminal items (`process_exit`,
/// `acp_stop`) are all successes (exit 0 without a signal, `end_turn`), and
/// there is at least one.
fn ended_in_success(ev: &Evidence) -> bool {
    let mut any = false;
    for item in ev.items.iter().rev() {
        match item {
            Item::ProcessExit(p) => {
                if p.exit_code != Some(0) || p.signal.is_some() {
                    return false;
                }
                any = true;
            }
            Item::AcpStop(s) => {
                if s.stop_reason.as_deref() != Some("end_turn") {
                    return false;
                }
                any = true;
            }
            _ => break,
        }
    }
    any
}

#[cfg(test)]
mod tests {
    use super::LinePattern;
    use crate::matcher::build_regex;

    /// The single-line regex a line without `\n` is tried with answers as
    /// the catalogue's multi-line regex does, anchors included; text with a
    /// `\n` keeps the multi-line regex; the literal search first changes no
    /// answer.
    #[test]
    fn line_pattern_answers_as_the_multi_line_regex() {
        let patterns = [
            r"^\s*(?:>|you\s*:)\s\S",
            r"\bdone$|^ok\b",
            r"retrying\b|^\s*> \S",
            // Every branch has literals: they are searched for first.
            r"\bRETRYING\b|^\s*(?:\xe2\x94\x82|\xe2\x94\x94) \S",
        ];
        let texts = [
            "> why do I get 429s?",
            "  you: hello",
            "error: x > y",
            "not done",
            "done here",
            "ok then",
            "is it ok",
            "first line\n> second",
            "all done\nthen more",
            "ok\r",
            "",
            "Retrying in 4 seconds",
            "  \u{2502} ok",
            "x \u{2514} ok",
        ];
        for p in patterns {
            let lp = LinePattern::new(p).unwrap();
            let re = build_regex(p).unwrap();
            for t in texts {
                assert_eq!(
                    lp.matches(
                        t.as_bytes(),
                        t.to_ascii_lowercase().as_bytes(),
                        !t.contains('\n')
                    ),
                    re.is_match(t.as_bytes()),
                    "{p} on {t:?}"
                );
            }
        }
    }
}
