//! The `classify` CLI contract: JSONL in, one line out per input line in the
//! same order; a line that is not an envelope yields an error line and the
//! rest still classify.

use classify::cli::classify_stream;
use classify::Catalogue;

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
