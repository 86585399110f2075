//! `format = "gemini-stream-json"`: `gemini -p … --output-format
//! stream-json`, one JSON event per line.
//!
//! Real work: `message` events with role `assistant` and `tool_use` events.
//! Not work: the `user` message (the prompt echoed back — never evidence
//! either), `tool_result` (tool output), `error` events (Gemini CLI's own
//! notices and errors) and a `result` with status `error`.

use super::{status_and_body, text_of, unparsed, ErrorReport, Finish, Read, Reader, Seen};
use serde_json::Value;

#[derive(Default)]
pub struct Gemini {
    /// Whether the last text shown ended a line.
    open_line: bool,
}

impl Reader for Gemini {
    fn stdout_line(&mut self, line: &str) -> Read {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return unparsed(line);
        };
        match v.get("type").and_then(Value::as_str).unwrap_or("") {
            "init" => Read::work(
                v.get("session_id")
                    .and_then(Value::as_str)
                    .map(|s| vec![Seen::Session(s.to_string())])
                    .unwrap_or_default(),
            ),
            "message" => {
                if v.get("role").and_then(Value::as_str) != Some("assistant") {
                    return Read::nothing();
                }
                let text = v.get("content").map(text_of).unwrap_or_default();
                if text.is_empty() {
                    return Read::nothing();
                }
                self.open_line = !text.ends_with('\n');
                Read::work(vec![Seen::Text(text)])
            }
            "tool_use" => Read::work(vec![Seen::Tool(
                v.get("tool_name")
                    .or_else(|| v.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("tool")
                    .to_string(),
            )]),
            "tool_result" => Read::nothing(),
            "error" => {
                let text = message_of(&v);
                let warning = v.get("severity").and_then(Value::as_str) == Some("warning");
                Read::evidence(vec![if warning {
                    Seen::Notice(text)
                } else {
                    Seen::Error(report(&text))
                }])
            }
            "result" => {
                let ok = v.get("status").and_then(Value::as_str) == Some("success");
                let mut seen = Vec::new();
                if std::mem::take(&mut self.open_line) {
                    seen.push(Seen::Text("\n".into()));
                }
                if ok {
                    seen.push(Seen::Finished(Finish::Success));
                    return Read::work(seen);
                }
                if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
                    seen.push(Seen::Error(report(&message_of(e))));
                }
                seen.push(Seen::Finished(Finish::Failure));
                Read::evidence(seen)
            }
            _ => Read::evidence(Vec::new()),
        }
    }
}

fn message_of(v: &Value) -> String {
    match v.get("message") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => v.to_string(),
    }
}

fn report(text: &str) -> ErrorReport {
    let (status, body) = status_and_body(text);
    ErrorReport {
        status,
        body,
        message: Some(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echoed_prompt_is_neither_work_nor_evidence() {
        let mut r = Gemini::default();
        assert_eq!(
            r.stdout_line(r#"{"type":"message","role":"user","content":"why 429 rate limit?"}"#),
            Read::nothing()
        );
        let t = r.stdout_line(
            r#"{"type":"message","role":"assistant","content":"Because","delta":true}"#,
        );
        assert_eq!(t.seen, vec![Seen::Text("Because".into())]);
        let done = r.stdout_line(r#"{"type":"result","status":"success","stats":{}}"#);
        assert_eq!(
            done.seen,
            vec![Seen::Text("\n".into()), Seen::Finished(Finish::Success)]
        );
    }

    #[test]
    fn errors_are_evidence() {
        let mut r = Gemini::default();
        let e = r.stdout_line(
            r#"{"type":"result","status":"error","error":{"type":"FatalAuthenticationError","message":"[API Error: 400 API key not valid. Please pass a valid API key.]"}}"#,
        );
        assert!(e.keep);
        match &e.seen[..] {
            [Seen::Error(rep), Seen::Finished(Finish::Failure)] => {
                assert_eq!(rep.status, Some(400));
            }
            other => panic!("{other:?}"),
        }
    }
}
