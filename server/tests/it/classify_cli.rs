//! The `classify` CLI contract: JSONL in, one line out per input line in the
//! same order; a line that is not an envelope yields an error line and the
//! rest still classify.

use classify::cli::{classify_stream, classify_stream_with};
use classify::Catalogue;

#[test]
fn explain_says_why_and_only_when_asked() {
    // A 529 with retry-after.
    let input = r#"{"occurred_at":"2026-11-30T12:00:00Z","items":[{"kind":"http","status":529,"headers":{"retry-after":"12"},"body":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"},{"kind":"process_exit","exit_code":1}]}"#;
    let run = |explain: bool| {
        let mut out = Vec::new();
        classify_stream_with(Catalogue::builtin(), input.as_bytes(), &mut out, explain)
            .expect("io");
        serde_json::from_slice::<serde_json::Value>(&out).expect("one JSON line")
    };
    let plain = run(false);
    assert!(plain.get("explain").is_none(), "{plain}");
    let why = run(true);
    let e = &why["explain"];
    // The fixed fields are the same with or without the trace.
    let mut without = why.clone();
    without.as_object_mut().expect("object").remove("explain");
    assert_eq!(without, plain);
    assert_eq!(e["outcome"], "rule", "{e}");
    assert_eq!(e["decided_by"], why["classifier_rule"], "{e}");
    let tiers = e["tiers"].as_array().expect("tiers");
    assert!(
        tiers[0]["rules"]
            .as_array()
            .expect("rules")
            .iter()
            .any(|r| r["rule"] == why["classifier_rule"] && r["code"] == "provider_overloaded"),
        "{e}"
    );
    // A bare-status rule for 529 matches too, in a lower tier.
    assert!(tiers.len() >= 2, "{e}");
    assert_eq!(e["evidence"]["item"], 0, "{e}");
    assert_eq!(e["evidence"]["kind"], "http", "{e}");
    assert_eq!(e["timing"]["source"], "retry_after", "{e}");
    assert!(
        e["timing"]["trusted"]
            .as_array()
            .expect("trusted")
            .iter()
            .any(|t| t == "retry_after"),
        "{e}"
    );
    assert_eq!(e["set_aside"], serde_json::json!([]), "{e}");
    // Nothing matched: the trace says so, and names no rule.
    let mut out = Vec::new();
    classify_stream_with(
        Catalogue::builtin(),
        r#"{"items":[{"kind":"stderr","lines":["zork-17 flux capacitor"]}]}"#.as_bytes(),
        &mut out,
        true,
    )
    .expect("io");
    let none: serde_json::Value = serde_json::from_slice(&out).expect("json");
    assert_eq!(none["explain"]["outcome"], "unmatched", "{none}");
    assert!(none["explain"]["decided_by"].is_null(), "{none}");
    assert!(none["explain"]["evidence"].is_null(), "{none}");
}

#[test]
fn one_output_line_per_input_line_in_order() {
    let input = concat!(
        r#"{"occurred_at":"2026-11-30T12:00:00Z","items":[{"kind":"http","status":529,"headers":{"retry-after":"12"},"body":"{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}]}"#,
        "\n",
        "this is not json\n",
        "\n",
        r#"{"id":"w","evidence":{"items":[{"kind":"acp_error","code":-32800,"message":"Request cancelled"}]}}"#,
        "\n",
        "[1,2,3]\n",
        r#"{"items":[{"kind":"stderr","lines":["Error: getaddrinfo ENOTFOUND api.openai.com"]}]}"#,
    );
    let mut out = Vec::new();
    classify_stream(Catalogue::builtin(), input.as_bytes(), &mut out).expect("io");
    let lines: Vec<serde_json::Value> = String::from_utf8(out)
        .expect("utf8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("each output line is JSON"))
        .collect();
    assert_eq!(lines.len(), 5, "{lines:#?}");
    assert_eq!(lines[0]["code"], "provider_overloaded");
    assert_eq!(lines[0]["retry_after_seconds"], 12);
    assert_eq!(lines[0]["reset_at"], "2026-11-30T12:00:12Z");
    assert_eq!(lines[1]["error"], "invalid_envelope");
    assert_eq!(lines[1]["line"], 2);
    assert_eq!(lines[2]["code"], "cancelled");
    assert_eq!(lines[3]["error"], "invalid_envelope");
    assert_eq!(lines[4]["code"], "network_unavailable");
    for l in [&lines[0], &lines[2], &lines[4]] {
        for f in crate::support::CLASSIFICATION_FIELDS {
            assert!(l.get(f).is_some(), "missing {f} in {l}");
        }
    }
}
