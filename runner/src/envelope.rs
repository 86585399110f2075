//! The evidence envelope a failed attempt becomes (`domain::evidence`,
//! what the service reads; docs/adapters.md describes it). Pure: the attempt shell collects, this
//! assembles. Items keep the order an adapter saw them in — effects first
//! (they happened before the error), then the CLI's structured errors, the
//! stream tails and the exit — because order is evidence too: the agent's
//! final error outranks its earlier notices.

use domain::evidence::{
    AcpStopItem, AcpUpdateItem, Evidence, HttpItem, Item, ProcessExitItem, StreamItem,
};
use std::collections::VecDeque;

/// An `http` item: a status and a body, no headers (the CLIs hide them).
pub fn http_item(status: Option<u16>, body: Option<String>) -> Item {
    Item::Http(HttpItem {
        status,
        body,
        ..HttpItem::default()
    })
}

/// An effect marker: the gate counts `acp_update` items of these kinds
/// before the error, so the envelope carries the effect even when the
/// effect report itself could not be delivered.
pub fn effect_item(kind: EffectKind) -> Item {
    Item::AcpUpdate(AcpUpdateItem {
        update: kind.to_string(),
        text: None,
        status: None,
    })
}

/// How the agent process ended.
pub fn exit_item(exit_code: Option<i64>, signal: Option<String>) -> Item {
    Item::ProcessExit(ProcessExitItem { exit_code, signal })
}

/// An ACP stop reason other than `end_turn`.
pub fn stop_item(stop_reason: &str) -> Item {
    Item::AcpStop(AcpStopItem {
        stop_reason: Some(stop_reason.to_string()),
    })
}

/// Lines the agent wrote to stdout.
pub fn stdout_item(lines: Vec<String>) -> Item {
    Item::Stdout(StreamItem { lines })
}

/// Kinds of effect the runner reports, by their ACP update names (what
/// the service's effect gate counts), and the phase an attempt failed in:
/// the API's own types.
pub use domain::api::EffectKind;
pub use domain::evidence::Phase;

/// The last lines of a stream, bounded in line count, bytes per line and
/// bytes in all (an envelope must fit the service's body limit).
#[derive(Debug, Clone)]
pub struct Tail {
    lines: VecDeque<String>,
    max_lines: usize,
    max_line_bytes: usize,
    max_bytes: usize,
    bytes: usize,
}

impl Tail {
    pub fn new(max_lines: usize, max_line_bytes: usize, max_bytes: usize) -> Tail {
        Tail {
            lines: VecDeque::with_capacity(max_lines.min(64)),
            max_lines,
            max_line_bytes,
            max_bytes,
            bytes: 0,
        }
    }

    pub fn push(&mut self, line: &str) {
        let line = line.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() {
            return;
        }
        let line = truncate(line, self.max_line_bytes);
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > self.max_lines
            || (self.bytes > self.max_bytes && self.lines.len() > 1)
        {
            if let Some(old) = self.lines.pop_front() {
                self.bytes -= old.len();
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.iter().cloned().collect()
    }
}

/// At most `max` bytes, cut at a character boundary, marked when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Who the envelope is about.
#[derive(Debug, Clone, PartialEq)]
pub struct Subject<'a> {
    pub route_id: &'a str,
    pub generation: i64,
    pub invocation_id: &'a str,
    pub prompt_generation: i64,
    pub agent: &'a str,
    pub provider_id: &'a str,
    pub model_id: &'a str,
}

/// What one attempt left behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub phase: Phase,
    /// Effects, structured errors and notices, in the order they were seen.
    pub items: Vec<Item>,
    pub stderr: Vec<String>,
    pub stdout: Vec<String>,
    pub exit: Option<Item>,
}

/// The envelope, ready to post. `occurred_at` is left to the service, so
/// timing hints are validated against the one clock that arms the timers.
pub fn envelope(subject: &Subject<'_>, record: &Record) -> Evidence {
    let mut items: Vec<Item> = record.items.clone();
    if !record.stderr.is_empty() {
        items.push(Item::Stderr(StreamItem {
            lines: record.stderr.clone(),
        }));
    }
    if !record.stdout.is_empty() {
        items.push(stdout_item(record.stdout.clone()));
    }
    if let Some(exit) = &record.exit {
        items.push(exit.clone());
    }
    // The classifier reads at most 64 items: keep the first (effects, the
    // order of notices) and the last (the final error, tails, exit).
    const MAX_ITEMS: usize = 64;
    if items.len() > MAX_ITEMS {
        let tail = items.split_off(items.len() - MAX_ITEMS / 2);
        items.truncate(MAX_ITEMS / 2);
        items.extend(tail);
    }
    let id = |s: &str| (!s.is_empty()).then(|| s.to_string());
    Evidence {
        route_id: id(subject.route_id),
        generation: u64::try_from(subject.generation).ok(),
        invocation_id: id(subject.invocation_id),
        prompt_generation: u64::try_from(subject.prompt_generation).ok(),
        phase: Some(record.phase),
        agent: id(subject.agent),
        provider_id: id(subject.provider_id),
        model_id: id(subject.model_id),
        items,
        ..Evidence::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject() -> Subject<'static> {
        Subject {
            route_id: "r_1",
            generation: 3,
            invocation_id: "inv_1",
            prompt_generation: 1,
            agent: "claude-code",
            provider_id: "anthropic",
            model_id: "",
        }
    }

    #[test]
    fn the_envelope_reads_back_as_evidence_with_effects_counted() {
        let record = Record {
            phase: Phase::Stream,
            items: vec![
                effect_item(EffectKind::AgentMessageChunk),
                http_item(Some(529), Some("{\"type\":\"error\"}".into())),
            ],
            stderr: vec!["warn".into()],
            stdout: vec![],
            exit: Some(exit_item(Some(1), None)),
        };
        let v = serde_json::to_value(envelope(&subject(), &record)).expect("writes");
        assert!(v.get("model_id").is_none(), "empty ids are left out");
        let ev = classify::Evidence::from_json_value(&v).expect("reads back");
        assert_eq!(ev.effect_count(), 1);
        assert_eq!(ev.items.len(), 4);
        assert_eq!(ev.generation, Some(3));
        assert_eq!(ev.phase, Some(classify::Phase::Stream));
    }

    #[test]
    fn tails_stay_bounded() {
        let mut t = Tail::new(3, 8, 1000);
        for i in 0..10 {
            t.push(&format!("line number {i}"));
        }
        t.push("   ");
        assert_eq!(t.lines().len(), 3);
        assert!(t.lines().iter().all(|l| l.len() <= 8 + '…'.len_utf8()));
        assert_eq!(truncate("héllo", 2), "h…");
        let mut t = Tail::new(100, 10, 25);
        for _ in 0..10 {
            t.push("0123456789");
        }
        assert_eq!(t.lines().len(), 2, "the byte budget holds");
    }

    #[test]
    fn many_items_keep_the_first_and_the_last() {
        let record = Record {
            phase: Phase::Prompt,
            items: (0..100)
                .map(|i| stdout_item(vec![format!("{i}")]))
                .collect(),
            stderr: vec![],
            stdout: vec![],
            exit: Some(exit_item(None, Some("SIGKILL".into()))),
        };
        let v = serde_json::to_value(envelope(&subject(), &record)).expect("writes");
        let items = v["items"].as_array().expect("items");
        assert_eq!(items.len(), 64);
        assert_eq!(items[0]["lines"][0], "0");
        assert_eq!(items[63]["signal"], "SIGKILL");
    }
}
