//! `format = "codex-json"`: `codex exec --json`, one JSON event per line.
//!
//! Real work: completed `agent_message` items and tool items
//! (`command_execution`, `file_change`, `mcp_tool_call`, `web_search`) as
//! they start. Not work: `error` events (Codex's own notices, including its
//! "Reconnecting… 2/5" retry banners), `error` items, and `turn.failed`,
//! whose message is the failure.
//!
//! Codex prints its errors as prose only: a usage limit is "You've hit your
//! usage limit. … try again at 1:24 PM." — a local clock time, with a date
//! only when the reset is another day, never a zone. The data is in its
//! session file (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<thread
//! id>.jsonl`, which `codex resume` reads): the turn's `task_complete`
//! names the error's `codex_error_info` (`usage_limit_exceeded`, …) and the
//! `token_count` before it carries the rate-limit windows Codex read from
//! the provider's `x-codex-primary-*` / `x-codex-secondary-*` headers
//! (`used_percent`, `window_minutes`, `resets_at` in Unix seconds).
//! [`rollout_failure`] turns those into the error's body; the attempt
//! reads the file (`codex_session`).

use super::{status_and_body, unparsed, ErrorReport, Finish, Read, Reader, Seen};
use serde_json::Value;

#[derive(Default)]
pub struct Codex {
    /// Tool items already shown.
    started: std::collections::HashSet<String>,
}

fn item_id(item: &Value) -> String {
    item.get("id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

const TOOL_ITEMS: [&str; 5] = [
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "tool_call",
];

impl Reader for Codex {
    fn stdout_line(&mut self, line: &str) -> Read {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return unparsed(line);
        };
        let item = v.get("item").unwrap_or(&Value::Null);
        let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "thread.started" => Read::work(
                v.get("thread_id")
                    .and_then(Value::as_str)
                    .map(|s| vec![Seen::Session(s.to_string())])
                    .unwrap_or_default(),
            ),
            "turn.started" => Read::nothing(),
            "item.started" | "item.updated" if TOOL_ITEMS.contains(&item_type) => {
                if self.started.insert(item_id(item)) {
                    Read::work(vec![Seen::Tool(item_type.to_string())])
                } else {
                    Read::nothing()
                }
            }
            "item.completed" => match item_type {
                "agent_message" => match item.get("text").and_then(Value::as_str) {
                    Some(t) if !t.is_empty() => Read::work(vec![Seen::Text(format!("{t}\n"))]),
                    _ => Read::nothing(),
                },
                // Its start was the effect (and was shown), unless Codex
                // reports only the completion.
                t if TOOL_ITEMS.contains(&t) => {
                    if self.started.contains(&item_id(item)) {
                        Read::nothing()
                    } else {
                        Read::work(vec![Seen::Tool(t.to_string())])
                    }
                }
                "error" => Read::evidence(vec![message(item)]),
                _ => Read::nothing(),
            },
            "item.started" | "item.updated" => Read::nothing(),
            "turn.completed" => Read::work(vec![Seen::Finished(Finish::Success)]),
            "turn.failed" => {
                let error = v.get("error").unwrap_or(&Value::Null);
                Read::evidence(vec![message(error), Seen::Finished(Finish::Failure)])
            }
            "error" => Read::evidence(vec![message(&v)]),
            _ => Read::evidence(Vec::new()),
        }
    }
}

/// An event's `message` as an error, or as a notice when Codex says it is
/// retrying on its own.
fn message(v: &Value) -> Seen {
    let text = v
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let lower = text.to_ascii_lowercase();
    if lower.starts_with("reconnecting") || lower.contains("retrying") {
        return Seen::Notice(text);
    }
    let (status, body) = status_and_body(&text);
    Seen::Error(ErrorReport {
        status,
        body,
        message: Some(text),
    })
}

/// A window at or past this share of its limit refused the request.
const EXHAUSTED_PERCENT: f64 = 100.0;

/// The usage limit that failed the last failed turn in a Codex session
/// file's lines, as data: an error body with Codex's `codex_error_info`
/// (`usage_limit_exceeded`, or a per-model `model_cap`) and its message
/// and, for a usage limit, the reset of the exhausted rate-limit window
/// (`resets_at`, Unix seconds, and its `window_minutes`). When both windows
/// are exhausted the later reset is the one that lets a request through.
/// No window at its limit (a stale or warning snapshot) gives no reset:
/// the usage limit is still recognised, without invented timing. `None`
/// when the last turn was not refused by a usage limit.
pub fn rollout_failure(lines: &str) -> Option<ErrorReport> {
    let mut windows: Option<Value> = None;
    let mut failure: Option<ErrorReport> = None;
    for line in lines.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match v.get("type").and_then(Value::as_str) {
            // A new turn: an earlier turn's windows say nothing about it.
            Some("turn_context") => windows = None,
            Some("event_msg") => {
                let payload = v.get("payload").unwrap_or(&Value::Null);
                match payload.get("type").and_then(Value::as_str) {
                    Some("token_count") => {
                        if let Some(r) = payload.get("rate_limits").filter(|r| r.is_object()) {
                            windows = Some(r.clone());
                        }
                    }
                    Some("task_complete") => {
                        failure = payload
                            .get("error")
                            .filter(|e| e.is_object())
                            .and_then(|e| failed_turn(e, windows.as_ref()));
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    failure
}

pub(crate) fn failed_turn(error: &Value, windows: Option<&Value>) -> Option<ErrorReport> {
    let info = error.get("codex_error_info")?;
    // Usage limits only: for other failures the prose keeps what it has
    // (the HTTP status in "unexpected status 401 …"), which this would lose.
    let usage_limit = info.as_str() == Some("usage_limit_exceeded");
    if !usage_limit && info.get("model_cap").is_none() {
        return None;
    }
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let mut body = serde_json::json!({"error": {"message": message, "codex_error_info": info}});
    if usage_limit {
        let exhausted = ["primary", "secondary"]
            .iter()
            .filter_map(|w| windows.and_then(|r| r.get(*w)))
            .filter(|w| {
                w.get("used_percent")
                    .and_then(Value::as_f64)
                    .is_some_and(|p| p >= EXHAUSTED_PERCENT)
            })
            .filter_map(|w| Some((w.get("resets_at")?.as_i64()?, w)))
            .filter(|(at, _)| *at > 0)
            .max_by_key(|(at, _)| *at);
        if let Some((at, w)) = exhausted {
            body["error"]["resets_at"] = at.into();
            if let Some(m) = w.get("window_minutes").filter(|m| m.is_u64()) {
                body["error"]["window_minutes"] = m.clone();
            }
        }
    }
    Some(ErrorReport {
        status: None,
        body: Some(body.to_string()),
        message: Some(message.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codex 0.169.0's session file for a refused turn (trimmed): the
    /// primary window at 100 %, the weekly one at 40 %.
    const REFUSED: &str = r#"{"type":"session_meta","payload":{"id":"t-1","cli_version":"0.169.0"}}
{"type":"turn_context","payload":{"turn_id":"u-1"}}
{"type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"limit_id":"codex","primary":{"used_percent":100.0,"window_minutes":300,"resets_at":1796040600},"secondary":{"used_percent":40.0,"window_minutes":10080,"resets_at":1796732702},"plan_type":null}}}
{"type":"event_msg","payload":{"type":"task_complete","turn_id":"u-1","last_agent_message":null,"error":{"message":"You’ve hit your usage limit. … or try again at 1:24 PM.","codex_error_info":"usage_limit_exceeded"}}}
"#;

    fn body(r: &ErrorReport) -> Value {
        serde_json::from_str(r.body.as_deref().expect("body")).expect("json")
    }

    #[test]
    fn a_refused_turn_names_the_exhausted_windows_reset() {
        let r = rollout_failure(REFUSED).expect("a failure");
        assert_eq!(r.status, None, "Codex does not say the status");
        let b = body(&r);
        assert_eq!(b["error"]["codex_error_info"], "usage_limit_exceeded");
        assert_eq!(b["error"]["resets_at"], 1796040600);
        assert_eq!(b["error"]["window_minutes"], 300);
        assert!(r
            .message
            .as_deref()
            .is_some_and(|m| m.contains("usage limit")));
    }

    #[test]
    fn both_windows_exhausted_wait_for_the_later() {
        let both = REFUSED.replace(r#""used_percent":40.0"#, r#""used_percent":100.0"#);
        let b = body(&rollout_failure(&both).expect("a failure"));
        assert_eq!(b["error"]["resets_at"], 1796732702);
        assert_eq!(b["error"]["window_minutes"], 10080);
    }

    #[test]
    fn no_window_at_its_limit_gives_no_reset() {
        // A usage limit whose windows are not (or no longer) at 100 %, or a
        // turn with no snapshot: recognised, but no timing is invented.
        let warning = REFUSED.replace(r#""used_percent":100.0"#, r#""used_percent":97.5"#);
        let b = body(&rollout_failure(&warning).expect("a failure"));
        assert_eq!(b["error"]["codex_error_info"], "usage_limit_exceeded");
        assert!(b["error"].get("resets_at").is_none(), "{b}");
        // The snapshot belongs to an earlier turn.
        let stale = REFUSED.replacen(
            r#"{"type":"event_msg","payload":{"type":"task_complete""#,
            concat!(
                r#"{"type":"turn_context","payload":{"turn_id":"u-2"}}"#,
                "\n",
                r#"{"type":"event_msg","payload":{"type":"task_complete""#
            ),
            1,
        );
        let b = body(&rollout_failure(&stale).expect("a failure"));
        assert!(b["error"].get("resets_at").is_none(), "{b}");
    }

    #[test]
    fn only_usage_limits_are_taken_from_the_file() {
        // A per-model cap carries its own reset; it is kept as it is.
        let cap = REFUSED.replace(
            r#""usage_limit_exceeded""#,
            r#"{"model_cap":{"model":"gpt-5.3-codex-spark","reset_after_seconds":3600}}"#,
        );
        let b = body(&rollout_failure(&cap).expect("a failure"));
        assert_eq!(
            b["error"]["codex_error_info"]["model_cap"]["reset_after_seconds"],
            3600
        );
        assert!(b["error"].get("resets_at").is_none());
        // Other failures keep the prose's reading (its HTTP status).
        let overloaded = REFUSED.replace("usage_limit_exceeded", "server_overloaded");
        assert_eq!(rollout_failure(&overloaded), None);
        // A turn that succeeded, or an error without codex_error_info: nothing.
        let ok = r#"{"type":"event_msg","payload":{"type":"task_complete","last_agent_message":"PONG"}}"#;
        assert_eq!(rollout_failure(ok), None);
        assert_eq!(
            rollout_failure(&format!("{REFUSED}{ok}")),
            None,
            "a later turn succeeded"
        );
        let bare =
            r#"{"type":"event_msg","payload":{"type":"task_complete","error":{"message":"boom"}}}"#;
        assert_eq!(rollout_failure(bare), None);
        assert_eq!(rollout_failure("not json\n{\"cut"), None);
    }

    #[test]
    fn messages_and_tools_are_work_errors_are_evidence() {
        let mut r = Codex::default();
        assert_eq!(
            r.stdout_line(r#"{"type":"thread.started","thread_id":"t-1"}"#)
                .seen,
            vec![Seen::Session("t-1".into())]
        );
        let msg = r.stdout_line(
            r#"{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"Done."}}"#,
        );
        assert_eq!(msg.seen, vec![Seen::Text("Done.\n".into())]);
        assert!(!msg.keep);
        assert_eq!(
            r.stdout_line(r#"{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"ls"}}"#)
                .seen,
            vec![Seen::Tool("command_execution".into())]
        );
        assert_eq!(
            r.stdout_line(r#"{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"ls"}}"#),
            Read::nothing(),
            "shown once"
        );
        assert_eq!(
            r.stdout_line(r#"{"type":"item.completed","item":{"id":"i2","type":"file_change"}}"#)
                .seen,
            vec![Seen::Tool("file_change".into())],
            "a completion alone is still an effect"
        );
        let retry = r.stdout_line(r#"{"type":"error","message":"Reconnecting... 1/5"}"#);
        assert!(matches!(&retry.seen[0], Seen::Notice(_)) && retry.keep);
        let failed = r.stdout_line(
            r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: {\"error\":{\"message\":\"Incorrect API key provided\",\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}"}}"#,
        );
        match &failed.seen[..] {
            [Seen::Error(e), Seen::Finished(Finish::Failure)] => {
                assert_eq!(e.status, Some(401));
                assert!(e
                    .body
                    .as_deref()
                    .is_some_and(|b| b.contains("invalid_api_key")));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            r.stdout_line(r#"{"type":"turn.completed","usage":{}}"#)
                .seen,
            vec![Seen::Finished(Finish::Success)]
        );
    }
}
