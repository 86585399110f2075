//! Readers for agents' output, one per `format`: each turns one line the
//! agent printed into what it means for recovery. The distinction that
//! matters is between real work and everything else: assistant text and
//! tool calls are *effects* (after them the prompt must not be repeated);
//! a CLI's own error notices, retry banners and synthetic "API Error"
//! messages are *evidence* for the classifier, not effects. Pure: no I/O.

pub mod claude;
pub mod codex;
pub mod codex_app;
pub mod gemini;
pub mod plain;

use super::config::Format;
use super::envelope::{http_item, stdout_item, truncate};
use domain::evidence::Item;

/// Bytes kept of one error body or message (a JSON body cut short still
/// names its type and status near the start).
pub const MAX_ERROR_BYTES: usize = 8 * 1024;

/// What a line meant.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// Assistant text, to show the user as it arrives. An effect.
    Text(String),
    /// The agent started or updated a tool call. An effect.
    Tool(String),
    /// The CLI's own notice (a retry banner, a warning). Shown as status,
    /// kept as evidence.
    Notice(String),
    /// An error the CLI reported in structured form. Evidence.
    Error(ErrorReport),
    /// The agent named its provider-native session.
    Session(String),
    /// The CLI's final word on the turn.
    Finished(Finish),
    /// A line that looks like an event but does not parse (cut short, or
    /// garbled): it may have been output, so it counts as one (fail closed).
    Unreadable,
}

/// How the turn ended, as the CLI said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    Success,
    Failure,
}

/// An error the CLI printed in structured form.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ErrorReport {
    /// The provider's HTTP status, when the CLI names it.
    pub status: Option<u16>,
    /// The provider's error body (JSON text) or, without one, the message.
    pub body: Option<String>,
    /// The CLI's message, when it is not the body itself.
    pub message: Option<String>,
}

impl ErrorReport {
    /// The evidence item: an `http` item when a status or body is known,
    /// else the message as a stdout line (it came from the CLI's stdout).
    pub fn to_item(&self) -> Item {
        let bounded = |s: &String| truncate(s, MAX_ERROR_BYTES);
        if self.status.is_some() || self.body.is_some() {
            http_item(
                self.status,
                self.body.as_ref().or(self.message.as_ref()).map(bounded),
            )
        } else {
            stdout_item(self.message.iter().map(bounded).collect())
        }
    }
}

/// A reader for one format; keeps whatever state the format needs across
/// lines (a Claude message's partial text, a Codex turn).
pub trait Reader: Send {
    /// One stdout line, without its newline. `keep` is set when the line is
    /// evidence worth keeping in the stdout tail (not the model's prose).
    fn stdout_line(&mut self, line: &str) -> Read;
}

/// What a stdout line meant, and whether it is evidence.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Read {
    pub seen: Vec<Seen>,
    /// Keep the raw line in the evidence tail.
    pub keep: bool,
}

impl Read {
    pub fn evidence(seen: Vec<Seen>) -> Read {
        Read { seen, keep: true }
    }

    pub fn work(seen: Vec<Seen>) -> Read {
        Read { seen, keep: false }
    }

    pub fn nothing() -> Read {
        Read::default()
    }
}

/// A stdout line that is not JSON: a banner or a crash trace is evidence;
/// one that starts like an event but does not parse may be cut-off output.
pub fn unparsed(line: &str) -> Read {
    if line.trim_start().starts_with('{') {
        Read::evidence(vec![Seen::Unreadable])
    } else {
        Read::evidence(Vec::new())
    }
}

/// The reader for a format (ACP has its own client, not a line reader).
pub fn reader(format: Format) -> Box<dyn Reader> {
    match format {
        Format::Plain | Format::Acp => Box::new(plain::Plain),
        Format::ClaudeStreamJson => Box::new(claude::Claude::default()),
        Format::CodexJson => Box::new(codex::Codex::default()),
        Format::CodexAppServer => Box::new(codex_app::CodexApp::default()),
        Format::GeminiStreamJson => Box::new(gemini::Gemini::default()),
    }
}

/// "API Error: 529 {…}" / "API Error (529 Overloaded)" / "… status 429 …":
/// the HTTP status and the JSON body a CLI wrote into its message.
pub fn status_and_body(text: &str) -> (Option<u16>, Option<String>) {
    let body = text.find('{').and_then(|start| {
        let candidate = text[start..].trim_end();
        serde_json::from_str::<serde_json::Value>(candidate)
            .ok()
            .map(|_| candidate.to_string())
    });
    let head = match text.find('{') {
        Some(i) => &text[..i],
        None => text,
    };
    let status = status_in(head);
    (status, body)
}

/// The first three-digit number in 400–599 after an "error"/"status" word.
fn status_in(text: &str) -> Option<u16> {
    let lower = text.to_ascii_lowercase();
    let anchor = ["api error", "status", "error", "http"]
        .iter()
        .filter_map(|w| lower.find(w).map(|i| i + w.len()))
        .min()?;
    let bytes = lower.as_bytes();
    let mut i = anchor;
    while i + 3 <= bytes.len() {
        let window = &bytes[i..i + 3];
        let boundary_before = i == 0 || !bytes[i - 1].is_ascii_digit();
        let boundary_after = i + 3 == bytes.len() || !bytes[i + 3].is_ascii_digit();
        if window.iter().all(u8::is_ascii_digit) && boundary_before && boundary_after {
            let n: u16 = lower[i..i + 3].parse().ok()?;
            return (400..600).contains(&n).then_some(n);
        }
        i += 1;
    }
    None
}

/// Text content of a JSON value that may be a string or a list of parts
/// (`[{"type": "text", "text": …}]`).
pub fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_and_body_from_cli_messages() {
        let (s, b) = status_and_body(
            r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        );
        assert_eq!(s, Some(529));
        assert!(b.expect("body").contains("overloaded_error"));
        assert_eq!(
            status_and_body("API Error (429 Too Many Requests)").0,
            Some(429)
        );
        assert_eq!(
            status_and_body("unexpected status 401 Unauthorized: bad key").0,
            Some(401)
        );
        assert_eq!(status_and_body("error: wrote 2048 bytes").0, None);
        assert_eq!(status_and_body("nothing here 500").0, None);
        assert_eq!(status_and_body("API Error: {not json").1, None);
    }
}
