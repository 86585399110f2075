//! Extractors: turn raw evidence items into normalised facts.
//!
//! Every item kind has one extractor. Together they produce:
//! - structured facts: HTTP statuses (from responses, JSON error objects and
//!   phrases like `API Error: 529` or `last status: 401`), error identifiers
//!   (`error.type`, `error.code`, Google `status` and `details[].reason`,
//!   Bedrock exception names, codex-acp `codex_error_info`), Google quota ids,
//!   ACP error codes, stop reasons, exit codes and signals;
//! - three text haystacks the catalogue's patterns run over: `error` (bodies,
//!   error messages, stderr, stdout), `agent` (agent message chunks, which may
//!   hold a CLI's banner but also the model's own prose) and `tool` (text of
//!   failed tool calls);
//! - timing inputs (headers, RetryInfo, JSON reset fields) for [`super::timing`].
//!
//! JSON is found wherever it hides: whole bodies, SSE `data:` lines inside an
//! HTTP 200 stream, JSON embedded in a stderr line (`API Error: 400 {…}`),
//! JSON spread over several lines, JSON serialised into a `message` string,
//! and relay wrappers whose `metadata.raw` carries the upstream's words.
//! Identifiers are normalised to snake_case (`rateLimitExceeded`,
//! `RATE_LIMIT_EXCEEDED` and `rate_limit_exceeded` are the same fact).
//!
//! Reading item by item, and the text, headers and bodies of items, is
//! here; the JSON readers are `json_facts` (with `python` for Python dict
//! literals), the facts read out of the finished error haystack `prose`,
//! and how text and identifiers are normalised `normalise`.

use super::evidence::{Evidence, Item};
use super::facts::{Facts, ResetHeader, Segment, Source, NO_LINE};
use super::json::Json;
use super::mask::{LineUse, Mask};
use json_facts::{LineMap, NODE_BUDGET};
use normalise::{normalise_into, strip_tags};
use serde_json::Value;

mod json_facts;
mod normalise;
mod prose;
mod python;

pub(crate) use normalise::norm_token;

impl Facts {
    /// Extracts every item's facts; with a `mask`, only what it keeps (see
    /// `provenance`): items and stream lines it drops are not read at all.
    pub(crate) fn extract(ev: &Evidence, mask: Option<&Mask>) -> Facts {
        let mut f = Facts {
            line: NO_LINE,
            ..Facts::default()
        };
        // Room for the error haystack up front (growing it by doubling would
        // copy it several times); JSON bodies give less text than their size.
        f.hay[Source::Error as usize].reserve(ev.items.iter().map(text_size).sum());
        // A segment per stream line, and a few per other item.
        f.segments.reserve(
            ev.items
                .iter()
                .map(|i| match i {
                    Item::Stderr(s) | Item::Stdout(s) => s.lines.len(),
                    _ => 2,
                })
                .sum(),
        );
        for (idx, item) in ev.items.iter().enumerate() {
            if mask.is_some_and(|m| m.drops_item(idx)) {
                continue;
            }
            f.line = NO_LINE;
            match item {
                Item::Http(h) => {
                    if let Some(s) = h.status {
                        if (400..=599).contains(&s) {
                            f.statuses.push((s, idx));
                        }
                    }
                    f.headers(&h.headers, idx);
                    if let Some(body) = &h.body {
                        f.body(body, &h.headers, idx);
                    }
                    if let Some(err) = &h.error {
                        f.text(Source::Error, idx, err);
                        if h.status.is_none() {
                            f.no_response = Some(idx);
                        }
                    }
                }
                Item::AcpError(e) => {
                    if let Some(c) = e.code {
                        f.acp_codes.push((c, idx));
                    }
                    if let Some(m) = &e.message {
                        f.text(Source::Error, idx, m);
                        f.embedded_json(m, idx, 0);
                    }
                    match &e.data {
                        Some(Value::String(s)) => {
                            f.text(Source::Error, idx, s);
                            f.embedded_json(s, idx, 0);
                        }
                        Some(v) => {
                            let mut budget = NODE_BUDGET;
                            f.walk(&Json::from_value(v), idx, 0, 0, &mut budget);
                        }
                        None => {}
                    }
                }
                Item::AcpUpdate(u) => match u.update.as_str() {
                    "agent_message_chunk" => {
                        if let Some(t) = &u.text {
                            f.text(Source::Agent, idx, t);
                        }
                    }
                    "tool_call" | "tool_call_update" if u.status.as_deref() == Some("failed") => {
                        f.tool_failed = Some(idx);
                        if let Some(t) = &u.text {
                            f.text(Source::Tool, idx, t);
                        }
                    }
                    // An update without a status may be a failure the
                    // adapter did not mark: its text is read as tool text
                    // (only rules naming the tool haystack look at it).
                    "tool_call_update" if u.status.is_none() => {
                        if let Some(t) = &u.text {
                            f.text(Source::Tool, idx, t);
                        }
                    }
                    _ => {}
                },
                Item::AcpStop(s) => {
                    if let Some(r) = &s.stop_reason {
                        if let Some(t) = norm_token(r) {
                            f.stop_reasons.push((t, idx));
                        }
                    }
                }
                Item::Stderr(s) | Item::Stdout(s) => {
                    let lines = mask.and_then(|m| m.lines(idx));
                    let read = |n: usize| {
                        lines.map_or(LineUse::Read, |l| {
                            l.get(n).copied().unwrap_or(LineUse::Read)
                        })
                    };
                    let keep = |n: usize| read(n) == LineUse::Read;
                    let mut any_brace = false;
                    let mut all = true;
                    for (n, line) in s.lines.iter().enumerate() {
                        f.line = n as u32;
                        match read(n) {
                            LineUse::Read => {
                                any_brace |= line.contains('{');
                                f.text(Source::Error, idx, line);
                            }
                            LineUse::Tool => {
                                all = false;
                                f.text(Source::Tool, idx, line);
                            }
                            LineUse::Drop => all = false,
                        }
                    }
                    if any_brace {
                        // JSON may spread over lines; its text is tied to
                        // the line it starts on.
                        if all {
                            f.json_objects(&s.lines.join("\n"), idx, 0, LineMap::Identity);
                        } else {
                            let kept: Vec<u32> = (0..s.lines.len())
                                .filter(|&n| keep(n))
                                .map(|n| n as u32)
                                .collect();
                            let joined = kept
                                .iter()
                                .map(|&n| s.lines[n as usize].as_str())
                                .collect::<Vec<_>>()
                                .join("\n");
                            f.json_objects(&joined, idx, 0, LineMap::Kept(&kept));
                        }
                    }
                    f.line = NO_LINE;
                }
                Item::ProcessExit(p) => {
                    if let Some(c) = p.exit_code {
                        f.exit_codes.push((c, idx));
                    }
                    if let Some(sig) = &p.signal {
                        f.signals.push((sig.clone(), idx));
                    }
                }
                Item::Other(_) => {}
            }
        }
        f.text_statuses();
        f.exception_names();
        for (lower, hay) in f.lower.iter_mut().zip(&f.hay) {
            *lower = hay.as_bytes().to_ascii_lowercase();
        }
        f.text_google_details();
        f.oversized_request();
        f
    }

    /// Appends `text` to a haystack as one segment: ANSI escapes removed,
    /// typographic quotes folded to ASCII, other control characters blanked.
    fn text(&mut self, source: Source, item: usize, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let hay = &mut self.hay[source as usize];
        if !hay.is_empty() {
            hay.push('\n');
        }
        let start = hay.len();
        normalise_into(text, hay);
        let end = hay.len();
        if end > start {
            self.segments.push(Segment {
                source,
                start,
                end,
                item,
                line: self.line,
            });
        }
    }

    fn headers(&mut self, headers: &std::collections::BTreeMap<String, String>, idx: usize) {
        for (name, value) in headers {
            let n = name.as_str();
            match n {
                "retry-after-ms" => self.timing.retry_after_ms = Some(value.clone()),
                "retry-after" => self.timing.retry_after = Some(value.clone()),
                "x-amzn-errortype" | "x-amz-errortype" => {
                    let head = value.split(':').next().unwrap_or("");
                    if let Some(t) = norm_token(head) {
                        self.tokens.push((t, idx));
                    }
                }
                _ => {
                    let is_reset = n.ends_with("-reset") || n.contains("-reset-");
                    let is_ratelimit = n.starts_with("x-ratelimit")
                        || n.starts_with("anthropic-ratelimit")
                        || n.starts_with("x-rate-limit")
                        || n.starts_with("ratelimit")
                        || n.starts_with("x-ai-ratelimit");
                    // Kong's AI rate limiting says retry-after in its own header.
                    if n == "x-ai-ratelimit-retry-after" && !headers.contains_key("retry-after") {
                        self.timing.retry_after = Some(value.clone());
                    }
                    if is_reset && is_ratelimit {
                        if n.contains("unified") {
                            self.timing.unified_resets.push(value.clone());
                        } else {
                            let remaining_name = n.replacen("reset", "remaining", 1);
                            self.timing.reset_headers.push(ResetHeader {
                                value: value.clone(),
                                remaining: headers.get(&remaining_name).cloned(),
                            });
                        }
                    }
                }
            }
        }
    }

    fn body(
        &mut self,
        body: &str,
        headers: &std::collections::BTreeMap<String, String>,
        idx: usize,
    ) {
        let trimmed = body.trim_start();
        if trimmed.starts_with(['{', '[', '"']) {
            if let Some(v) = Json::parse(trimmed) {
                let mut budget = NODE_BUDGET;
                self.walk(&v, idx, 0, 0, &mut budget);
                return;
            }
        }
        // SSE streams and text that carries JSON somewhere inside.
        if self.embedded_json(body, idx, 0) > 0 {
            return;
        }
        let html = trimmed.starts_with('<')
            || headers
                .get("content-type")
                .is_some_and(|c| c.contains("html"));
        if html {
            let stripped = strip_tags(body);
            self.text(Source::Error, idx, &stripped);
        } else {
            for line in body.lines().take(64) {
                self.text(Source::Error, idx, line);
            }
        }
    }

    fn token(&mut self, s: &str, idx: usize) {
        if self.tokens.len() >= 64 {
            return;
        }
        if let Some(t) = norm_token(s) {
            if !self.tokens.iter().any(|(x, _)| *x == t) {
                self.tokens.push((t, idx));
            }
        }
    }
}

/// An upper bound of the error text an item usually gives.
fn text_size(item: &Item) -> usize {
    let len = |s: &Option<String>| s.as_ref().map_or(0, |s| s.len() + 1);
    match item {
        Item::Http(h) => len(&h.body) + len(&h.error),
        Item::AcpError(e) => {
            len(&e.message)
                + match &e.data {
                    Some(Value::String(s)) => s.len() + 1,
                    _ => 0,
                }
        }
        Item::Stderr(s) | Item::Stdout(s) => s.lines.iter().map(|l| l.len() + 1).sum(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use python::python_literal_as_json;

    fn facts(json: &str) -> Facts {
        Facts::extract(&Evidence::from_json_str(json).unwrap(), None)
    }

    #[test]
    fn sse_error_in_200_stream() {
        let f = facts(
            r#"{"items":[{"kind":"http","status":200,"body":"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"}]}"#,
        );
        assert!(f.tokens.iter().any(|(t, _)| t == "overloaded_error"));
        assert!(f.hay[0].contains("Overloaded"));
    }

    #[test]
    fn capitalised_code_and_message_keys_are_read() {
        // Tencent Cloud API 3.0 (Hunyuan) answers `Response.Error.Code` and
        // `Message`; Baidu Qianfan's v1 errors say `error_msg`.
        let f = facts(
            r#"{"items":[{"kind":"http","status":200,"body":"{\"Response\":{\"Error\":{\"Code\":\"FailedOperation.EngineServerLimitExceeded\",\"Message\":\"engine limit exceeded\"},\"RequestId\":\"r\"}}"}]}"#,
        );
        assert!(f
            .tokens
            .iter()
            .any(|(t, _)| t == "failed_operation_engine_server_limit_exceeded"));
        assert!(f.hay[0].contains("engine limit exceeded"));
        let f = facts(
            r#"{"items":[{"kind":"http","status":200,"body":"{\"error_code\":18,\"error_msg\":\"Open api qps request limit reached\"}"}]}"#,
        );
        assert!(f.hay[0].contains("qps request limit reached"));
        assert!(f.statuses.is_empty());
        // MiniMax's own API: `base_resp.status_msg` under an HTTP 200.
        let f = facts(
            r#"{"items":[{"kind":"http","status":200,"body":"{\"id\":\"x\",\"base_resp\":{\"status_code\":1008,\"status_msg\":\"insufficient balance\"}}"}]}"#,
        );
        assert!(f.hay[0].contains("insufficient balance"));
        assert!(f.statuses.is_empty());
    }

    #[test]
    fn opencode_api_error_keeps_the_providers_headers_and_body() {
        // `opencode run --format json`: the session's error event, an
        // `APIError` whose data keeps the response's headers and body.
        let f = facts(
            r#"{"items":[{"kind":"stdout","lines":["{\"type\":\"error\",\"error\":{\"name\":\"APIError\",\"data\":{\"message\":\"Too Many Requests\",\"statusCode\":429,\"isRetryable\":true,\"responseHeaders\":{\"Retry-After\":\"17\",\"anthropic-ratelimit-requests-reset\":\"2026-11-30T12:01:00Z\"},\"responseBody\":\"{\\\"type\\\":\\\"error\\\",\\\"error\\\":{\\\"type\\\":\\\"rate_limit_error\\\",\\\"message\\\":\\\"slow down\\\"}}\"}}}"]}]}"#,
        );
        assert!(f.statuses.iter().any(|(s, _)| *s == 429));
        assert_eq!(f.timing.retry_after.as_deref(), Some("17"));
        assert_eq!(f.timing.reset_headers.len(), 1);
        assert!(f.tokens.iter().any(|(t, _)| t == "rate_limit_error"));
        assert!(f.hay[0].contains("slow down"));
    }

    #[test]
    fn google_details_in_a_pretty_printed_error_cut_into_lines() {
        // No line is JSON on its own: the 429 is only text, but the
        // status's name says it.
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["[{","  \"error\": {","    \"code\": 429,","    \"status\": \"RESOURCE_EXHAUSTED\",","        \"quotaId\": \"GenerateContentInputTokensPerModelPerMinute-FreeTier\","]}]}"#,
        );
        assert_eq!(
            f.quota_ids,
            vec!["generatecontentinputtokenspermodelperminute-freetier"]
        );
        // Neither a 429 nor RESOURCE_EXHAUSTED: a quotaId key is not read.
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["config dump:","  \"quotaId\": \"SomethingPerMinute\","]}]}"#,
        );
        assert!(f.quota_ids.is_empty());
    }

    #[test]
    fn json_timing_fields_read_durations_and_times_written_as_strings() {
        use crate::facts::BodyHint;
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["{\"error\":{\"code\":429,\"details\":[{\"metadata\":{\"quotaResetDelay\":\"108h48m20.5s\",\"quotaResetTimeStamp\":\"2026-12-04T15:24:12Z\"}}],\"headers\":{\"retry-after\":\"PT30S\"},\"retryAfter\":\"soon\"}}"]}]}"#,
        );
        let seconds: Vec<f64> = f
            .timing
            .body
            .iter()
            .filter_map(|h| match h {
                BodyHint::Seconds(s) => Some(*s),
                BodyHint::Absolute(_) => None,
            })
            .collect();
        assert!(seconds.contains(&391_700.5), "{:?}", f.timing.body);
        assert!(seconds.contains(&30.0), "{:?}", f.timing.body);
        assert!(f
            .timing
            .body
            .iter()
            .any(|h| matches!(h, BodyHint::Absolute(a) if a == "2026-12-04T15:24:12Z")));
        // "soon" is neither a wait nor a time.
        assert_eq!(f.timing.body.len(), 3, "{:?}", f.timing.body);
    }

    #[test]
    fn nested_json_in_stderr_message() {
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["ApiError: {\"error\":{\"message\":\"{\\n \\\"error\\\": {\\n \\\"code\\\": 429, \\\"status\\\": \\\"RESOURCE_EXHAUSTED\\\", \\\"details\\\": [{\\\"quotaId\\\": \\\"PerDayThing\\\"}]}}\",\"code\":429}}"]}]}"#,
        );
        assert!(f.tokens.iter().any(|(t, _)| t == "resource_exhausted"));
        assert_eq!(f.quota_ids, vec!["perdaything"]);
        assert!(f.statuses.iter().any(|(s, _)| *s == 429));
    }

    #[test]
    fn google_details_in_go_maps_and_protobuf_text() {
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["Error 429, Details: [map[@type:type.googleapis.com/google.rpc.QuotaFailure violations:[map[quotaId:GenerateContentPaidTierInputTokensPerModelPerMinute quotaMetric:x]]]]"]}]}"#,
        );
        assert_eq!(
            f.quota_ids,
            vec!["generatecontentpaidtierinputtokenspermodelperminute"]
        );
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["HTTP 429: violations { quota_id: \"GenerateRequestsPerDayPerProjectPerModel\" }"]}]}"#,
        );
        assert_eq!(
            f.quota_ids,
            vec!["generaterequestsperdayperprojectpermodel"]
        );
        let f =
            facts(r#"{"items":[{"kind":"stderr","lines":["Error 429: no quota here: quotaId"]}]}"#);
        assert!(f.quota_ids.is_empty());
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["Error 429, map[@type:type.googleapis.com/google.rpc.RetryInfo retryDelay:59s]]"]}]}"#,
        );
        assert_eq!(f.timing.retry_info, vec!["59s"]);
        // An SDK's own backoff under a longer key is not a RetryInfo delay.
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["HTTP 429 $metadata: attempts 3, totalRetryDelay: 274, retry_delay: 12"]}]}"#,
        );
        assert!(f.timing.retry_info.is_empty(), "{:?}", f.timing.retry_info);
        // Without a 429 there is no RESOURCE_EXHAUSTED to read them for.
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["quotaId:PerMinuteThing retryDelay:5s"]}]}"#,
        );
        assert!(f.quota_ids.is_empty() && f.timing.retry_info.is_empty());
    }

    #[test]
    fn statuses_in_prose() {
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["exceeded retry limit, last status: 401 Unauthorized","API Error: 529 Overloaded","HTTP 429: slow"]}]}"#,
        );
        let s: Vec<u16> = f.statuses.iter().map(|(s, _)| *s).collect();
        assert_eq!(s, vec![401, 529, 429]);
    }

    #[test]
    fn python_literals_are_read_like_json() {
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', 'message': \"Don't retry\", 'param': None}}"]}]}"#,
        );
        assert!(
            f.tokens.iter().any(|(t, _)| t == "overloaded_error"),
            "{:?}",
            f.tokens
        );
        assert!(f.hay[0].contains("Don't retry"));
        let (json, n) = python_literal_as_json("{'a': b'x\\'y', 'b': [True, None]} tail").unwrap();
        assert_eq!(json, r#"{"a": "x'y", "b": [true, null]}"#);
        assert_eq!(n, "{'a': b'x\\'y', 'b': [True, None]}".len());
        assert!(python_literal_as_json("{\"a\": 1}").is_none());
        assert!(python_literal_as_json("{'a': 'open").is_none());
    }

    #[test]
    fn finish_reasons_and_oversized_requests_are_identifiers() {
        let f = facts(
            r#"{"items":[{"kind":"http","status":200,"body":"{\"choices\":[{\"finish_reason\":\"content_filter\"}],\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"}}"}]}"#,
        );
        let t: Vec<&str> = f.tokens.iter().map(|(t, _)| t.as_str()).collect();
        assert!(t.contains(&"finish_reason_content_filter"), "{t:?}");
        assert!(t.contains(&"block_reason_prohibited_content"), "{t:?}");
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["on tokens per minute (TPM): Limit 7000, Used 0, Requested ~12903. Please try again in 50s."]}]}"#,
        );
        assert!(f.tokens.iter().any(|(t, _)| t == "request_exceeds_limit"));
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["on tokens per min (TPM): Limit 30000, Used 29000, Requested 2,000."]}]}"#,
        );
        assert!(!f.tokens.iter().any(|(t, _)| t == "request_exceeds_limit"));
    }

    #[test]
    fn relay_raw_replaces_wrapper_message() {
        let f = facts(
            r#"{"items":[{"kind":"http","status":429,"body":"{\"error\":{\"message\":\"Provider returned error\",\"code\":429,\"metadata\":{\"raw\":\"upstream is rate-limited\"}}}"}]}"#,
        );
        assert!(!f.hay[0].contains("Provider returned error"));
        assert!(f.hay[0].contains("upstream is rate-limited"));
    }
}
