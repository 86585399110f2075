//! Arbitrary text in every place an adapter puts provider words (stderr,
//! HTTP body and headers, ACP message and data, agent and tool text), to
//! drive the extractors, timing parsers and sanitiser harder than random
//! JSON would.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::json;
use server_fuzz::classify::{classify_line, Catalogue};

fuzz_target!(|data: &[u8]| {
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
    let now = chrono::DateTime::from_timestamp(1_796_040_000, 0).unwrap_or_default();
    let c =
        classify_line(Catalogue::builtin(), &env.to_string(), now).expect("an object classifies");
    assert!(c.safe_excerpt.chars().count() <= 240);
    assert!(!c.safe_excerpt.contains('\n'));
    assert_eq!(Catalogue::builtin().class_of(&c.code), Some(c.class));
});
