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

use chrono::{DateTime, TimeZone, Utc};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

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

/// Lifecycle phase the failure happened in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Launch,
    SessionInit,
    Prompt,
    Stream,
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
pub struct Resumable {
    pub provider_session_id: Option<String>,
    pub generation: Option<u64>,
}

/// One failure report. Route identity fields are optional for classification.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Evidence {
    pub route_id: Option<String>,
    pub generation: Option<u64>,
    pub invocation_id: Option<String>,
    pub prompt_generation: Option<u64>,
    pub phase: Option<Phase>,
    pub agent: Option<String>,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    pub occurred_at: Option<DateTime<Utc>>,
    pub resumable: Option<Resumable>,
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

/// An HTTP response, or a request that got none (`status: null` plus `error`).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct HttpItem {
    pub status: Option<u16>,
    /// Lower-cased header names.
    pub headers: BTreeMap<String, String>,
    pub body: Option<String>,
    pub error: Option<String>,
}

/// An ACP JSON-RPC error frame.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AcpErrorItem {
    pub code: Option<i64>,
    pub message: Option<String>,
    /// A string or an object, bounded in depth and breadth.
    pub data: Option<Value>,
}

/// An ACP session update (`agent_message_chunk`, `tool_call`, `tool_call_update`, …).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AcpUpdateItem {
    pub update: String,
    pub text: Option<String>,
    pub status: Option<String>,
}

/// An ACP prompt stop reason.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct AcpStopItem {
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
    pub exit_code: Option<i64>,
    /// Upper-case signal name (`SIGKILL`); numeric signals are named.
    pub signal: Option<String>,
}

/// An item of a kind this version does not read.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct OtherItem {
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

// ---------------------------------------------------------------------------
// Lenient visitors

/// The `Visitor` methods for input shapes a field does not use: each answers
/// `$value` (the field read as absent), so a wrong shape never fails the
/// envelope. `otherwise!(LInt(None); bool unit none)`.
macro_rules! otherwise {
    ($value:expr; $($shape:ident)+) => { $( otherwise!(@ $shape $value); )+ };
    (@ str $v:expr) => { fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> { Ok($v) } };
    (@ i64 $v:expr) => { fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> { Ok($v) } };
    (@ u64 $v:expr) => { fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> { Ok($v) } };
    (@ f64 $v:expr) => { fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> { Ok($v) } };
    (@ bool $v:expr) => { fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> { Ok($v) } };
    (@ unit $v:expr) => { fn visit_unit<E>(self) -> Result<Self::Value, E> { Ok($v) } };
    (@ none $v:expr) => { fn visit_none<E>(self) -> Result<Self::Value, E> { Ok($v) } };
}

// ---------------------------------------------------------------------------
// Bounded string helpers

/// Cuts `s` to at most `max` bytes on a character boundary.
pub(crate) fn cut(s: &str, max: usize) -> (&str, bool) {
    if s.len() <= max {
        return (s, false);
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], true)
}

fn owned_cut(s: &str, max: usize, truncated: &mut bool) -> String {
    let (c, t) = cut(s, max);
    *truncated |= t;
    c.to_owned()
}

/// [`owned_cut`] for a string already owned: cut in place, no copy.
fn cut_in_place(mut s: String, max: usize, truncated: &mut bool) -> String {
    let (c, t) = cut(&s, max);
    let len = c.len();
    *truncated |= t;
    s.truncate(len);
    s
}

// ---------------------------------------------------------------------------
// Lenient field readers. Each accepts any JSON and keeps what it understands.

/// A string field; numbers and booleans read as their text, anything else as absent.
struct LStr<const MAX: usize>(Option<String>, bool);

impl<'de, const MAX: usize> Deserialize<'de> for LStr<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const MAX: usize>;
        impl<'de, const MAX: usize> Visitor<'de> for V<MAX> {
            type Value = LStr<MAX>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                let mut t = false;
                let s = owned_cut(v, MAX, &mut t);
                Ok(LStr(Some(s), t))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LStr(Some(v.to_string()), false))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LStr(Some(v.to_string()), false))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LStr(Some(v.to_string()), false))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(LStr(Some(v.to_string()), false))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(LStr(None, false))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(LStr(None, false))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LStr(None, false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LStr(None, false))
            }
        }
        d.deserialize_any(V::<MAX>)
    }
}

/// An integer field; integral floats and numeric strings are accepted.
struct LInt(Option<i64>);

impl<'de> Deserialize<'de> for LInt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LInt;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E>(self, v: i64) -> Result<LInt, E> {
                Ok(LInt(Some(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<LInt, E> {
                Ok(LInt(i64::try_from(v).ok()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<LInt, E> {
                let ok = v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15;
                Ok(LInt(ok.then_some(v as i64)))
            }
            fn visit_str<E>(self, v: &str) -> Result<LInt, E> {
                Ok(LInt(v.trim().parse().ok()))
            }
            otherwise!(LInt(None); bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LInt, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LInt, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LInt(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LInt, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LInt(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Lines of a stream: an array (non-strings read as text or skipped) or one
/// string split on newlines. Keeps the last [`MAX_LINES`].
struct LLines(Vec<String>, bool);

impl<'de> Deserialize<'de> for LLines {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LLines;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<LLines, E> {
                let mut t = false;
                let mut q = VecDeque::new();
                for line in v.lines() {
                    push_line(&mut q, line, &mut t);
                }
                Ok(LLines(q.into(), t))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LLines, A::Error> {
                let mut t = false;
                // Room for a typical stream's lines without regrowing.
                let mut q = VecDeque::with_capacity(16);
                while let Some(LStr::<MAX_LINE_BYTES>(s, cut)) = a.next_element()? {
                    t |= cut;
                    match s {
                        // One line, already bounded: keep the string as read.
                        Some(s) if !s.contains('\n') && !s.ends_with('\r') => {
                            if q.len() == MAX_LINES {
                                q.pop_front();
                                t = true;
                            }
                            q.push_back(s);
                        }
                        Some(s) => push_line(&mut q, &s, &mut t),
                        None => {}
                    }
                }
                Ok(LLines(q.into(), t))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LLines, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LLines(Vec::new(), false))
            }
            otherwise!(LLines(Vec::new(), false); i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LLines, D2::Error> {
                d.deserialize_any(self)
            }
        }
        d.deserialize_any(V)
    }
}

fn push_line(q: &mut VecDeque<String>, line: &str, t: &mut bool) {
    // One JSON string may itself hold several lines.
    for part in line.split('\n') {
        if q.len() == MAX_LINES {
            q.pop_front();
            *t = true;
        }
        let part = part.strip_suffix('\r').unwrap_or(part);
        q.push_back(owned_cut(part, MAX_LINE_BYTES, t));
    }
}

/// Headers: an object of string, number or string-array values. Names are
/// lower-cased; the first [`MAX_HEADERS`] are kept.
struct LHeaders(BTreeMap<String, String>, bool);

impl<'de> Deserialize<'de> for LHeaders {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LHeaders;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LHeaders, A::Error> {
                let mut t = false;
                let mut out = BTreeMap::new();
                while let Some(LStr::<MAX_ID_BYTES>(k, kc)) = a.next_key()? {
                    let HeaderValue(v, vc) = a.next_value()?;
                    t |= kc | vc;
                    let (Some(mut k), Some(v)) = (k, v) else {
                        continue;
                    };
                    k.make_ascii_lowercase();
                    if out.len() >= MAX_HEADERS && !out.contains_key(&k) {
                        t = true;
                        continue;
                    }
                    out.insert(k, v);
                }
                Ok(LHeaders(out, t))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LHeaders, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LHeaders(BTreeMap::new(), false))
            }
            otherwise!(LHeaders(BTreeMap::new(), false); str i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LHeaders, D2::Error> {
                d.deserialize_any(self)
            }
        }
        d.deserialize_any(V)
    }
}

/// A header value: a string, a number, or an array of those joined by ", ".
struct HeaderValue(Option<String>, bool);

impl<'de> Deserialize<'de> for HeaderValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = HeaderValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<HeaderValue, A::Error> {
                let mut t = false;
                let mut parts: Vec<String> = Vec::new();
                while let Some(LStr::<MAX_ID_BYTES>(s, c)) = a.next_element()? {
                    t |= c;
                    if let Some(s) = s {
                        if parts.len() < 16 {
                            parts.push(s);
                        }
                    }
                }
                let joined = parts.join(", ");
                let v = owned_cut(&joined, MAX_ID_BYTES * 4, &mut t);
                Ok(HeaderValue(Some(v), t))
            }
            fn visit_str<E>(self, v: &str) -> Result<HeaderValue, E> {
                let mut t = false;
                let s = owned_cut(v, MAX_ID_BYTES * 4, &mut t);
                Ok(HeaderValue(Some(s), t))
            }
            fn visit_i64<E>(self, v: i64) -> Result<HeaderValue, E> {
                Ok(HeaderValue(Some(v.to_string()), false))
            }
            fn visit_u64<E>(self, v: u64) -> Result<HeaderValue, E> {
                Ok(HeaderValue(Some(v.to_string()), false))
            }
            fn visit_f64<E>(self, v: f64) -> Result<HeaderValue, E> {
                Ok(HeaderValue(Some(v.to_string()), false))
            }
            fn visit_bool<E>(self, v: bool) -> Result<HeaderValue, E> {
                Ok(HeaderValue(Some(v.to_string()), false))
            }
            fn visit_unit<E>(self) -> Result<HeaderValue, E> {
                Ok(HeaderValue(None, false))
            }
            fn visit_none<E>(self) -> Result<HeaderValue, E> {
                Ok(HeaderValue(None, false))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<HeaderValue, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<HeaderValue, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(HeaderValue(None, false))
            }
        }
        d.deserialize_any(V)
    }
}

/// Any JSON value, then bounded (strings cut, containers trimmed, depth capped).
struct LValue(Option<Value>, bool);

impl<'de> Deserialize<'de> for LValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_null() {
            return Ok(LValue(None, false));
        }
        if !over_bounds(&v, 0) {
            return Ok(LValue(Some(v), false));
        }
        let mut t = false;
        let v = bound_value(v, 0, &mut t);
        Ok(LValue(Some(v), t))
    }
}

/// Whether [`bound_value`] would change `v` (it then rebuilds the whole tree).
fn over_bounds(v: &Value, depth: usize) -> bool {
    match v {
        Value::String(s) => s.len() > MAX_TEXT_BYTES,
        Value::Array(a) => {
            depth >= MAX_DATA_DEPTH
                || a.len() > MAX_DATA_ENTRIES
                || a.iter().any(|x| over_bounds(x, depth + 1))
        }
        Value::Object(m) => {
            depth >= MAX_DATA_DEPTH
                || m.len() > MAX_DATA_ENTRIES
                || m.values().any(|x| over_bounds(x, depth + 1))
        }
        _ => false,
    }
}

fn bound_value(v: Value, depth: usize, t: &mut bool) -> Value {
    match v {
        Value::String(s) => {
            if s.len() > MAX_TEXT_BYTES {
                Value::String(owned_cut(&s, MAX_TEXT_BYTES, t))
            } else {
                Value::String(s)
            }
        }
        Value::Array(a) => {
            if depth >= MAX_DATA_DEPTH {
                *t = true;
                return Value::Null;
            }
            if a.len() > MAX_DATA_ENTRIES {
                *t = true;
            }
            Value::Array(
                a.into_iter()
                    .take(MAX_DATA_ENTRIES)
                    .map(|x| bound_value(x, depth + 1, t))
                    .collect(),
            )
        }
        Value::Object(m) => {
            if depth >= MAX_DATA_DEPTH {
                *t = true;
                return Value::Null;
            }
            if m.len() > MAX_DATA_ENTRIES {
                *t = true;
            }
            Value::Object(
                m.into_iter()
                    .take(MAX_DATA_ENTRIES)
                    .map(|(k, x)| (k, bound_value(x, depth + 1, t)))
                    .collect(),
            )
        }
        other => other,
    }
}

/// A body: a string as is, any other JSON value as its compact text.
struct LBody(Option<String>, bool);

impl<'de> Deserialize<'de> for LBody {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LBody;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<LBody, E> {
                let mut t = false;
                let s = owned_cut(v, MAX_TEXT_BYTES, &mut t);
                Ok(LBody(Some(s), t))
            }
            fn visit_unit<E>(self) -> Result<LBody, E> {
                Ok(LBody(None, false))
            }
            fn visit_none<E>(self) -> Result<LBody, E> {
                Ok(LBody(None, false))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LBody, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_bool<E>(self, v: bool) -> Result<LBody, E> {
                Ok(LBody(Some(v.to_string()), false))
            }
            fn visit_i64<E>(self, v: i64) -> Result<LBody, E> {
                Ok(LBody(Some(v.to_string()), false))
            }
            fn visit_u64<E>(self, v: u64) -> Result<LBody, E> {
                Ok(LBody(Some(v.to_string()), false))
            }
            fn visit_f64<E>(self, v: f64) -> Result<LBody, E> {
                Ok(LBody(Some(v.to_string()), false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<LBody, A::Error> {
                let v = Value::deserialize(de::value::SeqAccessDeserializer::new(a))?;
                let mut t = false;
                Ok(LBody(
                    Some(owned_cut(&v.to_string(), MAX_TEXT_BYTES, &mut t)),
                    t,
                ))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<LBody, A::Error> {
                let v = Value::deserialize(de::value::MapAccessDeserializer::new(a))?;
                let mut t = false;
                Ok(LBody(
                    Some(owned_cut(&v.to_string(), MAX_TEXT_BYTES, &mut t)),
                    t,
                ))
            }
        }
        d.deserialize_any(V)
    }
}

/// A timestamp: RFC 3339 text or Unix seconds.
struct LTime(Option<DateTime<Utc>>);

impl<'de> Deserialize<'de> for LTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The text an `LStr<MAX_ID_BYTES>` would read, parsed where it lies.
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LTime;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<LTime, E> {
                Ok(LTime(parse_time(cut(v, MAX_ID_BYTES).0)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<LTime, E> {
                Ok(LTime(parse_time(&v.to_string())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<LTime, E> {
                Ok(LTime(parse_time(&v.to_string())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<LTime, E> {
                Ok(LTime(parse_time(&v.to_string())))
            }
            otherwise!(LTime(None); bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LTime, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LTime, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LTime(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LTime, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LTime(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// RFC 3339 text or Unix seconds.
fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    if let Ok(secs) = s.parse::<i64>() {
        return Utc.timestamp_opt(secs, 0).single();
    }
    None
}

struct LResumable(Option<Resumable>);

impl<'de> Deserialize<'de> for LResumable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let Value::Object(m) = v else {
            return Ok(LResumable(None));
        };
        let sid = m.get("provider_session_id").and_then(|v| match v {
            Value::String(s) => Some(cut(s, MAX_ID_BYTES).0.to_owned()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
        let generation = m.get("generation").and_then(Value::as_u64);
        Ok(LResumable(Some(Resumable {
            provider_session_id: sid,
            generation,
        })))
    }
}

// ---------------------------------------------------------------------------
// Items

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum ItemField {
    Kind,
    Status,
    Headers,
    Body,
    Error,
    Code,
    Message,
    Data,
    #[serde(alias = "sessionUpdate")]
    Update,
    Text,
    Content,
    #[serde(alias = "stopReason")]
    StopReason,
    Lines,
    #[serde(alias = "exitCode")]
    ExitCode,
    Signal,
    #[serde(other)]
    Other,
}

/// `text` of an ACP update may come as a string or as ACP content blocks.
fn content_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Array(a) => {
            for x in a.iter().take(MAX_DATA_ENTRIES) {
                content_text(x, out);
            }
        }
        Value::Object(m) => {
            if let Some(t) = m.get("text") {
                content_text(t, out);
            } else if let Some(c) = m.get("content") {
                content_text(c, out);
            }
        }
        _ => {}
    }
}

/// An item's `kind`, read without copying the known ones. Anything else is
/// kept as an `LStr<64>` would read it.
enum Kind {
    Http,
    AcpError,
    AcpUpdate,
    AcpStop,
    Stderr,
    Stdout,
    ProcessExit,
    Other(Option<String>),
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Kind;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Kind, E> {
                Ok(match v {
                    "http" => Kind::Http,
                    "acp_error" => Kind::AcpError,
                    "acp_update" => Kind::AcpUpdate,
                    "acp_stop" => Kind::AcpStop,
                    "stderr" => Kind::Stderr,
                    "stdout" => Kind::Stdout,
                    "process_exit" => Kind::ProcessExit,
                    _ => Kind::Other(Some(cut(v, 64).0.to_owned())),
                })
            }
            fn visit_i64<E>(self, v: i64) -> Result<Kind, E> {
                Ok(Kind::Other(Some(v.to_string())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Kind, E> {
                Ok(Kind::Other(Some(v.to_string())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Kind, E> {
                Ok(Kind::Other(Some(v.to_string())))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Kind, E> {
                Ok(Kind::Other(Some(v.to_string())))
            }
            fn visit_unit<E>(self) -> Result<Kind, E> {
                Ok(Kind::Other(None))
            }
            fn visit_none<E>(self) -> Result<Kind, E> {
                Ok(Kind::Other(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Kind, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Kind, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Kind::Other(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Kind, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Kind::Other(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// An item's `status`: a number (HTTP) or a string (tool calls, or a status
/// sent as text). Containers are read as `Value` would read them (same
/// validation), then ignored.
enum Status {
    Number(Option<i64>),
    Text(String),
    Other,
}

impl<'de> Deserialize<'de> for Status {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Status;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            // As `Number::as_i64`: floats and integers beyond i64 are none.
            fn visit_i64<E>(self, v: i64) -> Result<Status, E> {
                Ok(Status::Number(Some(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Status, E> {
                Ok(Status::Number(i64::try_from(v).ok()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Status, E> {
                Ok(Status::Number(None))
            }
            fn visit_str<E>(self, v: &str) -> Result<Status, E> {
                Ok(Status::Text(v.to_owned()))
            }
            otherwise!(Status::Other; bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Status, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Status, A::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(a))?;
                Ok(Status::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Status, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(a))?;
                Ok(Status::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// An ACP update's `text` or `content`: a string, or content blocks (read
/// as a `Value`, then flattened by [`content_text`]); empty when neither.
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Text, E> {
                Ok(Text(v.to_owned()))
            }
            otherwise!(Text(String::new()); i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Text, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<Text, A::Error> {
                let v = Value::deserialize(de::value::SeqAccessDeserializer::new(a))?;
                let mut s = String::new();
                content_text(&v, &mut s);
                Ok(Text(s))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<Text, A::Error> {
                let v = Value::deserialize(de::value::MapAccessDeserializer::new(a))?;
                let mut s = String::new();
                content_text(&v, &mut s);
                Ok(Text(s))
            }
        }
        d.deserialize_any(V)
    }
}

struct RawItem(Option<Item>, bool);

impl<'de> Deserialize<'de> for RawItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawItem;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an evidence item")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<RawItem, A::Error> {
                let mut t = false;
                let mut kind = Kind::Other(None);
                let mut status_num: Option<i64> = None;
                let mut status_str: Option<String> = None;
                let mut headers = BTreeMap::new();
                let mut body = None;
                let mut error = None;
                let mut code = None;
                let mut message = None;
                let mut data = None;
                let mut update = None;
                let mut text: Option<String> = None;
                let mut stop_reason = None;
                let mut lines = Vec::new();
                let mut exit_code = None;
                let mut signal: Option<String> = None;
                while let Some(field) = a.next_key::<ItemField>()? {
                    match field {
                        ItemField::Kind => kind = a.next_value()?,
                        ItemField::Status => match a.next_value()? {
                            Status::Number(n) => status_num = n,
                            Status::Text(s) => {
                                status_num = s.trim().parse().ok();
                                status_str = Some(cut_in_place(s, 64, &mut false));
                            }
                            Status::Other => {}
                        },
                        ItemField::Headers => {
                            let LHeaders(h, c) = a.next_value()?;
                            headers = h;
                            t |= c;
                        }
                        ItemField::Body => {
                            let LBody(b, c) = a.next_value()?;
                            body = b;
                            t |= c;
                        }
                        ItemField::Error => {
                            let LBody(b, c) = a.next_value()?;
                            error = b;
                            t |= c;
                        }
                        ItemField::Code => code = a.next_value::<LInt>()?.0,
                        ItemField::Message => {
                            let LStr::<MAX_TEXT_BYTES>(m, c) = a.next_value()?;
                            message = m;
                            t |= c;
                        }
                        ItemField::Data => {
                            let LValue(v, c) = a.next_value()?;
                            data = v;
                            t |= c;
                        }
                        ItemField::Update => update = a.next_value::<LStr<64>>()?.0,
                        ItemField::Text | ItemField::Content => {
                            let Text(s) = a.next_value()?;
                            if !s.is_empty() {
                                let joined = match text.take() {
                                    Some(mut j) => {
                                        j.push_str(&s);
                                        j
                                    }
                                    None => s,
                                };
                                text = Some(cut_in_place(joined, MAX_TEXT_BYTES, &mut t));
                            }
                        }
                        ItemField::StopReason => stop_reason = a.next_value::<LStr<64>>()?.0,
                        ItemField::Lines => {
                            let LLines(l, c) = a.next_value()?;
                            lines = l;
                            t |= c;
                        }
                        ItemField::ExitCode => exit_code = a.next_value::<LInt>()?.0,
                        ItemField::Signal => {
                            let LStr::<32>(s, _) = a.next_value()?;
                            signal = s.and_then(|s| signal_name(&s));
                        }
                        ItemField::Other => {
                            a.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let item = match kind {
                    Kind::Http => Item::Http(HttpItem {
                        status: status_num
                            .filter(|s| (100..=999).contains(s))
                            .map(|s| s as u16),
                        headers,
                        body,
                        error,
                    }),
                    Kind::AcpError => Item::AcpError(AcpErrorItem {
                        code,
                        message,
                        data,
                    }),
                    Kind::AcpUpdate => Item::AcpUpdate(AcpUpdateItem {
                        update: update.unwrap_or_default(),
                        text,
                        status: status_str,
                    }),
                    Kind::AcpStop => Item::AcpStop(AcpStopItem { stop_reason }),
                    Kind::Stderr => Item::Stderr(StreamItem { lines }),
                    Kind::Stdout => Item::Stdout(StreamItem { lines }),
                    Kind::ProcessExit => Item::ProcessExit(ProcessExitItem { exit_code, signal }),
                    Kind::Other(original_kind) => Item::Other(OtherItem { original_kind }),
                };
                Ok(RawItem(Some(item), t))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<RawItem, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(RawItem(None, false))
            }
            otherwise!(RawItem(None, false); str i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<RawItem, D2::Error> {
                d.deserialize_any(self)
            }
        }
        d.deserialize_any(V)
    }
}

/// Names a signal: `9`, `KILL`, `sigkill` and `SIGKILL` all read as `SIGKILL`.
fn signal_name(s: &str) -> Option<String> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    if let Ok(n) = s.parse::<u32>() {
        let name = match n {
            1 => "SIGHUP",
            2 => "SIGINT",
            3 => "SIGQUIT",
            4 => "SIGILL",
            6 => "SIGABRT",
            7 => "SIGBUS",
            8 => "SIGFPE",
            9 => "SIGKILL",
            11 => "SIGSEGV",
            13 => "SIGPIPE",
            14 => "SIGALRM",
            15 => "SIGTERM",
            _ => return Some(format!("SIG{n}")),
        };
        return Some(name.to_owned());
    }
    let up = s.to_ascii_uppercase();
    if up.starts_with("SIG") {
        Some(up)
    } else {
        Some(format!("SIG{up}"))
    }
}

struct LItems(Vec<Item>, bool);

impl<'de> Deserialize<'de> for LItems {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LItems;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of items")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LItems, A::Error> {
                let mut t = false;
                let mut q: VecDeque<Item> = VecDeque::new();
                while let Some(RawItem(item, c)) = a.next_element()? {
                    t |= c;
                    if let Some(item) = item {
                        if q.len() == MAX_ITEMS {
                            q.pop_front();
                            t = true;
                        }
                        q.push_back(item);
                    }
                }
                Ok(LItems(q.into(), t))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LItems, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LItems(Vec::new(), false))
            }
            otherwise!(LItems(Vec::new(), false); str i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LItems, D2::Error> {
                d.deserialize_any(self)
            }
        }
        d.deserialize_any(V)
    }
}

// ---------------------------------------------------------------------------
// The envelope

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum EnvelopeField {
    RouteId,
    Generation,
    InvocationId,
    PromptGeneration,
    Phase,
    Agent,
    ProviderId,
    ModelId,
    OccurredAt,
    Resumable,
    Items,
    Evidence,
    #[serde(other)]
    Other,
}

struct EnvelopeVisitor {
    /// Accept `{"evidence": envelope}` (CLI and API input lines).
    allow_wrapper: bool,
}

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Evidence;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an evidence envelope object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Evidence, A::Error> {
        let mut e = Evidence::default();
        let mut saw_items = false;
        let mut wrapped: Option<Evidence> = None;
        while let Some(field) = a.next_key::<EnvelopeField>()? {
            match field {
                EnvelopeField::RouteId => {
                    let LStr::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.route_id = v;
                    e.truncated |= c;
                }
                EnvelopeField::Generation => {
                    e.generation = a
                        .next_value::<LInt>()?
                        .0
                        .and_then(|v| u64::try_from(v).ok())
                }
                EnvelopeField::InvocationId => {
                    let LStr::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.invocation_id = v;
                    e.truncated |= c;
                }
                EnvelopeField::PromptGeneration => {
                    e.prompt_generation = a
                        .next_value::<LInt>()?
                        .0
                        .and_then(|v| u64::try_from(v).ok())
                }
                EnvelopeField::Phase => {
                    let LStr::<64>(v, _) = a.next_value()?;
                    e.phase = v.as_deref().and_then(Phase::parse);
                }
                EnvelopeField::Agent => {
                    let LStr::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.agent = v;
                    e.truncated |= c;
                }
                EnvelopeField::ProviderId => {
                    let LStr::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.provider_id = v;
                    e.truncated |= c;
                }
                EnvelopeField::ModelId => {
                    let LStr::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.model_id = v;
                    e.truncated |= c;
                }
                EnvelopeField::OccurredAt => e.occurred_at = a.next_value::<LTime>()?.0,
                EnvelopeField::Resumable => e.resumable = a.next_value::<LResumable>()?.0,
                EnvelopeField::Items => {
                    let LItems(items, c) = a.next_value()?;
                    e.items = items;
                    e.truncated |= c;
                    saw_items = true;
                }
                EnvelopeField::Evidence if self.allow_wrapper => {
                    let inner: Value = a.next_value()?;
                    if inner.is_object() {
                        let v = inner
                            .deserialize_map(EnvelopeVisitor {
                                allow_wrapper: false,
                            })
                            .map_err(de::Error::custom)?;
                        wrapped = Some(v);
                    }
                }
                EnvelopeField::Evidence | EnvelopeField::Other => {
                    a.next_value::<IgnoredAny>()?;
                }
            }
        }
        match wrapped {
            Some(inner) if !saw_items => Ok(inner),
            _ => Ok(e),
        }
    }
}

impl<'de> Deserialize<'de> for Evidence {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EnvelopeVisitor {
            allow_wrapper: false,
        })
    }
}

/// One CLI/API input: an envelope or `{"evidence": envelope, …}`.
struct InputLine(Evidence);

impl<'de> Deserialize<'de> for InputLine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EnvelopeVisitor {
            allow_wrapper: true,
        })
        .map(InputLine)
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
