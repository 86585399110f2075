//! Timing: every reset and retry shape the sources show, read through the
//! whole classifier and validated against `occurred_at`
//! (2026-11-30T12:00:00Z). One row per shape: headers (`retry-after-ms`,
//! `retry-after` in seconds and as an HTTP date, Go-style and RFC 3339
//! reset headers), Google `RetryInfo` (nested in a JSON string, with nine
//! fractional digits, printed as a Go map), JSON fields (ISO instants with
//! `Z` or an offset, epoch seconds and milliseconds, seconds from now),
//! `|<epoch>` sentinels, zoned clock times (IANA zones, UTC, RFC 3339
//! offsets) and "try again in" phrasings (Go durations, days and hours,
//! "retry in", "after 1 seconds", Chinese). Each shape also has the
//! variants that must give no hint: in the past, beyond 400 days, a clock
//! time without a zone or with an ambiguous abbreviation, and a client's
//! own backoff.

use classify::{classify_line, Catalogue};

/// Name, the expected `retry_after_seconds`, and the envelope's one item.
const ROWS: &[(&str, Option<f64>, &str)] = &[
    (
        "retry-after-ms",
        Some(1.5),
        r#"{"kind": "http", "status": 429, "headers": {"retry-after-ms": "1500", "retry-after": "9"}, "body": "{\"type\": \"error\", \"error\": {\"type\": \"rate_limit_error\", \"message\": \"Number of request tokens has exceeded your per-minute rate limit\"}}"}"#,
    ),
    (
        "retry-after-secs",
        Some(12.0),
        r#"{"kind": "http", "status": 429, "headers": {"retry-after": "12"}, "body": "{\"type\": \"error\", \"error\": {\"type\": \"rate_limit_error\", \"message\": \"Number of request tokens has exceeded your per-minute rate limit\"}}"}"#,
    ),
    (
        "retry-after-httpdate",
        Some(120.0),
        r#"{"kind": "http", "status": 429, "headers": {"retry-after": "Mon, 30 Nov 2026 12:02:00 GMT"}, "body": "{\"type\": \"error\", \"error\": {\"type\": \"rate_limit_error\", \"message\": \"Number of request tokens has exceeded your per-minute rate limit\"}}"}"#,
    ),
    (
        "retry-after-httpdate-past",
        None,
        r#"{"kind": "http", "status": 429, "headers": {"retry-after": "Mon, 30 Nov 2026 11:02:00 GMT"}, "body": "{\"type\": \"error\", \"error\": {\"type\": \"rate_limit_error\", \"message\": \"Number of request tokens has exceeded your per-minute rate limit\"}}"}"#,
    ),
    (
        "openai-reset-go",
        Some(360.0),
        r#"{"kind": "http", "status": 429, "headers": {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "6m0s", "x-ratelimit-remaining-tokens": "100", "x-ratelimit-reset-tokens": "1s"}, "body": "{\"error\": {\"message\": \"Rate limit reached for gpt-4o on requests per min (RPM): Limit 500, Used 500, Requested 1.\", \"type\": \"requests\", \"code\": \"rate_limit_exceeded\"}}"}"#,
    ),
    (
        "anthropic-reset-rfc3339",
        Some(30.0),
        r#"{"kind": "http", "status": 429, "headers": {"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": "2026-11-30T12:00:30Z"}, "body": "{\"type\": \"error\", \"error\": {\"type\": \"rate_limit_error\", \"message\": \"Number of request tokens has exceeded your per-minute rate limit\"}}"}"#,
    ),
    (
        "gemini-nested-retryinfo",
        Some(38.0),
        r#"{"kind": "stderr", "lines": ["[API Error: {\"error\":{\"message\":\"{\\n  \\\"error\\\": {\\n    \\\"code\\\": 429,\\n    \\\"message\\\": \\\"Resource has been exhausted (e.g. check quota).\\\",\\n    \\\"status\\\": \\\"RESOURCE_EXHAUSTED\\\",\\n    \\\"details\\\": [{\\\"@type\\\": \\\"type.googleapis.com/google.rpc.QuotaFailure\\\", \\\"violations\\\": [{\\\"quotaId\\\": \\\"GenerateRequestsPerMinutePerProjectPerModel-FreeTier\\\"}]}, {\\\"@type\\\": \\\"type.googleapis.com/google.rpc.RetryInfo\\\", \\\"retryDelay\\\": \\\"38s\\\"}]\\n  }\\n}\\n\",\"code\":429,\"status\":\"Too Many Requests\"}}]"]}"#,
    ),
    (
        "gemini-retryinfo-fraction",
        Some(45.838),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"code\": 429, \"status\": \"RESOURCE_EXHAUSTED\", \"details\": [{\"@type\": \"type.googleapis.com/google.rpc.QuotaFailure\", \"violations\": [{\"quotaId\": \"GenerateRequestsPerMinutePerProjectPerModel\"}]}, {\"@type\": \"type.googleapis.com/google.rpc.RetryInfo\", \"retryDelay\": \"45.837906927s\"}]}}"}"#,
    ),
    (
        "gemini-go-map-retrydelay",
        Some(59.0),
        r#"{"kind": "stderr", "lines": ["Error 429, Message: Resource exhausted, Status: RESOURCE_EXHAUSTED, Details: [map[@type:type.googleapis.com/google.rpc.QuotaFailure violations:[map[quotaId:GenerateRequestsPerMinutePerProjectPerModel]]] map[@type:type.googleapis.com/google.rpc.RetryInfo retryDelay:59s]]"]}"#,
    ),
    (
        "json-iso-z",
        Some(300.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"type\": \"rate_limit_error\", \"message\": \"Rate limited\", \"resets_at\": \"2026-11-30T12:05:00Z\"}}"}"#,
    ),
    (
        "json-iso-offset",
        Some(300.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"type\": \"rate_limit_error\", \"message\": \"Rate limited\", \"resets_at\": \"2026-11-30T14:05:00+02:00\"}}"}"#,
    ),
    (
        "json-iso-past",
        None,
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"type\": \"rate_limit_error\", \"message\": \"Rate limited\", \"resets_at\": \"2026-11-30T11:05:00Z\"}}"}"#,
    ),
    (
        "json-epoch-s",
        Some(300.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"type\": \"rate_limit_error\", \"message\": \"Rate limited\", \"resets_at\": 1796040300}}"}"#,
    ),
    (
        "json-epoch-ms",
        Some(300.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"type\": \"rate_limit_error\", \"message\": \"Rate limited\", \"resets_at\": 1796040300000}}"}"#,
    ),
    (
        "json-epoch-far",
        None,
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"type\": \"rate_limit_error\", \"message\": \"Rate limited\", \"resets_at\": 1900000000}}"}"#,
    ),
    (
        "json-resets-in-seconds",
        Some(3600.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"type\": \"usage_limit_reached\", \"message\": \"The usage limit has been reached\", \"resets_in_seconds\": 3600}}"}"#,
    ),
    (
        "json-retry-after-field",
        Some(30.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"type\": \"rate_limit_error\", \"message\": \"Rate limited\", \"retry_after\": 30}}"}"#,
    ),
    (
        "epoch-sentinel",
        Some(28800.0),
        r#"{"kind": "stderr", "lines": ["Claude AI usage limit reached|1796068800"]}"#,
    ),
    (
        "epoch-sentinel-ms",
        Some(28800.0),
        r#"{"kind": "stderr", "lines": ["Claude AI usage limit reached|1796068800000"]}"#,
    ),
    (
        "epoch-sentinel-past",
        None,
        r#"{"kind": "stderr", "lines": ["Claude AI usage limit reached|1764000000"]}"#,
    ),
    (
        "clock-iana",
        Some(46800.0),
        r#"{"kind": "stderr", "lines": ["5-hour limit reached ∙ resets 10am (Asia/Seoul)"]}"#,
    ),
    (
        "clock-utc",
        Some(11700.0),
        r#"{"kind": "stderr", "lines": ["Rate limit exceeded. Please try again at 3:15 PM UTC."]}"#,
    ),
    (
        "clock-date-iana",
        Some(136800.0),
        r#"{"kind": "stderr", "lines": ["Weekly limit reached · resets Dec 2, 9am (Asia/Saigon)"]}"#,
    ),
    (
        "clock-offset",
        Some(900.0),
        r#"{"kind": "stderr", "lines": ["Rate limit exceeded, try again at 2026-11-30T17:45:00+05:30"]}"#,
    ),
    (
        "clock-nozone",
        None,
        r#"{"kind": "stderr", "lines": ["5-hour limit reached ∙ resets 9pm"]}"#,
    ),
    (
        // An abbreviation with one meaning is read (10am PST is 18:00 UTC);
        // one with several (CST: US Central, China, Cuba) is not.
        "clock-abbrev",
        Some(21600.0),
        r#"{"kind": "stderr", "lines": ["5-hour limit reached ∙ resets 10am (PST)"]}"#,
    ),
    (
        "clock-abbrev-ambiguous",
        None,
        r#"{"kind": "stderr", "lines": ["5-hour limit reached ∙ resets 10am (CST)"]}"#,
    ),
    (
        "clock-nozone-date",
        None,
        r#"{"kind": "stderr", "lines": ["You've hit your usage limit. Upgrade to Pro or try again at Jun 30, 2026, 4:15 AM."]}"#,
    ),
    (
        "phrase-20s",
        Some(20.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"message\": \"Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.\", \"type\": \"requests\", \"code\": \"rate_limit_exceeded\"}}"}"#,
    ),
    (
        "phrase-go",
        Some(360.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"message\": \"Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 6m0s.\", \"type\": \"tokens\", \"code\": \"rate_limit_exceeded\"}}"}"#,
    ),
    (
        "phrase-days",
        Some(431940.0),
        r#"{"kind": "stderr", "lines": ["You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 4 days 23 hours 59 minutes."]}"#,
    ),
    (
        "phrase-retry-in",
        Some(26.661),
        r#"{"kind": "stderr", "lines": ["{\"error\":{\"code\":429,\"message\":\"Quota exceeded for metric: generate_content_free_tier_requests, limit: 10. Please retry in 26.660853464s.\",\"status\":\"RESOURCE_EXHAUSTED\"}}"]}"#,
    ),
    (
        "phrase-after-seconds",
        Some(1.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"message\": \"Your account request reached organization max RPM: 3, please try again after 1 seconds\", \"type\": \"rate_limit_reached_error\"}}"}"#,
    ),
    (
        "phrase-cjk",
        Some(30.0),
        r#"{"kind": "http", "status": 429, "headers": {}, "body": "{\"error\": {\"message\": \"\\u8bf7\\u6c42\\u8fc7\\u4e8e\\u9891\\u7e41\\uff0c\\u8bf730\\u79d2\\u540e\\u91cd\\u8bd5\", \"type\": \"rate_limit_error\"}}"}"#,
    ),
    (
        "phrase-far",
        None,
        r#"{"kind": "stderr", "lines": ["You've hit your usage limit. Try again in 500 days."]}"#,
    ),
    (
        "phrase-client-backoff",
        None,
        r#"{"kind": "stderr", "lines": ["API Error (429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Rate limited\"}}) · Retrying in 5 seconds… (attempt 1/10)"]}"#,
    ),
];

#[test]
fn every_reset_and_retry_shape_is_read_and_validated() {
    let now = "2026-11-30T12:00:00Z".parse().expect("time");
    let catalogue = Catalogue::builtin();
    let mut wrong = Vec::new();
    for (name, want, item) in ROWS {
        let line = format!(r#"{{"occurred_at":"2026-11-30T12:00:00Z","items":[{item}]}}"#);
        let c = classify_line(catalogue, &line, now).expect("row parses");
        let got = c.retry_after_seconds;
        let right = match (want, got) {
            (Some(w), Some(g)) => (w - g).abs() < 0.001,
            (None, None) => true,
            _ => false,
        };
        if !right {
            wrong.push(format!(
                "{name}: want {want:?} got {got:?} ({} by {})",
                c.code, c.classifier_rule
            ));
        }
        if let (Some(s), Some(r)) = (got, c.reset_at) {
            assert!(
                c.class.policy_class().is_some(),
                "{name}: a hint on {}",
                c.code
            );
            let expected =
                c.occurred_at + chrono::Duration::milliseconds((s * 1000.0).round() as i64);
            assert_eq!(
                r, expected,
                "{name}: reset_at is occurred_at + retry_after_seconds"
            );
        } else {
            assert!(
                got.is_none() && c.reset_at.is_none(),
                "{name}: both or neither"
            );
        }
    }
    assert!(
        wrong.is_empty(),
        "timing shapes read wrong:\n{}",
        wrong.join("\n")
    );
}
