//! `format = "codex-app-server"`: Codex's app server (`codex app-server`),
//! JSON-RPC 2.0 over stdio, one message per line — the protocol Codex's
//! IDE extensions speak. The runner is the client (`crate::codex_app`):
//! `initialize`, `initialized`, `thread/start`, `turn/start` with the
//! prompt; this module reads what the server sends back. Pure: no I/O.
//!
//! Real work: `item/agentMessage/delta` text and tool items
//! (`commandExecution`, `fileChange`, `mcpToolCall`, …) as they start.
//! Not work: an `error` notification with `willRetry: true` (Codex's own
//! "Reconnecting… 1/5"), shown as a notice.
//!
//! Unlike `codex exec --json`, the app server sends its errors as data:
//! the `error` notification and a failed `turn/completed` carry a
//! `TurnError` (`message`, `codexErrorInfo`: `usageLimitExceeded`,
//! `{"httpConnectionFailed": {"httpStatusCode": 503}}`, …), and
//! `account/rateLimits/updated` the rate-limit windows Codex read from the
//! provider's `x-codex-primary-*` / `x-codex-secondary-*` headers
//! (`usedPercent`, `windowDurationMins`, `resetsAt` in Unix seconds). A
//! failed turn's report is built from those, in the body shape
//! [`super::codex::rollout_failure`] gives a session file's, so the
//! catalogue's Codex rules read both alike.

use super::codex::failed_turn;
use super::{status_and_body, unparsed, ErrorReport, Finish, Read, Reader, Seen};
use crate::config::Permissions;
use serde_json::{json, Value};

/// One line from the app server.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// The answer to one of the runner's requests: its result, or the
    /// JSON-RPC error object.
    Response {
        id: Value,
        result: Result<Value, Value>,
    },
    /// The server asks the client something (an approval).
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// Not a JSON-RPC message.
    Other,
}

impl Message {
    pub fn parse(line: &str) -> Message {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Message::Other;
        };
        let method = v.get("method").and_then(Value::as_str).map(str::to_string);
        let params = v.get("params").cloned().unwrap_or(Value::Null);
        match (v.get("id").cloned(), method) {
            (Some(id), Some(method)) => Message::Request { id, method, params },
            (None, Some(method)) => Message::Notification { method, params },
            (Some(id), None) => Message::Response {
                id,
                result: match v.get("error") {
                    Some(e) => Err(e.clone()),
                    None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
                },
            },
            (None, None) => Message::Other,
        }
    }
}

/// Thread items that are tool activity (effects when they start).
const TOOL_ITEMS: [&str; 7] = [
    "commandExecution",
    "fileChange",
    "mcpToolCall",
    "dynamicToolCall",
    "collabAgentToolCall",
    "webSearch",
    "imageGeneration",
];

/// The app server's notifications, read across one turn.
#[derive(Default)]
pub struct CodexApp {
    /// The runner's thread, once `thread/start` answered: notifications
    /// about other threads (a sub-agent's) do not end this turn.
    thread: Option<String>,
    /// Tool items already shown.
    started: std::collections::HashSet<String>,
    /// Agent messages whose text arrived as deltas.
    streamed: std::collections::HashSet<String>,
    /// The latest rate-limit windows of this turn, in the session file's
    /// shape (`{"primary": {"used_percent", "window_minutes",
    /// "resets_at"}, "secondary": …}`).
    windows: serde_json::Map<String, Value>,
    /// The last `error` notification Codex did not retry.
    last_error: Option<Value>,
}

impl CodexApp {
    /// The thread `thread/start` created.
    pub fn set_thread(&mut self, id: &str) {
        self.thread = Some(id.to_string());
    }

    fn ours(&self, params: &Value) -> bool {
        match (&self.thread, params.get("threadId").and_then(Value::as_str)) {
            (Some(mine), Some(theirs)) => mine == theirs,
            _ => true,
        }
    }

    /// What one notification means.
    pub fn notification(&mut self, method: &str, params: &Value) -> Read {
        let item = params.get("item").unwrap_or(&Value::Null);
        let item_type = item.get("type").and_then(Value::as_str).unwrap_or("");
        let item_id = || {
            item.get("id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        match method {
            "thread/started" => Read::work(
                params
                    .pointer("/thread/id")
                    .and_then(Value::as_str)
                    .filter(|_| self.thread.is_none())
                    .map(|s| vec![Seen::Session(s.to_string())])
                    .unwrap_or_default(),
            ),
            "turn/started" if self.ours(params) => {
                // A new turn: an earlier turn's windows and errors say
                // nothing about it.
                self.windows.clear();
                self.last_error = None;
                Read::nothing()
            }
            "item/agentMessage/delta" => match params.get("delta").and_then(Value::as_str) {
                Some(d) if !d.is_empty() => {
                    if let Some(id) = params.get("itemId").and_then(Value::as_str) {
                        self.streamed.insert(id.to_string());
                    }
                    Read::work(vec![Seen::Text(d.to_string())])
                }
                _ => Read::nothing(),
            },
            "item/started" | "item/updated" if TOOL_ITEMS.contains(&item_type) => {
                if self.started.insert(item_id()) {
                    Read::work(vec![Seen::Tool(item_type.to_string())])
                } else {
                    Read::nothing()
                }
            }
            "item/completed" => match item_type {
                "agentMessage" => {
                    let text = item.get("text").and_then(Value::as_str).unwrap_or("");
                    if self.streamed.contains(&item_id()) {
                        // Its text was shown as it came; end its line.
                        Read::work(vec![Seen::Text("\n".into())])
                    } else if text.is_empty() {
                        Read::nothing()
                    } else {
                        Read::work(vec![Seen::Text(format!("{text}\n"))])
                    }
                }
                t if TOOL_ITEMS.contains(&t) => {
                    if self.started.contains(&item_id()) {
                        Read::nothing()
                    } else {
                        Read::work(vec![Seen::Tool(t.to_string())])
                    }
                }
                _ => Read::nothing(),
            },
            "account/rateLimits/updated" => {
                // A sparse update: a window it leaves out (null) keeps the
                // last one seen.
                let snapshot = params.get("rateLimits").unwrap_or(&Value::Null);
                for name in ["primary", "secondary"] {
                    if let Some(w) = snapshot.get(name).filter(|w| w.is_object()) {
                        self.windows.insert(name.to_string(), window(w));
                    }
                }
                Read::nothing()
            }
            "error" if self.ours(params) => {
                let error = params.get("error").cloned().unwrap_or(Value::Null);
                let text = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if params.get("willRetry").and_then(Value::as_bool) == Some(true) {
                    Read::evidence(vec![Seen::Notice(text)])
                } else {
                    // The turn's end repeats it (with the windows by then).
                    self.last_error = Some(error);
                    Read::evidence(Vec::new())
                }
            }
            "turn/completed" if self.ours(params) => {
                let turn = params.get("turn").unwrap_or(&Value::Null);
                match turn.get("status").and_then(Value::as_str) {
                    Some("completed") => Read::work(vec![Seen::Finished(Finish::Success)]),
                    _ => {
                        let error = turn
                            .get("error")
                            .filter(|e| e.is_object())
                            .cloned()
                            .or_else(|| self.last_error.take());
                        let mut seen: Vec<Seen> = error
                            .map(|e| Seen::Error(self.report(&e)))
                            .into_iter()
                            .collect();
                        seen.push(Seen::Finished(Finish::Failure));
                        Read::evidence(seen)
                    }
                }
            }
            "warning" | "configWarning" | "deprecationNotice" | "guardianWarning" => {
                let text = ["message", "summary"]
                    .iter()
                    .find_map(|k| params.get(*k).and_then(Value::as_str))
                    .unwrap_or("");
                if text.is_empty() {
                    Read::nothing()
                } else {
                    Read::evidence(vec![Seen::Notice(text.to_string())])
                }
            }
            _ => Read::nothing(),
        }
    }

    /// The error Codex reported without retrying, when the turn never
    /// completed (the server exited first).
    pub fn pending_failure(&self) -> Option<ErrorReport> {
        self.last_error.as_ref().map(|e| self.report(e))
    }

    /// A failed turn's `TurnError` as the report: a usage limit (with the
    /// exhausted window's reset) exactly as a session file's, else the
    /// message read as `codex exec --json`'s, with the HTTP status
    /// `codexErrorInfo` names when the prose does not.
    pub fn report(&self, error: &Value) -> ErrorReport {
        let message = error.get("message").and_then(Value::as_str).unwrap_or("");
        let info = error
            .get("codexErrorInfo")
            .filter(|i| !i.is_null())
            .map(snake);
        if let Some(info) = &info {
            let as_session = json!({"message": message, "codex_error_info": info});
            let windows = Value::Object(self.windows.clone());
            if let Some(report) = failed_turn(&as_session, Some(&windows)) {
                return report;
            }
        }
        let details = error
            .get("additionalDetails")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty() && *d != message);
        let text = match details {
            Some(d) => format!("{message}\n{d}"),
            None => message.to_string(),
        };
        let data_status = info
            .as_ref()
            .and_then(Value::as_object)
            .and_then(|o| o.values().next())
            .and_then(|v| v.get("http_status_code"))
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .filter(|s| (400..600).contains(s));
        if text.is_empty() {
            return ErrorReport {
                status: data_status,
                body: None,
                message: None,
            };
        }
        let (status, body) = status_and_body(&text);
        ErrorReport {
            status: status.or(data_status),
            body,
            message: Some(text),
        }
    }
}

impl Reader for CodexApp {
    /// One line of the server's stdout: its notifications as above;
    /// requests and responses are the client's (nothing here).
    fn stdout_line(&mut self, line: &str) -> Read {
        match Message::parse(line) {
            Message::Notification { method, params } => self.notification(&method, &params),
            Message::Other => unparsed(line),
            _ => Read::nothing(),
        }
    }
}

/// An app-server window in the session file's names.
fn window(w: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for (from, to) in [
        ("usedPercent", "used_percent"),
        ("windowDurationMins", "window_minutes"),
        ("resetsAt", "resets_at"),
    ] {
        if let Some(v) = w.get(from).filter(|v| !v.is_null()) {
            out.insert(to.to_string(), v.clone());
        }
    }
    Value::Object(out)
}

/// `codexErrorInfo` in the session file's spelling: `usageLimitExceeded`
/// → `usage_limit_exceeded`, object keys alike.
fn snake(v: &Value) -> Value {
    fn word(s: &str) -> String {
        let mut out = String::with_capacity(s.len() + 4);
        for c in s.chars() {
            if c.is_ascii_uppercase() {
                if !out.is_empty() {
                    out.push('_');
                }
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c);
            }
        }
        out
    }
    match v {
        Value::String(s) => Value::String(word(s)),
        Value::Object(o) => Value::Object(o.iter().map(|(k, v)| (word(k), snake(v))).collect()),
        other => other.clone(),
    }
}

/// How the runner answers one of the server's requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The JSON-RPC `result`, or the `error` object when the runner cannot
    /// answer the request at all.
    pub result: Result<Value, Value>,
    /// What was asked, for the user (`None`: not an approval).
    pub title: Option<String>,
    pub allowed: bool,
}

/// The answer to a server request: approvals from the configuration as the
/// ACP path answers permission requests (deny unless allowed; with
/// `allow_listed`, a command is the ACP kind `execute`, a file change
/// `edit`, a request for more sandbox permissions `other`). Questions for
/// a person (user input, an MCP server's elicitation) are declined: the
/// runner has no one to ask.
pub fn answer(
    method: &str,
    params: &Value,
    permissions: Permissions,
    allow_tools: &[String],
) -> Answer {
    let allows = |kind: &str| match permissions {
        Permissions::Deny => false,
        Permissions::AllowAll => true,
        Permissions::AllowListed => allow_tools.iter().any(|t| t == kind),
    };
    let text = |k: &str| params.get(k).and_then(Value::as_str).map(str::to_string);
    let approval = |kind: &str, title: String, yes: Value, no: Value| {
        let allowed = allows(kind);
        Answer {
            result: Ok(if allowed { yes } else { no }),
            title: Some(title),
            allowed,
        }
    };
    match method {
        "item/commandExecution/requestApproval" => approval(
            "execute",
            text("command").unwrap_or_else(|| "a command".into()),
            json!({"decision": "accept"}),
            json!({"decision": "decline"}),
        ),
        "item/fileChange/requestApproval" => approval(
            "edit",
            text("reason").unwrap_or_else(|| "a file change".into()),
            json!({"decision": "accept"}),
            json!({"decision": "decline"}),
        ),
        "item/permissions/requestApproval" => approval(
            "other",
            text("reason").unwrap_or_else(|| "more sandbox permissions".into()),
            json!({"permissions": params.get("permissions").cloned().unwrap_or(json!({})), "scope": "turn"}),
            json!({"permissions": {}}),
        ),
        "execCommandApproval" => approval(
            "execute",
            params
                .get("command")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .unwrap_or_else(|| "a command".into()),
            json!({"decision": "approved"}),
            json!({"decision": "denied"}),
        ),
        "applyPatchApproval" => approval(
            "edit",
            text("reason").unwrap_or_else(|| "a file change".into()),
            json!({"decision": "approved"}),
            json!({"decision": "denied"}),
        ),
        "mcpServer/elicitation/request" => Answer {
            result: Ok(json!({"action": "decline"})),
            title: Some(text("message").unwrap_or_else(|| "an MCP server's question".into())),
            allowed: false,
        },
        _ => Answer {
            result: Err(json!({
                "code": -32601,
                "message": format!("kandev-recovery does not answer `{method}`"),
            })),
            title: None,
            allowed: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `codex app-server` 0.169.0 against a provider that refused the turn
    /// with a ChatGPT-plan usage limit (429 `usage_limit_reached` and the
    /// `x-codex-primary-*` / `x-codex-secondary-*` headers: the 5-hour
    /// window at 100 %, the weekly one at 40 %), as recorded (trimmed to
    /// the notifications that matter).
    const USAGE_LIMIT: &str = r#"{"method":"turn/started","params":{"threadId":"01a251ad-dda4-7841-b18a-c13c5ad6f04d","turn":{"id":"01a251ad-ddd3-7213-b4be-dc54c79f5d9d","rootTurnId":"01a251ad-ddd3-7213-b4be-dc54c79f5d9d","items":[],"itemsView":"notLoaded","status":"inProgress","error":null,"startedAt":1796666678,"completedAt":null,"durationMs":null}},"emittedAtMs":1796666678799}
{"method":"account/rateLimits/updated","params":{"rateLimits":{"limitId":"codex","limitName":null,"normalModelSlug":null,"primary":{"usedPercent":100,"windowDurationMins":300,"resetsAt":1796670278},"secondary":{"usedPercent":40,"windowDurationMins":10080,"resetsAt":1796756678},"credits":null,"individualLimit":null,"spendControlReached":null,"planType":null,"rateLimitReachedType":null}},"emittedAtMs":1796666678954}
{"method":"thread/status/changed","params":{"threadId":"01a251ad-dda4-7841-b18a-c13c5ad6f04d","status":{"type":"systemError"}},"emittedAtMs":1796666678954}
{"method":"error","params":{"error":{"message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 7:04 PM.","codexErrorInfo":"usageLimitExceeded","additionalDetails":null,"misalignment":null},"willRetry":false,"threadId":"01a251ad-dda4-7841-b18a-c13c5ad6f04d","turnId":"01a251ad-ddd3-7213-b4be-dc54c79f5d9d"},"emittedAtMs":1796666678954}
{"method":"turn/completed","params":{"threadId":"01a251ad-dda4-7841-b18a-c13c5ad6f04d","turn":{"id":"01a251ad-ddd3-7213-b4be-dc54c79f5d9d","rootTurnId":"01a251ad-ddd3-7213-b4be-dc54c79f5d9d","items":[],"itemsView":"notLoaded","status":"failed","error":{"message":"You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/usage to purchase more credits or try again at 7:04 PM.","codexErrorInfo":"usageLimitExceeded","additionalDetails":null,"misalignment":null},"startedAt":1796666678,"completedAt":1796666678,"durationMs":213}},"emittedAtMs":1796666678968}
"#;

    /// A 503 "overloaded" with Codex's own retries off, as recorded.
    const OVERLOADED: &str = r#"{"method":"error","params":{"error":{"message":"unexpected status 503 Service Unavailable: The server is overloaded or not ready yet., url: http://127.0.0.1:18772/v1/responses","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":503}},"additionalDetails":null,"misalignment":null},"willRetry":false,"threadId":"01a251ad-ed19-77c0-abf9-fe28e5aa0b08","turnId":"01a251ad-ed2e-7240-a4dd-400d69248cc2"},"emittedAtMs":1796666682781}
{"method":"turn/completed","params":{"threadId":"01a251ad-ed19-77c0-abf9-fe28e5aa0b08","turn":{"id":"01a251ad-ed2e-7240-a4dd-400d69248cc2","rootTurnId":"01a251ad-ed2e-7240-a4dd-400d69248cc2","items":[],"itemsView":"notLoaded","status":"failed","error":{"message":"unexpected status 503 Service Unavailable: The server is overloaded or not ready yet., url: http://127.0.0.1:18772/v1/responses","codexErrorInfo":{"httpConnectionFailed":{"httpStatusCode":503}},"additionalDetails":null,"misalignment":null},"startedAt":1796666682,"completedAt":1796666682,"durationMs":110}},"emittedAtMs":1796666682790}
"#;

    /// The same 503 once with one stream retry allowed (`stream_max_retries
    /// = 1`): Codex says it reconnects (`willRetry: true`), then answers.
    const RETRIED_THEN_ANSWERED: &str = r#"{"method":"error","params":{"error":{"message":"Reconnecting... 1/1","codexErrorInfo":{"responseStreamDisconnected":{"httpStatusCode":503}},"additionalDetails":"unexpected status 503 Service Unavailable: The server is overloaded or not ready yet., url: http://127.0.0.1:18775/v1/responses","misalignment":null},"willRetry":true,"threadId":"01a251ae-0db7-7690-b50d-784dc5ae81f5","turnId":"01a251ae-0dc7-7030-b3f4-ff9ab29e5db8"},"emittedAtMs":1796666691085}
{"method":"item/started","params":{"item":{"type":"agentMessage","moderation":null,"id":"msg_fake_1","text":"","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":1796666691293,"completedAtMs":null},"threadId":"01a251ae-0db7-7690-b50d-784dc5ae81f5","turnId":"01a251ae-0dc7-7030-b3f4-ff9ab29e5db8","startedAtMs":1796666691293},"emittedAtMs":1796666691293}
{"method":"item/agentMessage/delta","params":{"threadId":"01a251ae-0db7-7690-b50d-784dc5ae81f5","turnId":"01a251ae-0dc7-7030-b3f4-ff9ab29e5db8","itemId":"msg_fake_1","delta":"PONG-42"},"emittedAtMs":1796666691293}
{"method":"item/completed","params":{"item":{"type":"agentMessage","moderation":null,"id":"msg_fake_1","text":"PONG-42","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":1796666691293,"completedAtMs":1796666691293},"threadId":"01a251ae-0db7-7690-b50d-784dc5ae81f5","turnId":"01a251ae-0dc7-7030-b3f4-ff9ab29e5db8","contentTokenCount":null,"completedAtMs":1796666691293},"emittedAtMs":1796666691295}
{"method":"account/rateLimits/updated","params":{"rateLimits":{"limitId":"codex","limitName":null,"normalModelSlug":null,"primary":null,"secondary":null,"credits":null,"individualLimit":null,"spendControlReached":null,"planType":null,"rateLimitReachedType":null}},"emittedAtMs":1796666691297}
{"method":"turn/completed","params":{"threadId":"01a251ae-0db7-7690-b50d-784dc5ae81f5","turn":{"id":"01a251ae-0dc7-7030-b3f4-ff9ab29e5db8","rootTurnId":"01a251ae-0dc7-7030-b3f4-ff9ab29e5db8","items":[{"type":"agentMessage","moderation":null,"id":"msg_fake_1","text":"PONG-42","phase":null,"memoryCitation":null,"delivery":null,"questions":null,"startedAtMs":1796666691293,"completedAtMs":1796666691293}],"itemsView":"summary","status":"completed","error":null,"startedAt":1796666691,"completedAt":1796666691,"durationMs":280}},"emittedAtMs":1796666691302}
"#;

    /// Every line through one reader, what each meant in order.
    fn read_all(reader: &mut CodexApp, lines: &str) -> Vec<Seen> {
        lines
            .lines()
            .flat_map(|l| reader.stdout_line(l).seen)
            .collect()
    }

    fn failure(seen: &[Seen]) -> &ErrorReport {
        match seen {
            [.., Seen::Error(e), Seen::Finished(Finish::Failure)] => e,
            other => panic!("not a failed turn: {other:?}"),
        }
    }

    fn body(r: &ErrorReport) -> Value {
        serde_json::from_str(r.body.as_deref().expect("body")).expect("json")
    }

    #[test]
    fn a_usage_limit_names_the_exhausted_windows_reset() {
        let mut r = CodexApp::default();
        r.set_thread("01a251ad-dda4-7841-b18a-c13c5ad6f04d");
        let seen = read_all(&mut r, USAGE_LIMIT);
        let e = failure(&seen);
        assert_eq!(e.status, None, "Codex does not say the status");
        let b = body(e);
        // The body a session file's task_complete gives (format::codex).
        assert_eq!(b["error"]["codex_error_info"], "usage_limit_exceeded");
        assert_eq!(b["error"]["resets_at"], 1796670278);
        assert_eq!(b["error"]["window_minutes"], 300);
        assert!(b["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("You’ve hit your usage limit.")));
        // The same refusal through a session file reads the same.
        let session = format!(
            "{}\n{}\n",
            r#"{"type":"event_msg","payload":{"type":"token_count","rate_limits":{"primary":{"used_percent":100.0,"window_minutes":300,"resets_at":1796670278},"secondary":{"used_percent":40.0,"window_minutes":10080,"resets_at":1796756678}}}}"#,
            json!({"type": "event_msg", "payload": {"type": "task_complete", "error": {
                "message": b["error"]["message"], "codex_error_info": "usage_limit_exceeded"}}})
        );
        let from_file = super::super::codex::rollout_failure(&session).expect("a failure");
        assert_eq!(body(&from_file), b);
        // Both windows exhausted: the later reset lets a request through.
        let both = USAGE_LIMIT.replace(r#""usedPercent":40"#, r#""usedPercent":100"#);
        let b = body(failure(&read_all(&mut CodexApp::default(), &both)));
        assert_eq!(b["error"]["resets_at"], 1796756678);
        assert_eq!(b["error"]["window_minutes"], 10080);
    }

    #[test]
    fn no_window_at_its_limit_gives_no_reset() {
        // Recognised as a usage limit, but no timing is invented.
        let warning = USAGE_LIMIT.replace(r#""usedPercent":100"#, r#""usedPercent":97"#);
        let b = body(failure(&read_all(&mut CodexApp::default(), &warning)));
        assert_eq!(b["error"]["codex_error_info"], "usage_limit_exceeded");
        assert!(b["error"].get("resets_at").is_none(), "{b}");
        // No windows at all (a provider without the headers).
        let none: String = USAGE_LIMIT
            .lines()
            .filter(|l| !l.contains("account/rateLimits/updated"))
            .map(|l| format!("{l}\n"))
            .collect();
        let b = body(failure(&read_all(&mut CodexApp::default(), &none)));
        assert!(b["error"].get("resets_at").is_none(), "{b}");
        // Windows from before this turn started say nothing about it.
        let lines: Vec<&str> = USAGE_LIMIT.lines().collect();
        let stale = [lines[1], lines[0], lines[3], lines[4]].join("\n");
        let b = body(failure(&read_all(&mut CodexApp::default(), &stale)));
        assert!(b["error"].get("resets_at").is_none(), "{b}");
        // A later sparse update without windows keeps the last ones seen.
        let sparse = USAGE_LIMIT.replacen(
            r#"{"method":"thread/status/changed""#,
            &format!(
                "{}\n{}",
                r#"{"method":"account/rateLimits/updated","params":{"rateLimits":{"limitId":"codex","primary":null,"secondary":null}}}"#,
                r#"{"method":"thread/status/changed""#
            ),
            1,
        );
        let b = body(failure(&read_all(&mut CodexApp::default(), &sparse)));
        assert_eq!(b["error"]["resets_at"], 1796670278);
    }

    #[test]
    fn an_overload_keeps_its_status() {
        let seen = read_all(&mut CodexApp::default(), OVERLOADED);
        let e = failure(&seen);
        assert_eq!(e.status, Some(503));
        assert!(e
            .message
            .as_deref()
            .is_some_and(|m| m.contains("The server is overloaded")));
        // One report for the error and the turn's end that repeats it.
        assert_eq!(
            seen.iter().filter(|s| matches!(s, Seen::Error(_))).count(),
            1
        );
        // The status from codexErrorInfo when the prose has none.
        let bare = OVERLOADED.replace(
            "unexpected status 503 Service Unavailable: The server is overloaded or not ready yet.",
            "The server is overloaded or not ready yet.",
        );
        let e = failure(&read_all(&mut CodexApp::default(), &bare)).clone();
        assert_eq!(e.status, Some(503));
        assert_eq!(e.body, None);
        // Other kinds keep the prose's reading, as `codex exec --json`'s.
        let server = OVERLOADED.replace(
            r#"{"httpConnectionFailed":{"httpStatusCode":503}}"#,
            r#""serverOverloaded""#,
        );
        assert_eq!(
            failure(&read_all(&mut CodexApp::default(), &server)).status,
            Some(503)
        );
    }

    #[test]
    fn a_retry_codex_announces_then_an_answer_is_no_failure() {
        let mut r = CodexApp::default();
        let reads: Vec<Read> = RETRIED_THEN_ANSWERED
            .lines()
            .map(|l| r.stdout_line(l))
            .collect();
        assert!(
            matches!(&reads[0].seen[..], [Seen::Notice(n)] if n == "Reconnecting... 1/1"),
            "{:?}",
            reads[0]
        );
        assert!(reads[0].keep, "the retry banner is evidence");
        let seen: Vec<&Seen> = reads.iter().flat_map(|r| &r.seen).collect();
        assert!(
            !seen.iter().any(|s| matches!(s, Seen::Error(_))),
            "{seen:?}"
        );
        assert_eq!(
            seen[1..],
            [
                &Seen::Text("PONG-42".into()),
                &Seen::Text("\n".into()),
                &Seen::Finished(Finish::Success)
            ]
        );
        assert_eq!(r.pending_failure(), None);
        assert!(!reads[2].keep, "the model's text is not evidence");
    }

    #[test]
    fn tools_are_effects_once_and_other_threads_do_not_end_the_turn() {
        let mut r = CodexApp::default();
        assert_eq!(
            r.stdout_line(r#"{"method":"thread/started","params":{"thread":{"id":"t-1"}}}"#)
                .seen,
            vec![Seen::Session("t-1".into())]
        );
        r.set_thread("t-1");
        let started = r#"{"method":"item/started","params":{"threadId":"t-1","item":{"type":"commandExecution","id":"call_1","command":"/bin/bash -lc 'echo hi'","status":"inProgress"}}}"#;
        assert_eq!(
            r.stdout_line(started).seen,
            vec![Seen::Tool("commandExecution".into())]
        );
        assert_eq!(
            r.stdout_line(&started.replace("item/started", "item/completed")),
            Read::nothing(),
            "shown once"
        );
        assert_eq!(
            r.stdout_line(r#"{"method":"item/completed","params":{"threadId":"t-1","item":{"type":"fileChange","id":"call_2"}}}"#)
                .seen,
            vec![Seen::Tool("fileChange".into())],
            "a completion alone is still an effect"
        );
        assert_eq!(
            r.stdout_line(r#"{"method":"item/completed","params":{"threadId":"t-1","item":{"type":"agentMessage","id":"m","text":"Done."}}}"#)
                .seen,
            vec![Seen::Text("Done.\n".into())]
        );
        assert_eq!(
            r.stdout_line(r#"{"method":"item/completed","params":{"threadId":"t-1","item":{"type":"reasoning","id":"r"}}}"#),
            Read::nothing()
        );
        // A sub-agent's thread ending is not this turn's end.
        assert_eq!(
            r.stdout_line(r#"{"method":"turn/completed","params":{"threadId":"t-2","turn":{"id":"u","status":"failed","error":{"message":"boom"}}}}"#)
                .seen,
            Vec::<Seen>::new()
        );
        // An interrupted turn without an error is a failure with nothing
        // to add; requests and responses are the client's.
        assert_eq!(
            r.stdout_line(r#"{"method":"turn/completed","params":{"threadId":"t-1","turn":{"id":"u","status":"interrupted","error":null}}}"#)
                .seen,
            vec![Seen::Finished(Finish::Failure)]
        );
        assert_eq!(
            r.stdout_line(
                r#"{"id":7,"method":"item/commandExecution/requestApproval","params":{}}"#
            ),
            Read::nothing()
        );
        assert_eq!(r.stdout_line("not json").seen, Vec::<Seen>::new());
        assert_eq!(r.stdout_line(r#"{"method":"#).seen, vec![Seen::Unreadable]);
    }

    #[test]
    fn an_error_the_server_did_not_outlive_is_still_reported() {
        let mut r = CodexApp::default();
        let lines: Vec<&str> = USAGE_LIMIT.lines().collect();
        read_all(&mut r, &lines[..4].join("\n"));
        let e = r.pending_failure().expect("the error notification");
        assert_eq!(body(&e)["error"]["resets_at"], 1796670278);
    }

    #[test]
    fn messages_parse_by_their_fields() {
        assert_eq!(
            Message::parse(r#"{"id":0,"result":{"userAgent":"x"}}"#),
            Message::Response {
                id: json!(0),
                result: Ok(json!({"userAgent": "x"}))
            }
        );
        assert_eq!(
            Message::parse(r#"{"id":2,"error":{"code":-32600,"message":"bad"}}"#),
            Message::Response {
                id: json!(2),
                result: Err(json!({"code": -32600, "message": "bad"}))
            }
        );
        assert!(matches!(
            Message::parse(r#"{"id":"a","method":"execCommandApproval","params":{}}"#),
            Message::Request { .. }
        ));
        assert_eq!(Message::parse("[1]"), Message::Other);
    }

    #[test]
    fn approvals_follow_the_configuration() {
        let command = json!({"threadId": "t", "turnId": "u", "itemId": "i", "command": "touch made-by-agent.txt"});
        let deny = answer(
            "item/commandExecution/requestApproval",
            &command,
            Permissions::Deny,
            &[],
        );
        assert_eq!(deny.result, Ok(json!({"decision": "decline"})));
        assert_eq!(deny.title.as_deref(), Some("touch made-by-agent.txt"));
        assert!(!deny.allowed);
        let all = answer(
            "item/commandExecution/requestApproval",
            &command,
            Permissions::AllowAll,
            &[],
        );
        assert_eq!(all.result, Ok(json!({"decision": "accept"})));
        assert!(all.allowed);
        // allow_listed by ACP kind: a file change is `edit`.
        let edit = vec!["edit".to_string()];
        let patch = answer(
            "item/fileChange/requestApproval",
            &json!({}),
            Permissions::AllowListed,
            &edit,
        );
        assert_eq!(patch.result, Ok(json!({"decision": "accept"})));
        let exec = answer(
            "item/commandExecution/requestApproval",
            &command,
            Permissions::AllowListed,
            &edit,
        );
        assert_eq!(exec.result, Ok(json!({"decision": "decline"})));
        // The older approval requests use the older words.
        assert_eq!(
            answer(
                "execCommandApproval",
                &json!({"command": ["rm", "-rf", "x"]}),
                Permissions::Deny,
                &[]
            ),
            Answer {
                result: Ok(json!({"decision": "denied"})),
                title: Some("rm -rf x".into()),
                allowed: false
            }
        );
        assert_eq!(
            answer("applyPatchApproval", &json!({}), Permissions::AllowAll, &[]).result,
            Ok(json!({"decision": "approved"}))
        );
        // More sandbox permissions: none granted unless allowed.
        let wants = json!({"permissions": {"network": {"enabled": true}}});
        assert_eq!(
            answer(
                "item/permissions/requestApproval",
                &wants,
                Permissions::Deny,
                &[]
            )
            .result,
            Ok(json!({"permissions": {}}))
        );
        assert_eq!(
            answer(
                "item/permissions/requestApproval",
                &wants,
                Permissions::AllowAll,
                &[]
            )
            .result,
            Ok(json!({"permissions": {"network": {"enabled": true}}, "scope": "turn"}))
        );
        // Questions for a person are declined, whatever the configuration.
        assert_eq!(
            answer(
                "mcpServer/elicitation/request",
                &json!({}),
                Permissions::AllowAll,
                &[]
            )
            .result,
            Ok(json!({"action": "decline"}))
        );
        let other = answer(
            "item/tool/requestUserInput",
            &json!({}),
            Permissions::AllowAll,
            &[],
        );
        assert!(other.result.is_err() && other.title.is_none());
    }

    #[test]
    fn error_info_in_the_session_files_spelling() {
        assert_eq!(
            snake(&json!("usageLimitExceeded")),
            json!("usage_limit_exceeded")
        );
        assert_eq!(
            snake(&json!({"httpConnectionFailed": {"httpStatusCode": 503}})),
            json!({"http_connection_failed": {"http_status_code": 503}})
        );
    }
}
