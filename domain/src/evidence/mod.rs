//! The evidence envelope: what an adapter collected about one failure.
//!
//! Parsing is lenient and bounded on purpose. An adapter that sends a field of
//! the wrong type, an item kind this version does not know, or a megabyte of
//! stderr must still get a classification (usually `unknown`), never a panic
//! or a rejected report: unknown evidence is exactly what the catalogue grows
//! from. Wrong-typed fields read as absent, unknown item kinds are kept as
//! [`Item::Other`] and ignored, and every list and string is cut to a fixed
//! bound while it is read. Cuts are deterministic: strings keep their prefix
//! (on a character boundary), line lists keep their *last* lines and item lists
//! their *last* items, because a failure is reported at the end of a stream.

//!
//! Reading is split in two: `lenient` holds the readers for single
//! fields (strings, integers, lines, headers, bodies, bounded JSON,
//! timestamps) and the cutting helpers; `envelope` puts them together into
//! items and the envelope.

mod envelope;
mod lenient;

pub use lenient::cut;

use chrono::{DateTime, Utc};
use envelope::InputLine;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Most items kept per envelope (the last ones).
pub const MAX_ITEMS: usize = 64;
/// Most lines kept per `stderr` / `stdout` item (the last ones).
pub const MAX_LINES: usize = 200;
/// Longest line kept, in bytes.
pub const MAX_LINE_BYTES: usize = 8 * 1024;
/// Longest body, message or text kept, in bytes.
pub const MAX_TEXT_BYTES: usize = 32 * 1024;
/// Longest identifier (route, agent, provider, model, header value), in bytes.
pub const MAX_ID_BYTES: usize = 256;
/// Most headers kept per HTTP item.
pub const MAX_HEADERS: usize = 64;
/// Deepest nesting kept inside ACP `data`.
pub const MAX_DATA_DEPTH: usize = 8;
/// Most entries kept per object or array inside ACP `data`.
pub const MAX_DATA_ENTRIES: usize = 64;

/// Lifecycle phase the failure happened in. Only `launch`,
/// `session_init` and `prompt` place a failure before any result, so only
/// they permit automatic recovery (the effect-safety gate,
/// the server's `recovery::gate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// The agent could not be started.
    Launch,
    /// The agent started but failed before it accepted the prompt.
    SessionInit,
    /// The prompt was sent; nothing came back yet.
    Prompt,
    /// Output had started: replay may repeat work.
    Stream,
    /// After the prompt may have completed.
    Teardown,
}

impl Phase {
    fn parse(s: &str) -> Option<Phase> {
        Some(match s {
            "launch" => Phase::Launch,
            "session_init" => Phase::SessionInit,
            "prompt" => Phase::Prompt,
            "stream" => Phase::Stream,
            "teardown" => Phase::Teardown,
            _ => return None,
        })
    }
}

/// A provider-supported resumable-retry guarantee (the effect-safety gate reads it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Resumable {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
}

/// One failure report. Route identity fields are optional for classification.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Evidence {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invocation_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_generation: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub occurred_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resumable: Option<Resumable>,
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<ItemSchema>))]
    pub items: Vec<Item>,
    /// Something was cut while reading (an item, line or string over its bound).
    #[serde(skip)]
    pub truncated: bool,
}

/// One observation, in the order the adapter saw it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Item {
    Http(HttpItem),
    AcpError(AcpErrorItem),
    AcpUpdate(AcpUpdateItem),
    AcpStop(AcpStopItem),
    Stderr(StreamItem),
    Stdout(StreamItem),
    ProcessExit(ProcessExitItem),
    /// An item kind this version does not know; kept so counts stay honest.
    Other(OtherItem),
}

/// An HTTP item's headers, by name (a named schema, so generators make
/// one type of it).
#[cfg(feature = "openapi")]
#[derive(Serialize, Default, utoipa::ToSchema)]
#[allow(dead_code)]
struct HttpHeaders(BTreeMap<String, String>);

/// An [`Item`] as the OpenAPI document shows it: each kind one flat object
/// tagged by `kind` (client generators read these better than the
/// `allOf` a tuple variant gives). Kinds it does not list are still read,
/// and ignored, like any item this version does not know.
#[cfg(feature = "openapi")]
#[derive(Serialize, utoipa::ToSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[schema(as = Item)]
#[allow(dead_code)]
enum ItemSchema {
    /// An HTTP response, or a request that got none (`status: null` plus
    /// `error`). Header names are read case-insensitively.
    Http {
        status: Option<u16>,
        #[serde(default)]
        headers: HttpHeaders,
        body: Option<String>,
        error: Option<String>,
    },
    /// An ACP JSON-RPC error frame; `data` a string or an object.
    AcpError {
        code: Option<i64>,
        message: Option<String>,
        data: Option<Value>,
    },
    /// An ACP session update (`agent_message_chunk`, `tool_call`,
    /// `tool_call_update`, …): the agent produced output or touched tools.
    AcpUpdate {
        update: String,
        text: Option<String>,
        status: Option<String>,
    },
    /// An ACP prompt stop reason.
    AcpStop { stop_reason: Option<String> },
    /// The last lines of the agent's stderr.
    Stderr { lines: Vec<String> },
    /// The last lines of the agent's stdout.
    Stdout { lines: Vec<String> },
    /// How the agent process ended (`signal`: `SIGKILL`, …).
    ProcessExit {
        exit_code: Option<i64>,
        signal: Option<String>,
    },
}

/// An HTTP response, or a request that got none (`status: null` plus `error`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct HttpItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Lower-cased header names.
    pub headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// An ACP JSON-RPC error frame.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AcpErrorItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A string or an object, bounded in depth and breadth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// An ACP session update (`agent_message_chunk`, `tool_call`, `tool_call_update`, …).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AcpUpdateItem {
    pub update: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
}

/// An ACP prompt stop reason.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AcpStopItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

/// Lines of a managed process stream.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct StreamItem {
    pub lines: Vec<String>,
}

/// How the agent process ended.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ProcessExitItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Upper-case signal name (`SIGKILL`); numeric signals are named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signal: Option<String>,
}

/// An item of a kind this version does not read.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct OtherItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_kind: Option<String>,
}

impl Evidence {
    /// ACP updates that show the agent already produced output or touched
    /// tools (`agent_message_chunk`, `tool_call`, `tool_call_update`). The
    /// effect-safety gate reads this; classification does not.
    pub fn effect_count(&self) -> usize {
        self.items
            .iter()
            .filter(|i| {
                matches!(i, Item::AcpUpdate(u) if matches!(
                    u.update.as_str(),
                    "agent_message_chunk" | "tool_call" | "tool_call_update"
                ))
            })
            .count()
    }
}

/// Why an input could not be read as an envelope at all.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// Not JSON, or JSON nested deeper than the parser allows.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Valid JSON, but not an object.
    #[error("an evidence envelope must be a JSON object")]
    NotAnObject,
}

impl Evidence {
    /// Reads one CLI/API input: an envelope, or an object whose `evidence`
    /// field is one.
    pub fn from_json_str(s: &str) -> Result<Evidence, EvidenceError> {
        let line: InputLine = serde_json::from_str(s).map_err(|e| {
            if e.is_data() {
                EvidenceError::NotAnObject
            } else {
                EvidenceError::Json(e)
            }
        })?;
        Ok(line.0)
    }

    /// Same as [`Evidence::from_json_str`] for an already parsed value.
    pub fn from_json_value(v: &Value) -> Result<Evidence, EvidenceError> {
        if !v.is_object() {
            return Err(EvidenceError::NotAnObject);
        }
        let line = InputLine::deserialize(v).map_err(|e| {
            if e.is_data() {
                EvidenceError::NotAnObject
            } else {
                EvidenceError::Json(e)
            }
        })?;
        Ok(line.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_types_read_as_absent() {
        let e = Evidence::from_json_str(
            r#"{"generation":"x","phase":"warp","provider_id":7,"items":[
                {"kind":"http","status":"529","headers":{"Retry-After":12},"body":{"a":1}},
                {"kind":"stderr","lines":"one\ntwo"},
                {"kind":"process_exit","exit_code":1.0,"signal":9},
                {"kind":"mystery"}, 5, "x"]}"#,
        )
        .unwrap();
        assert_eq!(e.generation, None);
        assert_eq!(e.phase, None);
        assert_eq!(e.provider_id.as_deref(), Some("7"));
        assert_eq!(e.items.len(), 4);
        let Item::Http(h) = &e.items[0] else { panic!() };
        assert_eq!(h.status, Some(529));
        assert_eq!(h.headers.get("retry-after").map(String::as_str), Some("12"));
        assert_eq!(h.body.as_deref(), Some(r#"{"a":1}"#));
        let Item::Stderr(s) = &e.items[1] else {
            panic!()
        };
        assert_eq!(s.lines, vec!["one", "two"]);
        let Item::ProcessExit(p) = &e.items[2] else {
            panic!()
        };
        assert_eq!(p.exit_code, Some(1));
        assert_eq!(p.signal.as_deref(), Some("SIGKILL"));
        assert!(matches!(e.items[3], Item::Other(_)));
    }

    #[test]
    fn bounds_cut_deterministically() {
        let lines: Vec<String> = (0..MAX_LINES + 10).map(|i| format!("l{i}")).collect();
        let items: Vec<String> = (0..MAX_ITEMS + 3)
            .map(|_| r#"{"kind":"process_exit","exit_code":1}"#.to_owned())
            .collect();
        let json = format!(
            r#"{{"items":[{{"kind":"stderr","lines":{}}},{}]}}"#,
            serde_json::to_string(&lines).unwrap(),
            items.join(",")
        );
        let e = Evidence::from_json_str(&json).unwrap();
        assert!(e.truncated);
        assert_eq!(e.items.len(), MAX_ITEMS);
        let long = "é".repeat(MAX_TEXT_BYTES);
        let e = Evidence::from_json_str(&format!(
            r#"{{"items":[{{"kind":"http","status":500,"body":"{long}"}}]}}"#
        ))
        .unwrap();
        let Item::Http(h) = &e.items[0] else { panic!() };
        assert!(h.body.as_ref().unwrap().len() <= MAX_TEXT_BYTES);
    }

    #[test]
    fn wrapper_and_non_objects() {
        let e = Evidence::from_json_str(r#"{"id":"c1","evidence":{"agent":"codex","items":[]}}"#)
            .unwrap();
        assert_eq!(e.agent.as_deref(), Some("codex"));
        assert!(matches!(
            Evidence::from_json_str("[1,2]"),
            Err(EvidenceError::NotAnObject)
        ));
        assert!(matches!(
            Evidence::from_json_str("{"),
            Err(EvidenceError::Json(_))
        ));
    }
}
