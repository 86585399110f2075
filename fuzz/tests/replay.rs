//! The fuzz targets' checks (`fuzz/src/lib.rs`, what the cargo-fuzz
//! targets call) over every stored input, in the normal test suite and
//! without cargo-fuzz:
//! - `fuzz/regressions/<target>/`: every finding the fuzzers made, kept
//!   after its fix so it stays fixed (docs/reliability.md, "Fuzzing", says
//!   what each was);
//! - `fuzz/seeds/<target>.hex`: a minimised corpus (`cargo fuzz cmin`, the
//!   smallest 64 KB of it, one input per line in hex), so each target's
//!   paths are walked here too;
//! - `fuzz/targets/corpus/<target>/`, when a local `scripts/fuzz` run left
//!   one (not in git).

use fuzz as checks;
use std::path::{Path, PathBuf};

/// Every stored input of `target`, with where it came from.
fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let seeds = fuzz.join("seeds").join(format!("{target}.hex"));
    if let Ok(text) = std::fs::read_to_string(&seeds) {
        for (i, line) in text.lines().enumerate() {
            out.push((seeds.join(format!("line {}", i + 1)), unhex(line)));
        }
    }
    for dir in ["regressions", "targets/corpus"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target)) else {
            continue;
        };
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.is_file() {
                let data = std::fs::read(&path).expect("a stored input reads");
                out.push((path, data));
            }
        }
    }
    out.sort();
    out
}

fn unhex(line: &str) -> Vec<u8> {
    (0..line.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&line[i..i + 2], 16).expect("a hex byte"))
        .collect()
}

/// Runs `check` over every stored input of `target`, naming the input that
/// fails. The committed seeds make sure there is something to replay.
fn replay(target: &str, check: fn(&[u8])) {
    let all = inputs(target);
    assert!(
        !all.is_empty(),
        "no stored inputs for {target}: fuzz/seeds/{target}.hex is missing"
    );
    for (path, data) in &all {
        if std::panic::catch_unwind(|| check(data)).is_err() {
            panic!("{target} fails on {}", path.display());
        }
    }
}

#[test]
fn classify_line_inputs() {
    replay("classify_line", checks::classify_line_bytes);
}

#[test]
fn classify_text_inputs() {
    replay("classify_text", checks::classify_text_bytes);
}

#[test]
fn evidence_inputs() {
    replay("evidence", checks::evidence_bytes);
}

#[test]
fn policy_inputs() {
    replay("policy", checks::policy_bytes);
}

#[test]
fn legacy_inputs() {
    replay("legacy", checks::legacy_bytes);
}

#[test]
fn runner_formats_inputs() {
    replay("runner_formats", checks::runner_formats_bytes);
}

// Findings, each as the behaviour it broke.

/// Fuzzing `evidence` found the CLI (which reads a line as text) and the
/// API (which reads the body as a JSON value first) reading an update's
/// text differently when a key repeats: the text reader joined every
/// `text` value, the value keeps only the last. Now every key keeps its
/// last value and `text` and `content` are joined in one order, whatever
/// the order of the keys.
#[test]
fn a_repeated_or_reordered_key_reads_the_same_as_text_and_as_a_value() {
    for line in [
        r#"{"items":[{"kind":"acp_update","update":"agent_message_chunk","text":"first","text":"second"}]}"#,
        r#"{"items":[{"kind":"acp_update","update":"agent_message_chunk","content":"b","text":"a"}]}"#,
        r#"{"items":[{"kind":"acp_update","update":"tool_call_update","status":"failed","status":null}]}"#,
    ] {
        let text = classify::Evidence::from_json_str(line).expect("reads as text");
        let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
        let value = classify::Evidence::from_json_value(&value).expect("reads as a value");
        assert_eq!(text.items, value.items, "{line}");
    }
    let line = r#"{"items":[{"kind":"acp_update","update":"agent_message_chunk","text":"first","text":"second"}]}"#;
    let ev = classify::Evidence::from_json_str(line).expect("reads");
    let classify::Item::AcpUpdate(u) = &ev.items[0] else {
        panic!("an update: {:?}", ev.items)
    };
    assert_eq!(u.text.as_deref(), Some("second"), "the last value wins");
}
