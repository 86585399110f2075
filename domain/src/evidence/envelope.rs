//! Reading an envelope: its fields and its items' fields, each through a
//! reader from `lenient`, into [`Evidence`]. An item kind this version does
//! not know is kept as [`Item::Other`]; a list of items keeps its last ones.

use super::lenient::{
    cut, cut_in_place, read_as_absent, BoundedValue, LenientBody, LenientHeaders, LenientInt,
    LenientLines, LenientString, LenientTime,
};
use super::{
    AcpErrorItem, AcpStopItem, AcpUpdateItem, Evidence, HttpItem, Item, OtherItem, Phase,
    ProcessExitItem, Resumable, StreamItem, MAX_DATA_ENTRIES, MAX_ID_BYTES, MAX_ITEMS,
    MAX_TEXT_BYTES,
};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// `resumable`: an object with a session id and a generation, else absent.
struct LenientResumable(Option<Resumable>);

impl<'de> Deserialize<'de> for LenientResumable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let Value::Object(m) = v else {
            return Ok(LenientResumable(None));
        };
        let sid = m.get("provider_session_id").and_then(|v| match v {
            Value::String(s) => Some(cut(s, MAX_ID_BYTES).0.to_owned()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
        let generation = m.get("generation").and_then(Value::as_u64);
        Ok(LenientResumable(Some(Resumable {
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
/// kept as an `LenientString<64>` would read it.
enum ItemKind {
    Http,
    AcpError,
    AcpUpdate,
    AcpStop,
    Stderr,
    Stdout,
    ProcessExit,
    Other(Option<String>),
}

impl<'de> Deserialize<'de> for ItemKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ItemKind;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<ItemKind, E> {
                Ok(match v {
                    "http" => ItemKind::Http,
                    "acp_error" => ItemKind::AcpError,
                    "acp_update" => ItemKind::AcpUpdate,
                    "acp_stop" => ItemKind::AcpStop,
                    "stderr" => ItemKind::Stderr,
                    "stdout" => ItemKind::Stdout,
                    "process_exit" => ItemKind::ProcessExit,
                    _ => ItemKind::Other(Some(cut(v, 64).0.to_owned())),
                })
            }
            fn visit_i64<E>(self, v: i64) -> Result<ItemKind, E> {
                Ok(ItemKind::Other(Some(v.to_string())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<ItemKind, E> {
                Ok(ItemKind::Other(Some(v.to_string())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<ItemKind, E> {
                Ok(ItemKind::Other(Some(v.to_string())))
            }
            fn visit_bool<E>(self, v: bool) -> Result<ItemKind, E> {
                Ok(ItemKind::Other(Some(v.to_string())))
            }
            fn visit_unit<E>(self) -> Result<ItemKind, E> {
                Ok(ItemKind::Other(None))
            }
            fn visit_none<E>(self) -> Result<ItemKind, E> {
                Ok(ItemKind::Other(None))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<ItemKind, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<ItemKind, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(ItemKind::Other(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<ItemKind, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(ItemKind::Other(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// An item's `status`: a number (HTTP) or a string (tool calls, or a status
/// sent as text). Containers are read as `Value` would read them (same
/// validation), then ignored.
enum ItemStatus {
    Number(Option<i64>),
    UpdateText(String),
    Other,
}

impl<'de> Deserialize<'de> for ItemStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ItemStatus;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            // As `Number::as_i64`: floats and integers beyond i64 are none.
            fn visit_i64<E>(self, v: i64) -> Result<ItemStatus, E> {
                Ok(ItemStatus::Number(Some(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<ItemStatus, E> {
                Ok(ItemStatus::Number(i64::try_from(v).ok()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<ItemStatus, E> {
                Ok(ItemStatus::Number(None))
            }
            fn visit_str<E>(self, v: &str) -> Result<ItemStatus, E> {
                Ok(ItemStatus::UpdateText(v.to_owned()))
            }
            read_as_absent!(ItemStatus::Other; bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<ItemStatus, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<ItemStatus, A::Error> {
                Value::deserialize(de::value::SeqAccessDeserializer::new(a))?;
                Ok(ItemStatus::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<ItemStatus, A::Error> {
                Value::deserialize(de::value::MapAccessDeserializer::new(a))?;
                Ok(ItemStatus::Other)
            }
        }
        d.deserialize_any(V)
    }
}

/// An ACP update's `text` or `content`: a string, or content blocks (read
/// as a `Value`, then flattened by [`content_text`]); empty when neither.
struct UpdateText(String);

impl<'de> Deserialize<'de> for UpdateText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = UpdateText;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any valid JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<UpdateText, E> {
                Ok(UpdateText(v.to_owned()))
            }
            read_as_absent!(UpdateText(String::new()); i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<UpdateText, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<UpdateText, A::Error> {
                let v = Value::deserialize(de::value::SeqAccessDeserializer::new(a))?;
                let mut s = String::new();
                content_text(&v, &mut s);
                Ok(UpdateText(s))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<UpdateText, A::Error> {
                let v = Value::deserialize(de::value::MapAccessDeserializer::new(a))?;
                let mut s = String::new();
                content_text(&v, &mut s);
                Ok(UpdateText(s))
            }
        }
        d.deserialize_any(V)
    }
}

/// One item; `None` for an array entry that is not an object.
struct LenientItem(Option<Item>, bool);

impl<'de> Deserialize<'de> for LenientItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientItem;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an evidence item")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LenientItem, A::Error> {
                let mut t = false;
                let mut kind = ItemKind::Other(None);
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
                let mut content: Option<String> = None;
                let mut stop_reason = None;
                let mut lines = Vec::new();
                let mut exit_code = None;
                let mut signal: Option<String> = None;
                while let Some(field) = a.next_key::<ItemField>()? {
                    match field {
                        ItemField::Kind => kind = a.next_value()?,
                        ItemField::Status => match a.next_value()? {
                            // A repeated `status` replaces both readings.
                            ItemStatus::Number(n) => (status_num, status_str) = (n, None),
                            ItemStatus::UpdateText(s) => {
                                status_num = s.trim().parse().ok();
                                status_str = Some(cut_in_place(s, 64, &mut false));
                            }
                            ItemStatus::Other => (status_num, status_str) = (None, None),
                        },
                        ItemField::Headers => {
                            let LenientHeaders(h, c) = a.next_value()?;
                            headers = h;
                            t |= c;
                        }
                        ItemField::Body => {
                            let LenientBody(b, c) = a.next_value()?;
                            body = b;
                            t |= c;
                        }
                        ItemField::Error => {
                            let LenientBody(b, c) = a.next_value()?;
                            error = b;
                            t |= c;
                        }
                        ItemField::Code => code = a.next_value::<LenientInt>()?.0,
                        ItemField::Message => {
                            let LenientString::<MAX_TEXT_BYTES>(m, c) = a.next_value()?;
                            message = m;
                            t |= c;
                        }
                        ItemField::Data => {
                            let BoundedValue(v, c) = a.next_value()?;
                            data = v;
                            t |= c;
                        }
                        ItemField::Update => update = a.next_value::<LenientString<64>>()?.0,
                        // Each of the two keeps its last value and they are
                        // joined in one order at the end: neither key order
                        // nor a repeated key may change what is read (the API
                        // reads the body as a `Value`, which keeps the last
                        // value and may reorder keys; the CLI reads text).
                        ItemField::Text => text = Some(a.next_value::<UpdateText>()?.0),
                        ItemField::Content => content = Some(a.next_value::<UpdateText>()?.0),
                        ItemField::StopReason => {
                            stop_reason = a.next_value::<LenientString<64>>()?.0
                        }
                        ItemField::Lines => {
                            let LenientLines(l, c) = a.next_value()?;
                            lines = l;
                            t |= c;
                        }
                        ItemField::ExitCode => exit_code = a.next_value::<LenientInt>()?.0,
                        ItemField::Signal => {
                            let LenientString::<32>(s, _) = a.next_value()?;
                            signal = s.and_then(|s| signal_name(&s));
                        }
                        ItemField::Other => {
                            a.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                let joined: String = text.into_iter().chain(content).collect();
                let text =
                    (!joined.is_empty()).then(|| cut_in_place(joined, MAX_TEXT_BYTES, &mut t));
                let item = match kind {
                    ItemKind::Http => Item::Http(HttpItem {
                        status: status_num
                            .filter(|s| (100..=999).contains(s))
                            .map(|s| s as u16),
                        headers,
                        body,
                        error,
                    }),
                    ItemKind::AcpError => Item::AcpError(AcpErrorItem {
                        code,
                        message,
                        data,
                    }),
                    ItemKind::AcpUpdate => Item::AcpUpdate(AcpUpdateItem {
                        update: update.unwrap_or_default(),
                        text,
                        status: status_str,
                    }),
                    ItemKind::AcpStop => Item::AcpStop(AcpStopItem { stop_reason }),
                    ItemKind::Stderr => Item::Stderr(StreamItem { lines }),
                    ItemKind::Stdout => Item::Stdout(StreamItem { lines }),
                    ItemKind::ProcessExit => {
                        Item::ProcessExit(ProcessExitItem { exit_code, signal })
                    }
                    ItemKind::Other(original_kind) => Item::Other(OtherItem { original_kind }),
                };
                Ok(LenientItem(Some(item), t))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LenientItem, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientItem(None, false))
            }
            read_as_absent!(LenientItem(None, false); str i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LenientItem, D2::Error> {
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

/// `items`: the last [`MAX_ITEMS`] items that read as items.
struct LenientItems(Vec<Item>, bool);

impl<'de> Deserialize<'de> for LenientItems {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientItems;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of items")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LenientItems, A::Error> {
                let mut t = false;
                let mut q: VecDeque<Item> = VecDeque::new();
                while let Some(LenientItem(item, c)) = a.next_element()? {
                    t |= c;
                    if let Some(item) = item {
                        if q.len() == MAX_ITEMS {
                            q.pop_front();
                            t = true;
                        }
                        q.push_back(item);
                    }
                }
                Ok(LenientItems(q.into(), t))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LenientItems, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientItems(Vec::new(), false))
            }
            read_as_absent!(LenientItems(Vec::new(), false); str i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LenientItems, D2::Error> {
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
                    let LenientString::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.route_id = v;
                    e.truncated |= c;
                }
                EnvelopeField::Generation => {
                    e.generation = a
                        .next_value::<LenientInt>()?
                        .0
                        .and_then(|v| u64::try_from(v).ok())
                }
                EnvelopeField::InvocationId => {
                    let LenientString::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.invocation_id = v;
                    e.truncated |= c;
                }
                EnvelopeField::PromptGeneration => {
                    e.prompt_generation = a
                        .next_value::<LenientInt>()?
                        .0
                        .and_then(|v| u64::try_from(v).ok())
                }
                EnvelopeField::Phase => {
                    let LenientString::<64>(v, _) = a.next_value()?;
                    e.phase = v.as_deref().and_then(Phase::parse);
                }
                EnvelopeField::Agent => {
                    let LenientString::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.agent = v;
                    e.truncated |= c;
                }
                EnvelopeField::ProviderId => {
                    let LenientString::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.provider_id = v;
                    e.truncated |= c;
                }
                EnvelopeField::ModelId => {
                    let LenientString::<MAX_ID_BYTES>(v, c) = a.next_value()?;
                    e.model_id = v;
                    e.truncated |= c;
                }
                EnvelopeField::OccurredAt => e.occurred_at = a.next_value::<LenientTime>()?.0,
                EnvelopeField::Resumable => e.resumable = a.next_value::<LenientResumable>()?.0,
                EnvelopeField::Items => {
                    let LenientItems(items, c) = a.next_value()?;
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
pub(super) struct InputLine(pub(super) Evidence);

impl<'de> Deserialize<'de> for InputLine {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(EnvelopeVisitor {
            allow_wrapper: true,
        })
        .map(InputLine)
    }
}
