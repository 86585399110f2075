//! Properties: the classifier is total (any envelope-shaped JSON gets a
//! classification, any text gets an answer or an error, never a panic) and
//! deterministic (same input, same bytes out), and its output keeps its
//! promises (bounded excerpt, registry-consistent class, timing only on
//! recovering classes and only in the future).

use chrono::{DateTime, Utc};
use classify::{classify_at, classify_line, Catalogue, Evidence};
use proptest::prelude::*;
use serde_json::{json, Value};

fn now() -> DateTime<Utc> {
    "2026-11-30T12:00:00Z".parse().expect("time")
}

/// Fragments that reach deep into the extractors and rules.
const WORDS: &[&str] = &[
    "rate limit",
    "Rate limit reached for gpt-4o on tokens per min (TPM)",
    "Please try again in 20s",
    "try again in 4 days 23 hours",
    "resets 10am (Asia/Seoul)",
    "resets 9pm",
    "usage limit reached|1796068800",
    "overloaded_error",
    "Overloaded",
    "API Error: 529",
    "last status: 401",
    "HTTP 429:",
    "invalid x-api-key",
    "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA",
    "org-AbCdEf1234567890XyZ",
    "RESOURCE_EXHAUSTED",
    "PerDay",
    "retryDelay",
    "stream disconnected before completion",
    "ECONNREFUSED",
    "prompt is too long",
    "{\"error\":{\"type\":\"rate_limit_error\",\"message\":\"x\"}}",
    "{\"error\":",
    "data: {\"type\":\"error\"}",
    "Provider returned error",
    "You've hit your usage limit",
    "\u{1b}[31mred\u{1b}[0m",
    "’",
    "é",
    "\u{0}",
    "<html><title>502 Bad Gateway</title></html>",
    "a@b.co",
    "1760000400",
    "Retrying in 5 seconds…",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => proptest::sample::select(WORDS).prop_map(str::to_owned),
        2 => proptest::collection::vec(proptest::sample::select(WORDS), 0..4).prop_map(|v| v.join(" ")),
        2 => ".{0,80}",
        1 => "[ -~]{0,300}",
    ]
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|n| json!(n)),
        (400u16..600).prop_map(|n| json!(n)),
        text().prop_map(Value::String),
    ]
}

fn json_any() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    proptest::sample::select(
                        &[
                            "type",
                            "code",
                            "status",
                            "message",
                            "error",
                            "details",
                            "reason",
                            "quotaId",
                            "retryDelay",
                            "resets_at",
                            "metadata",
                            "raw",
                            "codex_error_info",
                            "rate_limit_info",
                            "data"
                        ][..]
                    )
                    .prop_map(str::to_owned),
                    "[a-z]{1,6}",
                ],
                inner,
                0..6,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![4 => text().prop_map(Value::String), 2 => json_any()]
}

fn item() -> impl Strategy<Value = Value> {
    let kind = prop_oneof![
        proptest::sample::select(
            &[
                "http",
                "acp_error",
                "acp_update",
                "acp_stop",
                "stderr",
                "stdout",
                "process_exit"
            ][..]
        )
        .prop_map(|s| Value::String(s.to_owned())),
        json_leaf(),
    ];
    (
        kind,
        proptest::collection::btree_map(
            proptest::sample::select(
                &[
                    "status",
                    "headers",
                    "body",
                    "error",
                    "code",
                    "message",
                    "data",
                    "update",
                    "text",
                    "stop_reason",
                    "lines",
                    "exit_code",
                    "signal",
                ][..],
            ),
            field_value(),
            0..6,
        ),
        proptest::option::of(proptest::collection::btree_map(
            proptest::sample::select(
                &[
                    "retry-after",
                    "retry-after-ms",
                    "x-ratelimit-reset-requests",
                    "x-ratelimit-remaining-requests",
                    "anthropic-ratelimit-unified-reset",
                    "x-amzn-errortype",
                ][..],
            ),
            prop_oneof![text().prop_map(Value::String), json_leaf()],
            0..4,
        )),
        proptest::collection::vec(text(), 0..5),
    )
        .prop_map(|(kind, fields, headers, lines)| {
            let mut m: serde_json::Map<String, Value> =
                fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            m.insert("kind".into(), kind);
            if let Some(h) = headers {
                m.insert(
                    "headers".into(),
                    Value::Object(h.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()),
                );
            }
            if !lines.is_empty() && !m.contains_key("lines") {
                m.insert("lines".into(), json!(lines));
            }
            Value::Object(m)
        })
}

fn envelope() -> impl Strategy<Value = Value> {
    (
        proptest::collection::vec(prop_oneof![8 => item(), 1 => json_any()], 0..8),
        proptest::option::of(prop_oneof![
            Just(json!("2026-11-30T12:00:00Z")),
            Just(json!("not a time")),
            json_leaf(),
        ]),
        proptest::option::of(field_value()),
        proptest::option::of(field_value()),
        any::<bool>(),
    )
        .prop_map(|(items, occurred, provider, phase, wrap)| {
            let mut m = serde_json::Map::new();
            m.insert("items".into(), Value::Array(items));
            if let Some(o) = occurred {
                m.insert("occurred_at".into(), o);
            }
            if let Some(p) = provider {
                m.insert("provider_id".into(), p);
            }
            if let Some(p) = phase {
                m.insert("phase".into(), p);
            }
            let env = Value::Object(m);
            if wrap {
                json!({"id": "x", "evidence": env})
            } else {
                env
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 768, .. ProptestConfig::default() })]

    #[test]
    fn total_and_deterministic(env in envelope()) {
        let catalogue = Catalogue::builtin();
        let line = env.to_string();
        let a = classify_line(catalogue, &line, now()).expect("any object classifies");
        let b = classify_line(catalogue, &line, now()).expect("any object classifies");
        let (ja, jb) = (serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
        prop_assert_eq!(&ja, &jb);
        // Through a parsed value as well: same answer.
        let ev = Evidence::from_json_value(&env).expect("object");
        prop_assert_eq!(serde_json::to_string(&classify_at(catalogue, &ev, now())).unwrap(), ja);

        prop_assert!(a.safe_excerpt.chars().count() <= 240);
        prop_assert!(!a.safe_excerpt.contains('\n'));
        prop_assert_eq!(catalogue.class_of(&a.code), Some(a.class));
        prop_assert_eq!(a.catalogue_version.as_str(), catalogue.version());
        let recovering = a.class.policy_class().is_some();
        prop_assert!(recovering || (a.retry_after_seconds.is_none() && a.reset_at.is_none()));
        prop_assert_eq!(a.retry_after_seconds.is_some(), a.reset_at.is_some());
        if let (Some(s), Some(r)) = (a.retry_after_seconds, a.reset_at) {
            prop_assert!(s > 0.0);
            prop_assert!(r > a.occurred_at);
        }
        prop_assert!(!a.safe_excerpt.contains("AAAAAAAAAAAAAAAAAAAAAAAA"));
        prop_assert!(!a.safe_excerpt.contains("AbCdEf1234567890XyZ"));
        prop_assert!(!a.safe_excerpt.contains("a@b.co"));
    }

    #[test]
    fn any_text_is_answered_without_panicking(s in ".{0,400}") {
        let _ = classify_line(Catalogue::builtin(), &s, now());
        let wrapped = json!({"items": [
            {"kind": "stderr", "lines": [s.clone()]},
            {"kind": "http", "status": 429, "body": s.clone(), "headers": {"retry-after": s.clone()}},
            {"kind": "acp_error", "code": -32603, "message": s.clone(), "data": s},
        ]});
        let c = classify_line(Catalogue::builtin(), &wrapped.to_string(), now()).expect("object");
        prop_assert!(c.safe_excerpt.chars().count() <= 240);
    }
}

#[test]
fn non_objects_are_errors_not_panics() {
    for s in [
        "",
        "null",
        "[]",
        "42",
        "\"x\"",
        "{",
        "{\"items\": [",
        "\u{feff}{}",
    ] {
        let _ = classify_line(Catalogue::builtin(), s, now());
    }
    assert!(classify_line(Catalogue::builtin(), "[1]", now()).is_err());
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = format!(
        "{{\"items\":[{{\"kind\":\"acp_error\",\"data\":{}1{}}}]}}",
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let _ = classify_line(Catalogue::builtin(), &deep, now());
    let nested_text = format!("{}{}", "{\"message\":\"".repeat(50), "x");
    let line = json!({"items": [{"kind": "stderr", "lines": [nested_text]}]}).to_string();
    assert!(classify_line(Catalogue::builtin(), &line, now()).is_ok());
}

#[test]
fn missing_occurred_at_uses_the_given_clock() {
    let line = r#"{"items":[{"kind":"http","status":429,"headers":{"retry-after":"30"}}]}"#;
    let c = classify_line(Catalogue::builtin(), line, now()).expect("classifies");
    assert_eq!(c.occurred_at, now());
    assert_eq!(c.retry_after_seconds, Some(30.0));
    assert_eq!(c.reset_at, Some(now() + chrono::Duration::seconds(30)));
}

#[test]
fn numbers_read_the_same_from_text_and_from_a_value() {
    // Found by `total_and_deterministic`: serde_json's default float parser
    // may be off by an ULP, so the text path printed a different number than
    // the value path (and only one of them looked like an identifier).
    // The workspace enables `float_roundtrip`; this pins it.
    let env = json!({"items": [{"kind": "http", "error": {"type": [-986714.9007789401_f64]}}]});
    let line = env.to_string();
    let from_text = classify_line(Catalogue::builtin(), &line, now()).expect("classifies");
    let ev = Evidence::from_json_value(&env).expect("object");
    let from_value = classify_at(Catalogue::builtin(), &ev, now());
    assert_eq!(from_text.safe_excerpt, from_value.safe_excerpt);
}
