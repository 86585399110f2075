//! Lenient, bounded readers for the envelope's fields. Each accepts any
//! JSON value and keeps what it understands: a wrong-typed field reads as
//! absent (or, for text, as the text of a number or boolean), never as an
//! error, and every string and list is cut to its bound while it is read.
//! The readers that cut say so in their `bool` (`true`: something was cut),
//! which the envelope gathers into `Evidence::truncated`.

use super::{
    MAX_DATA_DEPTH, MAX_DATA_ENTRIES, MAX_HEADERS, MAX_ID_BYTES, MAX_LINES, MAX_LINE_BYTES,
    MAX_TEXT_BYTES,
};
use chrono::{DateTime, TimeZone, Utc};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

/// The `Visitor` methods for input shapes a field does not use: each answers
/// `$value` (the field read as absent), so a wrong shape never fails the
/// envelope. `read_as_absent!(LenientInt(None); bool unit none)`.
macro_rules! read_as_absent {
    ($value:expr; $($shape:ident)+) => { $( read_as_absent!(@ $shape $value); )+ };
    (@ str $v:expr) => { fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> { Ok($v) } };
    (@ i64 $v:expr) => { fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> { Ok($v) } };
    (@ u64 $v:expr) => { fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> { Ok($v) } };
    (@ f64 $v:expr) => { fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> { Ok($v) } };
    (@ bool $v:expr) => { fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> { Ok($v) } };
    (@ unit $v:expr) => { fn visit_unit<E>(self) -> Result<Self::Value, E> { Ok($v) } };
    (@ none $v:expr) => { fn visit_none<E>(self) -> Result<Self::Value, E> { Ok($v) } };
}
pub(super) use read_as_absent;

// ---------------------------------------------------------------------------
// Bounded string helpers

/// Cuts `s` to at most `max` bytes on a character boundary.
pub fn cut(s: &str, max: usize) -> (&str, bool) {
    if s.len() <= max {
        return (s, false);
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    (&s[..end], true)
}

pub(super) fn owned_cut(s: &str, max: usize, truncated: &mut bool) -> String {
    let (c, t) = cut(s, max);
    *truncated |= t;
    c.to_owned()
}

/// [`owned_cut`] for a string already owned: cut in place, no copy.
pub(super) fn cut_in_place(mut s: String, max: usize, truncated: &mut bool) -> String {
    let (c, t) = cut(&s, max);
    let len = c.len();
    *truncated |= t;
    s.truncate(len);
    s
}

// ---------------------------------------------------------------------------
// The readers

/// A string field; numbers and booleans read as their text, anything else as absent.
pub(super) struct LenientString<const MAX: usize>(pub(super) Option<String>, pub(super) bool);

impl<'de, const MAX: usize> Deserialize<'de> for LenientString<MAX> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<const MAX: usize>;
        impl<'de, const MAX: usize> Visitor<'de> for V<MAX> {
            type Value = LenientString<MAX>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                let mut t = false;
                let s = owned_cut(v, MAX, &mut t);
                Ok(LenientString(Some(s), t))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(LenientString(Some(v.to_string()), false))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(LenientString(Some(v.to_string()), false))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(LenientString(Some(v.to_string()), false))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
                Ok(LenientString(Some(v.to_string()), false))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(LenientString(None, false))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(LenientString(None, false))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientString(None, false))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientString(None, false))
            }
        }
        d.deserialize_any(V::<MAX>)
    }
}

/// An integer field; integral floats and numeric strings are accepted.
pub(super) struct LenientInt(pub(super) Option<i64>);

impl<'de> Deserialize<'de> for LenientInt {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientInt;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_i64<E>(self, v: i64) -> Result<LenientInt, E> {
                Ok(LenientInt(Some(v)))
            }
            fn visit_u64<E>(self, v: u64) -> Result<LenientInt, E> {
                Ok(LenientInt(i64::try_from(v).ok()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<LenientInt, E> {
                let ok = v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15;
                Ok(LenientInt(ok.then_some(v as i64)))
            }
            fn visit_str<E>(self, v: &str) -> Result<LenientInt, E> {
                Ok(LenientInt(v.trim().parse().ok()))
            }
            read_as_absent!(LenientInt(None); bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LenientInt, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LenientInt, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientInt(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LenientInt, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientInt(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// Lines of a stream: an array (non-strings read as text or skipped) or one
/// string split on newlines. Keeps the last [`MAX_LINES`].
pub(super) struct LenientLines(pub(super) Vec<String>, pub(super) bool);

impl<'de> Deserialize<'de> for LenientLines {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientLines;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<LenientLines, E> {
                let mut t = false;
                let mut q = VecDeque::new();
                for line in v.lines() {
                    push_line(&mut q, line, &mut t);
                }
                Ok(LenientLines(q.into(), t))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LenientLines, A::Error> {
                let mut t = false;
                // Room for a typical stream's lines without regrowing.
                let mut q = VecDeque::with_capacity(16);
                while let Some(LenientString::<MAX_LINE_BYTES>(s, cut)) = a.next_element()? {
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
                Ok(LenientLines(q.into(), t))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LenientLines, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientLines(Vec::new(), false))
            }
            read_as_absent!(LenientLines(Vec::new(), false); i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LenientLines, D2::Error> {
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
pub(super) struct LenientHeaders(pub(super) BTreeMap<String, String>, pub(super) bool);

impl<'de> Deserialize<'de> for LenientHeaders {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientHeaders;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LenientHeaders, A::Error> {
                let mut t = false;
                let mut out = BTreeMap::new();
                while let Some(LenientString::<MAX_ID_BYTES>(k, kc)) = a.next_key()? {
                    let LenientHeaderValue(v, vc) = a.next_value()?;
                    t |= kc | vc;
                    let (Some(mut k), Some(v)) = (k, v) else {
                        continue;
                    };
                    // A field name is an ASCII token (RFC 9110), compared
                    // without regard to ASCII case; anything else is not a
                    // header any rule could name (and Unicode case rules
                    // could turn it into one: the Kelvin sign lower-cases
                    // to `k`), so it is left out.
                    if !k.is_ascii() {
                        continue;
                    }
                    k.make_ascii_lowercase();
                    if out.len() >= MAX_HEADERS && !out.contains_key(&k) {
                        t = true;
                        continue;
                    }
                    out.insert(k, v);
                }
                Ok(LenientHeaders(out, t))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LenientHeaders, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientHeaders(BTreeMap::new(), false))
            }
            read_as_absent!(LenientHeaders(BTreeMap::new(), false); str i64 u64 f64 bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LenientHeaders, D2::Error> {
                d.deserialize_any(self)
            }
        }
        d.deserialize_any(V)
    }
}

/// A header value: a string, a number, or an array of those joined by ", ".
struct LenientHeaderValue(Option<String>, bool);

impl<'de> Deserialize<'de> for LenientHeaderValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientHeaderValue;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<LenientHeaderValue, A::Error> {
                let mut t = false;
                let mut parts: Vec<String> = Vec::new();
                while let Some(LenientString::<MAX_ID_BYTES>(s, c)) = a.next_element()? {
                    t |= c;
                    if let Some(s) = s {
                        if parts.len() < 16 {
                            parts.push(s);
                        }
                    }
                }
                let joined = parts.join(", ");
                let v = owned_cut(&joined, MAX_ID_BYTES * 4, &mut t);
                Ok(LenientHeaderValue(Some(v), t))
            }
            fn visit_str<E>(self, v: &str) -> Result<LenientHeaderValue, E> {
                let mut t = false;
                let s = owned_cut(v, MAX_ID_BYTES * 4, &mut t);
                Ok(LenientHeaderValue(Some(s), t))
            }
            fn visit_i64<E>(self, v: i64) -> Result<LenientHeaderValue, E> {
                Ok(LenientHeaderValue(Some(v.to_string()), false))
            }
            fn visit_u64<E>(self, v: u64) -> Result<LenientHeaderValue, E> {
                Ok(LenientHeaderValue(Some(v.to_string()), false))
            }
            fn visit_f64<E>(self, v: f64) -> Result<LenientHeaderValue, E> {
                Ok(LenientHeaderValue(Some(v.to_string()), false))
            }
            fn visit_bool<E>(self, v: bool) -> Result<LenientHeaderValue, E> {
                Ok(LenientHeaderValue(Some(v.to_string()), false))
            }
            fn visit_unit<E>(self) -> Result<LenientHeaderValue, E> {
                Ok(LenientHeaderValue(None, false))
            }
            fn visit_none<E>(self) -> Result<LenientHeaderValue, E> {
                Ok(LenientHeaderValue(None, false))
            }
            fn visit_some<D2: Deserializer<'de>>(
                self,
                d: D2,
            ) -> Result<LenientHeaderValue, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<LenientHeaderValue, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientHeaderValue(None, false))
            }
        }
        d.deserialize_any(V)
    }
}

/// Any JSON value, then bounded (strings cut, containers trimmed, depth capped).
pub(super) struct BoundedValue(pub(super) Option<Value>, pub(super) bool);

impl<'de> Deserialize<'de> for BoundedValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        if v.is_null() {
            return Ok(BoundedValue(None, false));
        }
        if !over_bounds(&v, 0) {
            return Ok(BoundedValue(Some(v), false));
        }
        let mut t = false;
        let v = bound_value(v, 0, &mut t);
        Ok(BoundedValue(Some(v), t))
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
pub(super) struct LenientBody(pub(super) Option<String>, pub(super) bool);

impl<'de> Deserialize<'de> for LenientBody {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientBody;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<LenientBody, E> {
                let mut t = false;
                let s = owned_cut(v, MAX_TEXT_BYTES, &mut t);
                Ok(LenientBody(Some(s), t))
            }
            fn visit_unit<E>(self) -> Result<LenientBody, E> {
                Ok(LenientBody(None, false))
            }
            fn visit_none<E>(self) -> Result<LenientBody, E> {
                Ok(LenientBody(None, false))
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LenientBody, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_bool<E>(self, v: bool) -> Result<LenientBody, E> {
                Ok(LenientBody(Some(v.to_string()), false))
            }
            fn visit_i64<E>(self, v: i64) -> Result<LenientBody, E> {
                Ok(LenientBody(Some(v.to_string()), false))
            }
            fn visit_u64<E>(self, v: u64) -> Result<LenientBody, E> {
                Ok(LenientBody(Some(v.to_string()), false))
            }
            fn visit_f64<E>(self, v: f64) -> Result<LenientBody, E> {
                Ok(LenientBody(Some(v.to_string()), false))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, a: A) -> Result<LenientBody, A::Error> {
                let v = Value::deserialize(de::value::SeqAccessDeserializer::new(a))?;
                let mut t = false;
                Ok(LenientBody(
                    Some(owned_cut(&v.to_string(), MAX_TEXT_BYTES, &mut t)),
                    t,
                ))
            }
            fn visit_map<A: MapAccess<'de>>(self, a: A) -> Result<LenientBody, A::Error> {
                let v = Value::deserialize(de::value::MapAccessDeserializer::new(a))?;
                let mut t = false;
                Ok(LenientBody(
                    Some(owned_cut(&v.to_string(), MAX_TEXT_BYTES, &mut t)),
                    t,
                ))
            }
        }
        d.deserialize_any(V)
    }
}

/// A timestamp: RFC 3339 text or Unix seconds.
pub(super) struct LenientTime(pub(super) Option<DateTime<Utc>>);

impl<'de> Deserialize<'de> for LenientTime {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The text an `LenientString<MAX_ID_BYTES>` would read, parsed where it lies.
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LenientTime;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E>(self, v: &str) -> Result<LenientTime, E> {
                Ok(LenientTime(parse_time(cut(v, MAX_ID_BYTES).0)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<LenientTime, E> {
                Ok(LenientTime(parse_time(&v.to_string())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<LenientTime, E> {
                Ok(LenientTime(parse_time(&v.to_string())))
            }
            fn visit_f64<E>(self, v: f64) -> Result<LenientTime, E> {
                Ok(LenientTime(parse_time(&v.to_string())))
            }
            read_as_absent!(LenientTime(None); bool unit none);
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<LenientTime, D2::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<LenientTime, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(LenientTime(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<LenientTime, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(LenientTime(None))
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
