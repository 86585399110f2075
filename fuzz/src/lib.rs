//! What every fuzz target checks, one function per target taking the raw
//! input bytes. The cargo-fuzz crate (`fuzz/targets`, run by
//! `scripts/fuzz`) calls these under libFuzzer, and this crate's own test
//! (`tests/replay.rs`) replays every stored input through them: a finding,
//! once fixed, stays fixed in the normal test suite without cargo-fuzz.
#![forbid(unsafe_code)]

use classify::evidence::{
    MAX_DATA_DEPTH, MAX_DATA_ENTRIES, MAX_HEADERS, MAX_ID_BYTES, MAX_ITEMS, MAX_LINES,
    MAX_LINE_BYTES, MAX_TEXT_BYTES,
};
use classify::{classify_line, Catalogue, Evidence, Item};
use domain::policy::class::{builtin_class_of, BUILTIN_CODES};
use domain::policy::legacy::LegacyAction;
use domain::policy::limits::{
    MAX_INITIAL_INTERVAL_SECONDS, MAX_RETRIES, MAX_WAIT_SECONDS, MIN_INITIAL_INTERVAL_SECONDS,
    MIN_RETRIES, MIN_WAIT_SECONDS, POLICY_VERSION,
};
use domain::policy::validate::validate_policy;
use domain::policy::{CandidatePolicy, ClassPolicy, PolicyClass};
use runner::config::Format;
use runner::format::{self, Seen, MAX_ERROR_BYTES};
use serde_json::{json, Value};

/// The fixed "now" every classification is made at, so runs repeat.
fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(1_796_040_000, 0).unwrap_or_default()
}

/// Any bytes as one `kandev-recovery classify` input line: parsing and
/// classification never panic, and every answer keeps its promises.
pub fn classify_line_bytes(data: &[u8]) {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(c) = classify_line(Catalogue::builtin(), line, now()) {
        assert!(c.safe_excerpt.chars().count() <= 240);
        assert_eq!(Catalogue::builtin().class_of(&c.code), Some(c.class));
        assert_eq!(c.retry_after_seconds.is_some(), c.reset_at.is_some());
        if let Some(r) = c.reset_at {
            assert!(r > c.occurred_at);
        }
        let again = classify_line(Catalogue::builtin(), line, now()).expect("same input parses");
        assert_eq!(c, again, "classification is deterministic");
    }
}

/// Arbitrary text in every place an adapter puts provider words (stderr,
/// HTTP body and headers, ACP message and data, agent and tool text), to
/// drive the extractors, timing parsers and sanitiser harder than random
/// JSON would.
pub fn classify_text_bytes(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut mid = text.len() / 2;
    while !text.is_char_boundary(mid) {
        mid += 1;
    }
    let (a, b) = text.split_at(mid);
    let env = json!({
        "occurred_at": "2026-11-30T12:00:00Z",
        "items": [
            {"kind": "acp_update", "update": "agent_message_chunk", "text": a},
            {"kind": "acp_update", "update": "tool_call_update", "status": "failed", "text": b},
            {"kind": "stderr", "lines": [a, b]},
            {"kind": "http", "status": 429, "headers": {"retry-after": a, "x-ratelimit-reset-requests": b}, "body": text},
            {"kind": "acp_error", "code": -32603, "message": a, "data": {"message": b, "codex_error_info": a}},
            {"kind": "process_exit", "exit_code": 1, "signal": b}
        ]
    });
    let c =
        classify_line(Catalogue::builtin(), &env.to_string(), now()).expect("an object classifies");
    assert!(c.safe_excerpt.chars().count() <= 240);
    assert!(!c.safe_excerpt.contains('\n'));
    assert_eq!(Catalogue::builtin().class_of(&c.code), Some(c.class));
}

/// Any bytes read as an evidence envelope: the lenient readers never panic,
/// keep every bound they promise (`classify::evidence`'s constants), and
/// reading the text and reading its parsed JSON value agree.
pub fn evidence_bytes(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let streamed = Evidence::from_json_str(text);
    if let Ok(ev) = &streamed {
        within_bounds(ev);
    }
    // The server reads request bodies as a `Value` first; the CLI reads
    // lines as text. Both must see the same envelope.
    if let Ok(value) = serde_json::from_str::<Value>(text) {
        let from_value = Evidence::from_json_value(&value);
        match (&streamed, &from_value) {
            (Ok(a), Ok(b)) => {
                // Not `truncated`: with a repeated key the text reading
                // also saw (and may have cut) the value the last one
                // replaced. What is kept must be the same.
                let kept = |e: &Evidence| Evidence {
                    truncated: false,
                    ..e.clone()
                };
                assert_eq!(kept(a), kept(b), "text and value readings differ");
            }
            (Err(_), Err(_)) => {}
            (a, b) => panic!("text reads {a:?} but the value reads {b:?}"),
        }
    }
}

fn within_bounds(ev: &Evidence) {
    let id = |s: &Option<String>| {
        if let Some(s) = s {
            assert!(s.len() <= MAX_ID_BYTES, "identifier of {} bytes", s.len());
        }
    };
    for s in [
        &ev.route_id,
        &ev.invocation_id,
        &ev.agent,
        &ev.provider_id,
        &ev.model_id,
    ] {
        id(s);
    }
    if let Some(r) = &ev.resumable {
        id(&r.provider_session_id);
    }
    assert!(ev.items.len() <= MAX_ITEMS, "{} items", ev.items.len());
    let text = |s: &Option<String>| {
        if let Some(s) = s {
            assert!(s.len() <= MAX_TEXT_BYTES, "text of {} bytes", s.len());
        }
    };
    for item in &ev.items {
        match item {
            Item::Http(h) => {
                assert!(
                    h.headers.len() <= MAX_HEADERS,
                    "{} headers",
                    h.headers.len()
                );
                for (k, v) in &h.headers {
                    assert!(k.len() <= MAX_ID_BYTES, "header name of {} bytes", k.len());
                    assert!(v.len() <= 4 * MAX_ID_BYTES, "header of {} bytes", v.len());
                    assert_eq!(k, &k.to_lowercase(), "header names are lower-cased");
                }
                text(&h.body);
                text(&h.error);
            }
            Item::AcpError(e) => {
                text(&e.message);
                if let Some(d) = &e.data {
                    bounded_value(d, 0);
                }
            }
            Item::AcpUpdate(u) => {
                assert!(u.update.len() <= MAX_ID_BYTES);
                text(&u.text);
                text(&u.status);
            }
            Item::AcpStop(s) => text(&s.stop_reason),
            Item::Stderr(s) | Item::Stdout(s) => {
                assert!(s.lines.len() <= MAX_LINES, "{} lines", s.lines.len());
                for l in &s.lines {
                    assert!(l.len() <= MAX_LINE_BYTES, "line of {} bytes", l.len());
                }
            }
            Item::ProcessExit(p) => text(&p.signal),
            Item::Other(o) => text(&o.original_kind),
        }
    }
}

/// ACP `data` as kept: no deeper than [`MAX_DATA_DEPTH`], no wider than
/// [`MAX_DATA_ENTRIES`], no string longer than [`MAX_TEXT_BYTES`].
fn bounded_value(v: &Value, depth: usize) {
    assert!(depth <= MAX_DATA_DEPTH, "data nested {depth} deep");
    match v {
        Value::String(s) => assert!(s.len() <= MAX_TEXT_BYTES, "data string of {}", s.len()),
        Value::Array(a) => {
            assert!(a.len() <= MAX_DATA_ENTRIES, "data list of {}", a.len());
            a.iter().for_each(|x| bounded_value(x, depth + 1));
        }
        Value::Object(m) => {
            assert!(m.len() <= MAX_DATA_ENTRIES, "data object of {}", m.len());
            m.values().for_each(|x| bounded_value(x, depth + 1));
        }
        _ => {}
    }
}

/// Any JSON as a candidate's policy document: the validator never panics;
/// what it accepts is canonical, inside the limits, and reads back to
/// itself from its own serialisation; what it refuses names at least one
/// field.
pub fn policy_bytes(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    check_policy(&v);
}

fn check_policy(v: &Value) -> Option<CandidatePolicy> {
    match validate_policy(v) {
        Ok(p) => {
            assert_eq!(p.version, POLICY_VERSION);
            for c in [&p.transient, &p.hard] {
                within_limits(c);
            }
            let wire = serde_json::to_value(p).expect("a policy serialises");
            assert_eq!(
                validate_policy(&wire).as_ref(),
                Ok(&p),
                "{wire} does not read back"
            );
            Some(p)
        }
        Err(errors) => {
            assert!(!errors.is_empty(), "refused without a reason: {v}");
            None
        }
    }
}

fn within_limits(c: &ClassPolicy) {
    assert_eq!(c, &c.canonical(), "accepted a non-canonical class policy");
    let r = &c.retry;
    if r.enabled {
        assert!((MIN_RETRIES..=MAX_RETRIES).contains(&r.max_retries));
        assert!(
            (MIN_INITIAL_INTERVAL_SECONDS..=MAX_INITIAL_INTERVAL_SECONDS)
                .contains(&r.initial_interval_seconds)
        );
    } else {
        assert_eq!((r.max_retries, r.initial_interval_seconds), (0, 0));
    }
    let w = &c.wait_for_reset;
    if w.enabled {
        assert!((MIN_WAIT_SECONDS..=MAX_WAIT_SECONDS).contains(&w.max_wait_seconds));
    } else {
        assert_eq!(w.max_wait_seconds, 0);
    }
}

/// Legacy documents built from the bytes (the shape, the default action and
/// per-code rules over the built-in codes and garbage), normalised and
/// compared with a reference model of docs/design.md's legacy rules: `try_next` when no
/// default is given, a per-code rule overriding its class, the most
/// conservative rule of a class winning (`stop` over `retry_same` over
/// `try_next`), and anything unmappable refused rather than guessed.
pub fn legacy_bytes(data: &[u8]) {
    let Some((&shape, rest)) = data.split_first() else {
        return;
    };
    let mut bytes = rest.iter().copied();
    let mut next = move || bytes.next();
    // An action: one of the three, or something unmappable.
    let action = |b: u8| -> Value {
        match b % 8 {
            0 | 1 => json!("retry_same"),
            2 | 3 => json!("try_next"),
            4 | 5 => json!("stop"),
            6 => json!("Retry_Same"),
            _ => json!(b),
        }
    };
    let code = |b: u8| -> String {
        match BUILTIN_CODES.get(b as usize % (BUILTIN_CODES.len() + 2)) {
            Some((c, _)) => (*c).to_string(),
            None if b % 2 == 0 => "no_such_code".to_string(),
            None => String::new(),
        }
    };
    let doc = match shape % 5 {
        0 => match next() {
            Some(b) => action(b),
            None => return,
        },
        n => {
            let mut o = serde_json::Map::new();
            if let Some(b) = next() {
                if b % 3 != 0 {
                    o.insert("on_error".into(), action(b));
                }
            }
            let mut rules = Vec::new();
            while let (Some(c), Some(a)) = (next(), next()) {
                rules.push((code(c), action(a)));
            }
            let per_code = match n {
                1 | 2 => Value::Object(rules.into_iter().collect()),
                3 => Value::Array(
                    rules
                        .into_iter()
                        .map(|(c, a)| json!({"code": c, "action": a}))
                        .collect(),
                ),
                _ => json!(rules.len()),
            };
            if n != 2 || !per_code.as_object().is_some_and(|m| m.is_empty()) {
                o.insert("per_code".into(), per_code);
            }
            if o.is_empty() {
                // Neither key: not a legacy shape at all.
                o.insert("on_error".into(), json!("try_next"));
            }
            Value::Object(o)
        }
    };
    let got = check_policy(&doc);
    assert_eq!(got, legacy_model(&doc), "normalising {doc}");
}

/// What docs/design.md's legacy rules make of `doc`; `None` when something in it
/// cannot be mapped.
fn legacy_model(doc: &Value) -> Option<CandidatePolicy> {
    let parse = |v: &Value| v.as_str().and_then(LegacyAction::parse);
    let (default, rules): (Option<LegacyAction>, Vec<(String, &Value)>) = match doc {
        Value::String(_) => (parse(doc), Vec::new()),
        Value::Object(o) => {
            let default = match o.get("on_error") {
                Some(a) => parse(a),
                None => Some(LegacyAction::TryNext),
            };
            let rules = match o.get("per_code") {
                None => Vec::new(),
                Some(Value::Object(m)) => m.iter().map(|(c, a)| (c.clone(), a)).collect(),
                Some(Value::Array(items)) => {
                    let mut out = Vec::new();
                    for item in items {
                        match (item.get("code").and_then(Value::as_str), item.get("action")) {
                            (Some(c), Some(a)) => out.push((c.to_string(), a)),
                            _ => return None,
                        }
                    }
                    out
                }
                Some(_) => return None,
            };
            (default, rules)
        }
        _ => return None,
    };
    let default = default?;
    let mut per_class: [Option<LegacyAction>; 2] = [None, None];
    for (code, action) in rules {
        let action = parse(action)?;
        let class = builtin_class_of(&code)?;
        if let Some(pc) = class.policy_class() {
            let slot = &mut per_class[pc as usize];
            *slot = Some(slot.map_or(action, |a| a.max(action)));
        }
    }
    let policy = |pc: PolicyClass| per_class[pc as usize].unwrap_or(default).class_policy();
    Some(CandidatePolicy {
        version: POLICY_VERSION,
        transient: policy(PolicyClass::Transient),
        hard: policy(PolicyClass::Hard),
    })
}

/// Any bytes as an agent CLI's stdout, line by line, through every format's
/// reader (and as a Codex session file): no panic, and whatever a reader reports as evidence is bounded
/// and reads back as an evidence item the classifier accepts.
pub fn runner_formats_bytes(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for f in [
        Format::ClaudeStreamJson,
        Format::CodexJson,
        Format::CodexAppServer,
        Format::GeminiStreamJson,
        Format::Plain,
    ] {
        let mut reader = format::reader(f);
        for line in text.lines() {
            let read = reader.stdout_line(line);
            for seen in &read.seen {
                if let Seen::Error(report) = seen {
                    error_item(report.to_item());
                }
            }
        }
    }
    // The same bytes as a Codex session file read after a failed turn.
    if let Some(report) = format::codex::rollout_failure(&text) {
        error_item(report.to_item());
    }
    for line in text.lines() {
        let (status, body) = format::status_and_body(line);
        if let Some(s) = status {
            assert!((400..600).contains(&s), "status {s}");
        }
        if let Some(b) = body {
            assert!(
                serde_json::from_str::<Value>(&b).is_ok(),
                "body {b:?} is JSON"
            );
        }
    }
}

fn error_item(item: Item) {
    let limit = MAX_ERROR_BYTES + '…'.len_utf8();
    match &item {
        Item::Http(http) => {
            assert!(http.body.as_ref().map_or(0, String::len) <= limit);
        }
        Item::Stdout(stdout) => {
            let lines = &stdout.lines;
            assert!(lines.iter().all(|l| l.len() <= limit));
        }
        other => panic!("an error report became {other:?}"),
    }
    let envelope = json!({"items": [item]});
    let ev = Evidence::from_json_value(&envelope).expect("the envelope reads back");
    assert_eq!(ev.items.len(), 1, "{envelope}");
}
