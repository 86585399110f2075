//! `format = "claude-stream-json"`: Claude Code's `--output-format
//! stream-json --verbose`, one JSON event per line.
//!
//! Real work: `assistant` messages from the model (text, `tool_use`) and
//! partial `stream_event` text deltas. Not work: Claude Code prints a
//! *synthetic* assistant message for every API error (model
//! `<synthetic>`, flagged `is_api_error_message`, with `api_error_status`
//! and `api_error_type`) — that is the error, and evidence; `system` `api_retry` events are its retry banners;
//! `user` events carry tool results (the tool call was the effect); the
//! final `result` says whether the turn failed.
//!
//! Signed in with a Claude subscription, Claude Code reads the provider's
//! `anthropic-ratelimit-unified-*` headers, which it never prints, into a
//! `rate_limit_event` (`rate_limit_info`: `status`, `resetsAt` in Unix
//! seconds, `rateLimitType` — `five_hour`, `seven_day`, `overage`…), and
//! repeats that object in the refused request's synthetic message
//! (`api_error_params`). It is data where the message is prose ("resets
//! 5:32am"), so the error's body carries it as `rate_limit_info`, which the
//! classifier reads as the exhausted window and its exact reset.

use super::{status_and_body, text_of, unparsed, ErrorReport, Finish, Read, Reader, Seen};
use serde_json::Value;

#[derive(Default)]
pub struct Claude {
    /// Text already shown from partial deltas of the current message, so
    /// the complete message is not shown twice.
    streamed: bool,
    /// The `rate_limit_info` of the last `rate_limit_event` that refused a
    /// request, for the error that follows it.
    refused: Option<Value>,
}

impl Reader for Claude {
    fn stdout_line(&mut self, line: &str) -> Read {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return unparsed(line);
        };
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "assistant" => self.assistant(&v),
            "stream_event" => self.partial(&v),
            "user" => Read::nothing(),
            "rate_limit_event" => {
                let info = v.get("rate_limit_info").unwrap_or(&Value::Null);
                self.refused = rejected(info).then(|| info.clone());
                Read::evidence(Vec::new())
            }
            "system" => match v.get("subtype").and_then(Value::as_str) {
                Some("init") => Read::work(
                    v.get("session_id")
                        .and_then(Value::as_str)
                        .map(|s| vec![Seen::Session(s.to_string())])
                        .unwrap_or_default(),
                ),
                Some("api_retry") => Read::evidence(vec![Seen::Notice(retry_notice(&v))]),
                _ => Read::evidence(Vec::new()),
            },
            "result" => {
                let failed = v.get("is_error").and_then(Value::as_bool).unwrap_or(false)
                    || v.get("subtype")
                        .and_then(Value::as_str)
                        .is_some_and(|s| s != "success");
                if !failed {
                    return Read::work(vec![Seen::Finished(Finish::Success)]);
                }
                let text = v
                    .get("result")
                    .map(text_of)
                    .filter(|t| !t.is_empty())
                    .or_else(|| v.get("errors").map(|e| e.to_string()))
                    .unwrap_or_default();
                let mut seen = Vec::new();
                if !text.is_empty() {
                    seen.push(Seen::Error(report(&text, &v, self.refused.as_ref())));
                }
                seen.push(Seen::Finished(Finish::Failure));
                Read::evidence(seen)
            }
            _ => Read::evidence(Vec::new()),
        }
    }
}

impl Claude {
    fn assistant(&mut self, v: &Value) -> Read {
        let message = v.get("message").unwrap_or(&Value::Null);
        let synthetic = message.get("model").and_then(Value::as_str) == Some("<synthetic>")
            || v.get("is_api_error_message").and_then(Value::as_bool) == Some(true)
            || v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true);
        let content = message.get("content").unwrap_or(&Value::Null);
        if synthetic {
            let text = text_of(content);
            return Read::evidence(if text.is_empty() {
                Vec::new()
            } else {
                vec![Seen::Error(report(&text, v, self.refused.as_ref()))]
            });
        }
        let mut seen = Vec::new();
        let streamed = std::mem::take(&mut self.streamed);
        for part in content.as_array().into_iter().flatten() {
            match part.get("type").and_then(Value::as_str) {
                Some("text") if !streamed => {
                    if let Some(t) = part.get("text").and_then(Value::as_str) {
                        if !t.is_empty() {
                            seen.push(Seen::Text(format!("{t}\n")));
                        }
                    }
                }
                Some("tool_use" | "server_tool_use") => seen.push(Seen::Tool(
                    part.get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("tool")
                        .to_string(),
                )),
                _ => {}
            }
        }
        Read::work(seen)
    }

    fn partial(&mut self, v: &Value) -> Read {
        let event = v.get("event").unwrap_or(&Value::Null);
        let delta = event.get("delta").unwrap_or(&Value::Null);
        match (
            event.get("type").and_then(Value::as_str),
            delta.get("type").and_then(Value::as_str),
        ) {
            (Some("content_block_delta"), Some("text_delta")) => {
                match delta.get("text").and_then(Value::as_str) {
                    Some(t) if !t.is_empty() => {
                        self.streamed = true;
                        Read::work(vec![Seen::Text(t.to_string())])
                    }
                    _ => Read::nothing(),
                }
            }
            // A new message: whatever streamed before belonged to another.
            (Some("message_start"), _) => {
                self.streamed = false;
                Read::nothing()
            }
            (Some("message_stop"), _) if self.streamed => {
                // A stream Claude Code gave up on ("abandoned_blocks") is
                // followed by its retry's complete message, which must show.
                if event.get("abandoned_blocks").is_some_and(|b| !b.is_null()) {
                    self.streamed = false;
                }
                Read::work(vec![Seen::Text("\n".into())])
            }
            _ => Read::nothing(),
        }
    }
}

/// The error as Claude Code reports it: its message, and — on the
/// synthetic message and the result — the provider's HTTP status
/// (`api_error_status`) and error type (`api_error_type`). A body quoted in
/// the message is the provider's own; otherwise the status and type are
/// written back in the Anthropic error shape Claude Code read them from.
/// A refused 429 adds the usage window that refused it (`rate_limit_info`,
/// the message's own or the `rate_limit_event` before it).
fn report(text: &str, event: &Value, refused: Option<&Value>) -> ErrorReport {
    let (quoted_status, quoted_body) = status_and_body(text);
    let status = event
        .get("api_error_status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok())
        .or(quoted_status);
    let error_type = event.get("api_error_type").and_then(Value::as_str);
    let mut body = quoted_body.or_else(|| {
        error_type.map(|t| {
            serde_json::json!({"type": "error", "error": {"type": t, "message": text}}).to_string()
        })
    });
    let window = event
        .pointer("/api_error_params/rate_limit_info")
        .filter(|i| rejected(i))
        .or(refused);
    if let (Some(429), Some(info)) = (status, window) {
        let mut object = body
            .as_deref()
            .and_then(|b| serde_json::from_str::<Value>(b).ok())
            .filter(Value::is_object)
            .unwrap_or_else(|| serde_json::json!({"type": "error", "error": {"message": text}}));
        object["rate_limit_info"] = info.clone();
        body = Some(object.to_string());
    }
    ErrorReport {
        status,
        body,
        message: Some(text.to_string()),
    }
}

/// A `rate_limit_info` that refused the request (not a near-limit warning).
fn rejected(info: &Value) -> bool {
    info.get("status").and_then(Value::as_str) == Some("rejected")
}

fn retry_notice(v: &Value) -> String {
    let attempt = v.get("attempt").and_then(Value::as_u64).unwrap_or(0);
    let max = v.get("max_retries").and_then(Value::as_u64).unwrap_or(0);
    let status = v
        .get("error_status")
        .and_then(Value::as_u64)
        .map(|s| format!(" after HTTP {s}"))
        .unwrap_or_default();
    format!("the agent is retrying on its own{status} (attempt {attempt} of {max})")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(lines: &[&str]) -> Vec<Read> {
        let mut r = Claude::default();
        lines.iter().map(|l| r.stdout_line(l)).collect()
    }

    #[test]
    fn model_text_and_tools_are_work() {
        let r = read(&[
            r#"{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5"}"#,
            r#"{"type":"assistant","message":{"model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello"},{"type":"tool_use","name":"Bash","input":{}}]}}"#,
            r#"{"type":"user","message":{"content":[{"type":"tool_result","content":"429 Too Many Requests"}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"Hello"}"#,
        ]);
        assert_eq!(r[0].seen, vec![Seen::Session("s-1".into())]);
        assert_eq!(
            r[1].seen,
            vec![Seen::Text("Hello\n".into()), Seen::Tool("Bash".into())]
        );
        assert!(!r[1].keep, "the model's prose is not evidence");
        assert_eq!(r[2], Read::nothing(), "tool output is not evidence");
        assert_eq!(r[3].seen, vec![Seen::Finished(Finish::Success)]);
    }

    #[test]
    fn synthetic_api_errors_are_evidence_not_output() {
        let r = read(&[
            r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"retry_delay_ms":500,"error_status":529}"#,
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}]}}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"result":"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}"#,
            "not json at all",
        ]);
        assert!(matches!(&r[0].seen[0], Seen::Notice(n) if n.contains("529")));
        assert!(r[0].keep);
        match &r[1].seen[..] {
            [Seen::Error(e)] => {
                assert_eq!(e.status, Some(529));
                assert!(e
                    .body
                    .as_deref()
                    .is_some_and(|b| b.contains("overloaded_error")));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(r[2].seen.last(), Some(&Seen::Finished(Finish::Failure)));
        assert!(
            r[3].keep && r[3].seen.is_empty(),
            "a banner is evidence only"
        );
    }

    #[test]
    fn the_reported_status_and_type_make_the_http_item() {
        let r = read(&[
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Invalid API key · Fix external API key"}]},"error":"authentication_failed","is_api_error_message":true,"api_error_status":401,"api_error_type":"authentication_error"}"#,
        ]);
        match &r[0].seen[..] {
            [Seen::Error(e)] => {
                assert_eq!(e.status, Some(401));
                let body: Value =
                    serde_json::from_str(e.body.as_deref().expect("body")).expect("json");
                assert_eq!(body["error"]["type"], "authentication_error");
                assert_eq!(
                    body["error"]["message"],
                    "Invalid API key · Fix external API key"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_refused_usage_window_travels_with_the_error() {
        // Claude Code 2.1.328 signed in with a subscription, past its
        // 5-hour window (server/tests/agents/samples/claude).
        let r = read(&[
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1796621000,"rateLimitType":"five_hour","utilization":0.9}}"#,
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1796621577,"rateLimitType":"five_hour","overageStatus":"rejected","isUsingOverage":false}}"#,
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"You've hit your 5-hour limit · resets 5:32am (UTC)"}]},"error":"rate_limit","is_api_error_message":true,"api_error_status":429,"api_error":"usage_limit_reached","api_error_type":"rate_limit_error"}"#,
        ]);
        assert!(r[0].keep && r[0].seen.is_empty(), "a warning is no error");
        assert!(r[1].keep && r[1].seen.is_empty());
        match &r[2].seen[..] {
            [Seen::Error(e)] => {
                assert_eq!(e.status, Some(429));
                let body: Value =
                    serde_json::from_str(e.body.as_deref().expect("body")).expect("json");
                assert_eq!(body["error"]["type"], "rate_limit_error");
                assert_eq!(body["rate_limit_info"]["resetsAt"], 1796621577);
                assert_eq!(body["rate_limit_info"]["rateLimitType"], "five_hour");
            }
            other => panic!("{other:?}"),
        }
        // The message's own copy wins; an overloaded error carries none.
        let r = read(&[
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1,"rateLimitType":"seven_day"}}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"api_error_type":"rate_limit_error","api_error_params":{"rate_limit_info":{"status":"rejected","resetsAt":2,"rateLimitType":"five_hour"}},"result":"You've hit your 5-hour limit"}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":529,"api_error_type":"overloaded_error","result":"API Error: 529 Overloaded"}"#,
        ]);
        let body = |read: &Read| match &read.seen[0] {
            Seen::Error(e) => {
                serde_json::from_str::<Value>(e.body.as_deref().expect("body")).expect("json")
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(body(&r[1])["rate_limit_info"]["resetsAt"], 2);
        assert!(body(&r[2]).get("rate_limit_info").is_none());
    }

    #[test]
    fn partial_deltas_are_shown_once() {
        let r = read(&[
            r#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"Hel"}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"lo"}}}"#,
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"Hello"}]}}"#,
        ]);
        assert_eq!(r[0].seen, vec![Seen::Text("Hel".into())]);
        assert_eq!(r[2].seen, Vec::<Seen>::new());
    }

    #[test]
    fn an_abandoned_stream_does_not_hide_the_retrys_answer() {
        // Claude Code's text_then_cut_recovers: a stream cut after some
        // text, closed as abandoned, then the non-streaming retry's message.
        let r = read(&[
            r#"{"type":"stream_event","event":{"type":"message_start","message":{}}}"#,
            r#"{"type":"stream_event","event":{"type":"content_block_delta","delta":{"type":"text_delta","text":"PARTIAL-TEXT "}}}"#,
            r#"{"type":"stream_event","event":{"type":"message_stop","abandoned_blocks":{"api_message_id":"m1","from_block_index":0}}}"#,
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"text","text":"PONG-42"}]}}"#,
            r#"not json"#,
            r#"{"type":"assistant","message":{"model":"m","content":[{"type":"te"#,
        ]);
        assert_eq!(r[1].seen, vec![Seen::Text("PARTIAL-TEXT ".into())]);
        assert_eq!(r[3].seen, vec![Seen::Text("PONG-42\n".into())]);
        assert_eq!(r[4], Read::evidence(Vec::new()), "a banner is evidence");
        assert_eq!(
            r[5].seen,
            vec![Seen::Unreadable],
            "cut-off output fails closed"
        );
    }
}
