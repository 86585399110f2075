//! `format = "codex-json"`: `codex exec --json`, one JSON event per line.
//!
//! Real work: completed `agent_message` items and tool items
//! (`command_execution`, `file_change`, `mcp_tool_call`, `web_search`) as
//! they start. Not work: `error` events (Codex's own notices, including its
//! "Reconnecting… 2/5" retry banners), `error` items, and `turn.failed`,
//! whose message is the failure.

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

#[cfg(test)]
mod tests {
    use super::*;

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
