//! No secret or identity leaves the classifier: envelopes are generated
//! with secret-shaped tokens (each provider's key shape, bearer tokens,
//! JWTs) and identity-shaped ones (emails, ARNs, GCP project paths, Azure
//! subscription and tenant ids, account ids in URLs, paths and JSON fields)
//! planted in every item kind and in the positions real errors put them,
//! and none may appear in any field of the classification.
//!
//! A token counts as leaked when any twelve consecutive characters of its
//! random part appear in the output, so a secret cut in two at an
//! excerpt's edge is caught as well as a whole one.

use chrono::{DateTime, Utc};
use classify::{classify_line, sanitize, Catalogue};
use proptest::prelude::*;
use serde_json::{json, Value};

fn now() -> DateTime<Utc> {
    "2026-11-30T12:00:00Z".parse().expect("time")
}

/// A planted token: the text put into the envelope and the random part of
/// it that must not come out.
#[derive(Debug, Clone)]
struct Planted {
    text: String,
    secret: String,
}

fn planted(prefix: &str, secret: String, suffix: &str) -> Planted {
    Planted {
        text: format!("{prefix}{secret}{suffix}"),
        secret,
    }
}

/// Base64url-ish bodies of keys (letters, digits, `-`, `_`), forced to hold
/// a digit and both cases as real keys do.
fn body(len: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[A-Za-z0-9_-]{{{len}}}"))
        .expect("regex")
        .prop_map(|s| format!("a7Q{s}"))
}

fn alnum(len: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[A-Za-z0-9]{{{len}}}"))
        .expect("regex")
        .prop_map(|s| format!("k3X{s}"))
}

fn hex(len: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[0-9a-f]{{{len}}}")).expect("regex")
}

fn uuid() -> impl Strategy<Value = String> {
    (hex(8), hex(4), hex(4), hex(4), hex(12))
        .prop_map(|(a, b, c, d, e)| format!("{a}-{b}-{c}-{d}-{e}"))
}

fn digits(len: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!("[1-9][0-9]{{{}}}", len - 1)).expect("regex")
}

/// A GCP project id: lower case letters and hyphens, with or without a
/// numeric suffix.
fn gcp_project() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-z]{4,10}-[a-z]{3,10}(-[0-9]{3,6})?").expect("regex")
}

/// A lower-case resource name (Azure resource groups and accounts).
fn resource_name() -> impl Strategy<Value = String> {
    proptest::string::string_regex("rg-[a-z]{4,10}-[a-z0-9]{3,8}").expect("regex")
}

fn email() -> impl Strategy<Value = String> {
    proptest::string::string_regex("[a-z]{3,10}\\.[a-z]{3,10}@[a-z]{4,10}\\.(com|io|dev)")
        .expect("regex")
}

/// Secret-shaped tokens: every provider key shape the catalogue knows of,
/// bearer credentials and JWTs.
fn secret() -> impl Strategy<Value = Planted> {
    prop_oneof![
        body(45).prop_map(|s| planted("sk-proj-", s, "")),
        alnum(45).prop_map(|s| planted("sk-", s, "")),
        body(90).prop_map(|s| planted("sk-ant-api03-", s, "AA")),
        body(32).prop_map(|s| planted("AIza", s, "")),
        alnum(33).prop_map(|s| planted("ghp_", s, "")),
        alnum(49).prop_map(|s| planted("gsk_", s, "")),
        alnum(77).prop_map(|s| planted("xai-", s, "")),
        hex(64).prop_map(|s| planted("sk-or-v1-", s, "")),
        proptest::string::string_regex("[A-Z0-9]{16}")
            .expect("regex")
            .prop_map(|s| planted("AKIA", s, "")),
        proptest::string::string_regex("[A-Za-z]{34}")
            .expect("regex")
            .prop_map(|s| planted("hf_", format!("Qz{s}"), "")),
        (body(20), body(30), body(25)).prop_map(|(a, b, c)| {
            let secret = format!("eyJ{a}.eyJ{b}.{c}");
            Planted {
                text: secret.clone(),
                secret,
            }
        }),
    ]
}

/// Where a secret sits in real error text.
fn secret_context() -> impl Strategy<Value = (String, &'static str)> {
    proptest::sample::select(
        &[
            ("Error: 401 Incorrect API key provided: {}. You can find your API key at https://platform.openai.com/account/api-keys.", "text"),
            ("Authorization: Bearer {}", "text"),
            ("ANTHROPIC_API_KEY={} claude -p", "text"),
            ("request failed: POST https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-pro:generateContent?key={} (403)", "text"),
            ("{\"error\":{\"message\":\"invalid x-api-key {}\",\"type\":\"authentication_error\"}}", "json"),
            ("{\"error\":{\"message\":\"API key not valid\",\"api_key\":\"{}\",\"status\":\"INVALID_ARGUMENT\"}}", "json"),
            ("x-api-key: {}", "header"),
            ("litellm.AuthenticationError: AnthropicException - token={} rejected", "text"),
        ][..],
    )
    .prop_map(|(t, k)| (t.to_owned(), k))
}

/// Identity-shaped tokens, each in the position a provider's error puts it.
fn identity() -> impl Strategy<Value = Planted> {
    prop_oneof![
        email().prop_map(|e| planted("contact ", e, " to request access")),
        digits(12).prop_map(|a| planted(
            "User: arn:aws:iam::",
            a,
            ":role/deploy-bot is not authorized to perform: bedrock:InvokeModel"
        )),
        digits(12).prop_map(|a| planted(
            "on resource: arn:aws:bedrock:us-east-1:",
            a,
            ":inference-profile/us.anthropic.claude-3-5-sonnet-20241022-v2:0"
        )),
        digits(12).prop_map(|a| planted(
            "POST https://bedrock-runtime.us-east-1.amazonaws.com/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A",
            a,
            "%3Aapplication-inference-profile%2Fabc/converse"
        )),
        gcp_project().prop_map(|p| planted(
            "Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/projects/",
            p,
            "/locations/us-central1/publishers/google/models/gemini-pro' (or it may not exist)."
        )),
        gcp_project().prop_map(|p| planted("403 Permission denied on resource project ", p, ".")),
        gcp_project().prop_map(|p| planted("{\"error\":{\"code\":403,\"status\":\"PERMISSION_DENIED\",\"details\":[{\"metadata\":{\"consumer\":\"projects/", p, "\"}}]}}")),
        gcp_project().prop_map(|p| planted("{\"project_id\": \"", p, "\", \"error\": \"billing disabled\"}")),
        digits(12).prop_map(|n| planted("for consumer 'project_number:", n, "'.")),
        uuid().prop_map(|u| planted(
            "/subscriptions/",
            u,
            "/resourceGroups/rg-ai/providers/Microsoft.CognitiveServices/accounts/contoso-ai"
        )),
        resource_name().prop_map(|r| planted(
            "The resource '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/",
            r,
            "/providers/Microsoft.CognitiveServices/accounts/x' was not found"
        )),
        uuid().prop_map(|u| planted("AADSTS700016: Application not found in the directory, tenant '", u, "'.")),
        uuid().prop_map(|u| planted("{\"tenantId\":\"", u, "\",\"error\":\"invalid_client\"}")),
        hex(32).prop_map(|h| planted(
            "POST https://gateway.ai.cloudflare.com/v1/",
            h,
            "/my-gateway/openai/chat/completions failed: 429"
        )),
        hex(32).prop_map(|h| planted(
            "https://api.cloudflare.com/client/v4/accounts/",
            h,
            "/ai/run/@cf/meta/llama-3-8b-instruct returned 403"
        )),
        alnum(21).prop_map(|o| planted("Rate limit reached for gpt-4o in organization org-", o, " on tokens per min (TPM)")),
        alnum(21).prop_map(|o| planted("{\"error\":{\"message\":\"Your account org-", o, " is not active\",\"type\":\"exceeded_current_quota_error\"}}")),
        digits(12).prop_map(|a| planted("{\"account_id\": \"", a, "\", \"message\": \"quota exceeded\"}")),
        alnum(20).prop_map(|a| planted("https://api.example.ai/v1/accounts/", a, "/usage returned 402")),
    ]
}

/// Text around a planted token that reaches the classifier's rules.
fn filler() -> impl Strategy<Value = &'static str> {
    proptest::sample::select(
        &[
            "",
            "API Error: 429 rate limit exceeded",
            "Error: 403 Forbidden",
            "You exceeded your current quota, please check your plan and billing details.",
            "HTTP 401 authentication_error",
            "AccessDeniedException",
            "PERMISSION_DENIED",
            "Retrying in 5 seconds\u{2026} (attempt 2/10)",
            "Overloaded",
        ][..],
    )
}

/// An item of a random kind carrying `line` (and `filler`) where that kind
/// carries text.
fn item_with(line: String, filler: &str, kind: usize, as_json: bool) -> Value {
    let text = if filler.is_empty() {
        line.clone()
    } else {
        format!("{filler} {line}")
    };
    match kind {
        0 => json!({"kind": "stderr", "lines": [filler, line]}),
        1 => json!({"kind": "stdout", "lines": [text]}),
        2 if as_json => json!({"kind": "http", "status": 403, "headers": {}, "body": line}),
        2 => json!({"kind": "http", "status": 429, "headers": {},
                    "body": json!({"error": {"message": text, "type": "rate_limit_error"}}).to_string()}),
        3 => {
            json!({"kind": "acp_error", "code": -32603, "message": text, "data": {"details": line}})
        }
        4 => json!({"kind": "http", "status": null, "error": text}),
        _ => {
            json!({"kind": "acp_update", "update": "tool_call_update", "status": "failed", "text": text})
        }
    }
}

/// Whether any twelve consecutive characters of `secret` occur in `out`.
fn leaks(out: &str, secret: &str) -> bool {
    let s: Vec<char> = secret.chars().collect();
    if s.len() <= 12 {
        return out.contains(secret);
    }
    s.windows(12)
        .any(|w| out.contains(&w.iter().collect::<String>()))
}

fn envelope(items: Vec<Value>) -> String {
    json!({"agent": "claude-code", "provider_id": "anthropic", "model_id": "claude-sonnet-4-5",
           "occurred_at": "2026-11-30T12:00:00Z", "items": items})
    .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    #[test]
    fn planted_secrets_never_leave(
        secrets in proptest::collection::vec((secret(), secret_context(), filler(), 0usize..6), 1..4),
    ) {
        let mut items = Vec::new();
        for (s, (context, shape), fill, kind) in &secrets {
            let line = context.replace("{}", &s.text);
            if *shape == "header" {
                items.push(json!({"kind": "http", "status": 401, "headers": {"x-api-key": s.text},
                                  "body": format!("{fill} {line}")}));
            } else {
                items.push(item_with(line, fill, *kind, *shape == "json"));
            }
        }
        let line = envelope(items);
        let c = classify_line(Catalogue::builtin(), &line, now()).expect("envelope classifies");
        let out = serde_json::to_string(&c).expect("serialises");
        for (s, ..) in &secrets {
            prop_assert!(!leaks(&out, &s.secret), "{} leaked in {}", s.secret, out);
        }
    }

    #[test]
    fn planted_identities_never_leave(
        ids in proptest::collection::vec((identity(), filler(), 0usize..6), 1..4),
    ) {
        let mut items = Vec::new();
        for (p, fill, kind) in &ids {
            let as_json = p.text.starts_with('{');
            items.push(item_with(p.text.clone(), fill, *kind, as_json));
        }
        let line = envelope(items);
        let c = classify_line(Catalogue::builtin(), &line, now()).expect("envelope classifies");
        let out = serde_json::to_string(&c).expect("serialises");
        for (p, ..) in &ids {
            prop_assert!(!leaks(&out, &p.secret), "{} leaked in {}", p.secret, out);
        }
    }

    /// Redaction itself, on every planted shape alone: what any output
    /// field is built from.
    #[test]
    fn redaction_removes_every_planted_shape(s in secret(), (context, _) in secret_context(), id in identity()) {
        let line = context.replace("{}", &s.text);
        let red = sanitize::redact(&line);
        prop_assert!(!leaks(&red, &s.secret), "{} -> {}", line, red);
        let red = sanitize::redact(&id.text);
        prop_assert!(!leaks(&red, &id.secret), "{} -> {}", id.text, red);
        let excerpt = sanitize::excerpt(&format!("{line} {}", id.text), 0);
        prop_assert!(!leaks(&excerpt, &s.secret) && !leaks(&excerpt, &id.secret), "{}", excerpt);
    }
}
