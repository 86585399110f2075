//! Facts read out of JSON, wherever extraction finds it: a whole body, an
//! SSE `data:` line, JSON embedded in a line of text or spread over a
//! stream's lines, JSON serialised into a `message` string, a Python dict
//! literal (`python`). The walk takes identifiers, statuses, messages,
//! quota ids and timing fields, within a budget of nodes and nesting so a
//! hostile body cannot make extraction slow.

use super::python::python_literal_as_json;
use crate::evidence::cut;
use crate::facts::{BodyHint, Facts, Source, NO_LINE};
use crate::json::Json;

/// How the lines of a text map to a stream item's lines.
#[derive(Clone, Copy)]
pub(super) enum LineMap<'a> {
    /// Not a stream item's text.
    None,
    /// Every line of the item, in order.
    Identity,
    /// The kept lines: the k-th line of the text is the item's `l[k]`.
    Kept(&'a [u32]),
}

/// Most JSON nodes read per item, so a hostile body cannot make extraction slow.
pub(super) const NODE_BUDGET: usize = 4096;
/// Most attempts to parse embedded JSON in one text.
const EMBEDDED_ATTEMPTS: usize = 8;
/// Deepest JSON-inside-a-string-inside-JSON followed.
const MAX_NESTED_JSON: usize = 3;

impl Facts {
    /// Parses JSON objects embedded in `text`; returns how many were read.
    /// `nest` counts how many JSON-in-text levels deep this text already is.
    pub(super) fn embedded_json(&mut self, text: &str, idx: usize, nest: usize) -> usize {
        self.json_objects(text, idx, nest, LineMap::None)
    }

    /// [`Self::embedded_json`]; for a stream item's lines joined by
    /// newlines, `lines` maps the joined text's lines to the item's, and
    /// each object's text is tied to the line it starts on.
    pub(super) fn json_objects(
        &mut self,
        text: &str,
        idx: usize,
        nest: usize,
        lines: LineMap,
    ) -> usize {
        if nest > MAX_NESTED_JSON || !text.contains('{') {
            return 0;
        }
        let mut found = 0;
        let mut pos = 0;
        let mut attempts = 0;
        while let Some(off) = text[pos..].find('{') {
            if attempts == EMBEDDED_ATTEMPTS {
                break;
            }
            attempts += 1;
            let start = pos + off;
            let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Json>();
            match stream.next() {
                Some(Ok(v)) => {
                    let consumed = stream.byte_offset().max(1);
                    let mut budget = NODE_BUDGET;
                    if !matches!(lines, LineMap::None) {
                        let k = memchr::memchr_iter(b'\n', &text.as_bytes()[..start]).count();
                        self.line = match lines {
                            LineMap::Kept(l) => l.get(k).copied().unwrap_or(NO_LINE),
                            _ => k as u32,
                        };
                    }
                    self.walk(&v, idx, 0, nest + 1, &mut budget);
                    found += 1;
                    pos = start + consumed;
                }
                _ => match python_literal_as_json(&text[start..]) {
                    // Python SDKs print errors as dict literals
                    // (`Error code: 429 - {'error': {'type': …, 'param': None}}`).
                    Some((json, consumed)) => {
                        if let Some(v) = Json::parse(&json) {
                            let mut budget = NODE_BUDGET;
                            self.walk(&v, idx, 0, nest + 1, &mut budget);
                            found += 1;
                            pos = start + consumed;
                        } else {
                            pos = start + 1;
                        }
                    }
                    None => pos = start + 1,
                },
            }
            if pos >= text.len() {
                break;
            }
        }
        found
    }

    /// Reads one JSON value: identifiers, statuses, messages and timing.
    /// Scalars of an object are read before its children so a top-level
    /// `resets_at` outranks a nested one.
    pub(super) fn walk(
        &mut self,
        v: &Json,
        idx: usize,
        depth: usize,
        nest: usize,
        budget: &mut usize,
    ) {
        if *budget == 0 || depth > 24 {
            return;
        }
        *budget -= 1;
        match v {
            Json::String(s) => self.message(s, idx, nest),
            Json::Array(a) => {
                for x in a {
                    self.walk(x, idx, depth + 1, nest, budget);
                }
            }
            Json::Object(m) => {
                // Relay wrappers (OpenRouter and friends): the upstream's own
                // words are in metadata.raw; the wrapper's message is noise.
                let has_raw = v
                    .get("metadata")
                    .and_then(|md| md.get("raw"))
                    .is_some_and(|r| r.as_str().is_some_and(|s| !s.trim().is_empty()));
                // Claude Code's rate_limit_info is only a failure when rejected.
                for (k, val) in m {
                    let k: &str = k;
                    match k {
                        "type" | "code" | "status" | "reason" | "__type" | "error_type"
                        | "errorType" | "error_code" | "errorCode" | "name" | "status_code"
                        | "statusCode" | "http_status_code" | "httpStatusCode" | "http_status"
                        // Capitalised by Tencent Cloud API 3.0 (`Response.Error.Code`,
                        // Hunyuan), AWS query APIs and botocore's error dicts.
                        | "Code" | "ErrorCode" => {
                            self.identifier(k, val, idx, nest);
                        }
                        "message" | "msg" | "detail" | "details" | "error"
                        | "error_description" | "errorMessage" | "error_message" | "result"
                        | "raw" | "stderr" | "additional_details" | "additionalDetails"
                        | "responseBody" | "response_body"
                        // Tencent Cloud's and AWS' `Message`, Baidu Qianfan's `error_msg`,
                        // MiniMax's `base_resp.status_msg`.
                        | "Message" | "ErrorMessage" | "error_msg" | "errorMsg" | "status_msg"
                        | "statusMsg" => {
                            if let Json::String(s) = val {
                                if !(has_raw && k == "message") {
                                    self.message(s, idx, nest);
                                }
                            }
                        }
                        "codex_error_info" | "codexErrorInfo" => match val {
                            Json::String(s) => self.token(s, idx),
                            Json::Object(inner) => {
                                for (name, detail) in inner {
                                    self.token(name, idx);
                                    if let Json::Object(d) = detail {
                                        for (dk, dv) in d {
                                            self.identifier(dk, dv, idx, nest);
                                            self.timing_field(dk, dv);
                                        }
                                    }
                                }
                            }
                            _ => {}
                        },
                        // OpenCode's `APIError` keeps the provider's response
                        // headers (`data.responseHeaders`): its timing, as if
                        // the response had been seen directly.
                        "responseHeaders" | "response_headers" => {
                            if let Json::Object(h) = val {
                                let headers: std::collections::BTreeMap<String, String> = h
                                    .iter()
                                    .take(64)
                                    .filter_map(|(k, v)| {
                                        v.as_str().map(|v| {
                                            (k.to_ascii_lowercase(), cut(v, 256).0.to_string())
                                        })
                                    })
                                    .collect();
                                self.headers(&headers, idx);
                            }
                        }
                        "quotaId" | "quota_id" => {
                            if let Json::String(s) = val {
                                if self.quota_ids.len() < 16 {
                                    self.quota_ids.push(cut(s, 128).0.to_ascii_lowercase());
                                }
                            }
                        }
                        "retryDelay" | "retry_delay" => match val {
                            Json::String(s) => self.timing.retry_info.push(s.to_string()),
                            Json::Object(_) => {
                                let secs = val.get("seconds").and_then(num).unwrap_or(0.0)
                                    + val.get("nanos").and_then(num).unwrap_or(0.0) / 1e9;
                                self.timing.retry_info.push(format!("{secs}s"));
                            }
                            _ => {}
                        },
                        // Why a completion stopped, in a response that may
                        // look like a success (`finish_reason: content_filter`,
                        // Gemini `finishReason: SAFETY`, Bedrock
                        // `stopReason: guardrail_intervened`).
                        "finish_reason" | "finishReason" | "blockReason" | "block_reason"
                        | "stopReason" => {
                            if let Json::String(r) = val {
                                let kind = match k {
                                    "blockReason" | "block_reason" => "block_reason",
                                    "stopReason" => "stop_reason",
                                    _ => "finish_reason",
                                };
                                self.token(&format!("{kind}_{r}"), idx);
                            }
                        }
                        _ => self.timing_field(k, val),
                    }
                }
                for (k, val) in m {
                    if matches!(val, Json::Object(_) | Json::Array(_)) {
                        if k == "rate_limit_info" || k == "rateLimitInfo" {
                            self.rate_limit_info(val, idx);
                            continue;
                        }
                        if k == "codex_error_info"
                            || k == "codexErrorInfo"
                            || k == "responseHeaders"
                            || k == "response_headers"
                        {
                            continue;
                        }
                        self.walk(val, idx, depth + 1, nest, budget);
                    }
                }
            }
            _ => {}
        }
    }

    fn identifier(&mut self, key: &str, val: &Json, idx: usize, nest: usize) {
        match val {
            Json::Number(_) => {
                if let Some(n) = num(val) {
                    self.status_number(key, n, idx);
                }
            }
            Json::String(s) => {
                let t = s.trim();
                if let Ok(n) = t.parse::<f64>() {
                    self.status_number(key, n, idx);
                } else if t.len() > 40 && t.contains(' ') {
                    // A sentence under an identifier key is a message.
                    self.message(t, idx, nest);
                } else if t != "error" {
                    self.token(t, idx);
                }
            }
            _ => {}
        }
    }

    fn status_number(&mut self, key: &str, n: f64, idx: usize) {
        let status_key = !matches!(key, "type" | "reason" | "name" | "__type");
        if status_key && n.fract() == 0.0 && (400.0..=599.0).contains(&n) {
            self.statuses.push((n as u16, idx));
        }
    }

    /// A message string: prose for the haystack, or JSON serialised into a
    /// string (Gemini CLI wraps the API's error that way), which is read.
    fn message(&mut self, s: &str, idx: usize, nest: usize) {
        let t = s.trim_start();
        if nest < MAX_NESTED_JSON && (t.starts_with('{') || t.starts_with('[')) {
            if let Some(v) = Json::parse(t) {
                let mut budget = NODE_BUDGET / 2;
                self.walk(&v, idx, 0, nest + 1, &mut budget);
                return;
            }
        }
        self.text(Source::Error, idx, s);
        self.embedded_json(s, idx, nest + 1);
    }

    fn timing_field(&mut self, key: &str, val: &Json) {
        if self.timing.body.len() >= 16 {
            return;
        }
        match key {
            "resets_at"
            | "resetsAt"
            | "reset_at"
            | "resetAt"
            | "reset_time"
            | "resetTime"
            | "reset_timestamp"
            | "resetTimestamp"
            | "quotaResetTimeStamp"
            | "next_reset_at"
            | "nextResetAt"
            | "X-RateLimit-Reset"
            | "x-ratelimit-reset" => {
                let s = match val {
                    Json::Number(n) => n.to_string(),
                    Json::String(s) => s.to_string(),
                    _ => return,
                };
                self.timing.body.push(BodyHint::Absolute(s));
            }
            "resets_in_seconds"
            | "reset_after_seconds"
            | "reset_in_seconds"
            | "reset_seconds"
            | "resetSeconds"
            | "retry_after"
            | "retryAfter"
            | "retry_after_seconds"
            | "retryAfterSeconds"
            | "resetsInSeconds"
            | "reset_after"
            | "resetAfter"
            | "quotaResetDelay"
            | "retry-after"
            | "Retry-After"
            | "estimated_time" => match val {
                // A string may be a duration (`"30s"`, `"108h48m20.7s"`,
                // `"PT30S"`) or, for a retry-after, a time.
                Json::String(s) => match crate::timing::parse_wait(s) {
                    Some(n) => self.timing.body.push(BodyHint::Seconds(n)),
                    None if chrono::DateTime::parse_from_rfc3339(s.trim()).is_ok() => {
                        self.timing.body.push(BodyHint::Absolute(s.to_string()))
                    }
                    None => {}
                },
                _ => {
                    if let Some(n) = num(val) {
                        self.timing.body.push(BodyHint::Seconds(n));
                    }
                }
            },
            "retry_after_ms" | "retryAfterMs" | "retry-after-ms" => {
                if let Some(n) = num(val) {
                    self.timing.body.push(BodyHint::Seconds(n / 1000.0));
                }
            }
            _ => {}
        }
    }

    fn rate_limit_info(&mut self, v: &Json, idx: usize) {
        let Json::Object(_) = v else { return };
        if v.get("status").and_then(Json::as_str) != Some("rejected") {
            return;
        }
        self.token("rate_limit_rejected", idx);
        let kind = v.get("rateLimitType").and_then(Json::as_str);
        if let Some(t) = kind {
            self.token(t, idx);
        }
        let reset = match (kind, v.get("overageResetsAt")) {
            (Some("overage"), Some(r)) => Some(r),
            _ => v.get("resetsAt"),
        };
        if let Some(r) = reset {
            self.timing_field("resetsAt", r);
        }
    }
}

fn num(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}
