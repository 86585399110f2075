//! A light JSON tree for the extractors.
//!
//! `Facts` reads every JSON body, embedded object and JSON-in-a-string it
//! finds. Building `serde_json::Value` for them allocated a `String` per key
//! and per string and B-tree nodes per object, a large share of the time
//! spent classifying. [`Json`] borrows its strings from the text it was
//! parsed from (only strings with escapes are copied) and keeps an object's
//! entries in one vector.
//!
//! It reads exactly what `Value` reads. serde_json does the parsing, through
//! the same `deserialize_any` calls `Value` makes, so what parses, what fails
//! (syntax, nesting depth, number range, surrogates) and the numbers read are
//! the same; objects are sorted by key with the last duplicate winning, which
//! is the order `Value`'s map iterates in, so the extractors see keys in the
//! same order; and serde_json's raw-value key is handled as `Value` handles it.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};
use std::borrow::Cow;
use std::fmt;

/// The key serde_json's `Value` reads as "the value is JSON text in a string".
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    /// Sorted by key, keys unique (as in `serde_json::Map`).
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

impl<'a> Json<'a> {
    /// Parses `s` as one JSON value (surrounding whitespace allowed), like
    /// `serde_json::from_str::<Value>`.
    pub(crate) fn parse(s: &'a str) -> Option<Json<'a>> {
        serde_json::from_str(s).ok()
    }

    /// A view of a `Value` (strings borrowed).
    pub(crate) fn from_value(v: &'a Value) -> Json<'a> {
        match v {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Number(n) => Json::Number(n.clone()),
            Value::String(s) => Json::String(Cow::Borrowed(s)),
            Value::Array(a) => Json::Array(a.iter().map(Json::from_value).collect()),
            Value::Object(m) => Json::Object(
                m.iter()
                    .map(|(k, v)| (Cow::Borrowed(k.as_str()), Json::from_value(v)))
                    .collect(),
            ),
        }
    }

    fn into_owned(self) -> Json<'static> {
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Number(n) => Json::Number(n),
            Json::String(s) => Json::String(Cow::Owned(s.into_owned())),
            Json::Array(a) => Json::Array(a.into_iter().map(Json::into_owned).collect()),
            Json::Object(m) => Json::Object(
                m.into_iter()
                    .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                    .collect(),
            ),
        }
    }

    /// An object's value for `key` (`Value::get`).
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        match self {
            Json::Object(m) => m
                .binary_search_by(|(k, _)| k.as_ref().cmp(key))
                .ok()
                .map(|i| &m[i].1),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        Ok(Number::from_f64(v).map_or(Json::Null, Json::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v.to_owned())))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Borrowed(v)))
    }

    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::String(Cow::Owned(v)))
    }

    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        Deserialize::deserialize(d)
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Json<'de>, A::Error> {
        let mut v = Vec::new();
        while let Some(x) = a.next_element()? {
            v.push(x);
        }
        Ok(Json::Array(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Json<'de>, A::Error> {
        let Some(Key(first)) = a.next_key()? else {
            return Ok(Json::Object(Vec::new()));
        };
        if first == RAW_VALUE_TOKEN {
            // `Value` reads `{"$serde_json::private::RawValue": "<json>"}` as
            // the JSON inside the string; so must we.
            let RawText(text) = a.next_value()?;
            let v: Value = serde_json::from_str(&text).map_err(de::Error::custom)?;
            return Ok(Json::from_value(&v).into_owned());
        }
        let mut entries = vec![(first, a.next_value()?)];
        while let Some(Key(k)) = a.next_key()? {
            entries.push((k, a.next_value()?));
        }
        // Key order, and the last of duplicate keys wins, as `Map::insert`.
        // `dedup_by` keeps the earlier element of a duplicate pair, so the
        // later value is swapped into it first.
        entries.sort_by(|x, y| x.0.cmp(&y.0));
        entries.dedup_by(|later, kept| {
            if later.0 == kept.0 {
                std::mem::swap(later, kept);
                true
            } else {
                false
            }
        });
        Ok(Json::Object(entries))
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v.to_owned())))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Borrowed(v)))
    }

    fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key(Cow::Owned(v)))
    }
}

/// The string value of a raw-value key (anything else is an error, as for
/// `Value`).
struct RawText<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for RawText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(KeyVisitor).map(|Key(k)| RawText(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads like `Value`: same success, same key order, same values.
    fn same_as_value(s: &str) {
        let want = serde_json::from_str::<Value>(s).ok();
        let got = Json::parse(s);
        match (&want, &got) {
            (Some(v), Some(j)) => assert_eq!(&Json::from_value(v), j, "{s}"),
            (None, None) => {}
            _ => panic!("{s}: Value {want:?}, Json {got:?}"),
        }
    }

    #[test]
    fn reads_like_value() {
        for s in [
            r#"{"b":1,"a":{"z":[1,-2,3.5,"x\"y"],"y":null},"a":true}"#,
            r#"  ["\ud83d\ude00", 1e400]  "#,
            r#""\ud800""#,
            r#"{"$serde_json::private::RawValue":"{\"k\":[1,2]}"}"#,
            r#"{"$serde_json::private::RawValue":5}"#,
            r#"{"$serde_json::private::RawValue":"[1]","x":2}"#,
            r#"{"a":1} x"#,
            r#"18446744073709551616"#,
            r#"-9223372036854775809"#,
            r#"{"k":"v","k":"w","j":{}}"#,
            &"[".repeat(200),
            &format!("{}{}", "[".repeat(127), "]".repeat(127)),
            &format!("{}{}", "[".repeat(129), "]".repeat(129)),
        ] {
            same_as_value(s);
        }
    }

    #[test]
    fn get_and_borrowing() {
        let s = r#"{"error":{"type":"overloaded_error","message":"x"}}"#;
        let j = Json::parse(s).unwrap();
        let t = j.get("error").and_then(|e| e.get("type")).unwrap();
        assert!(matches!(t, Json::String(Cow::Borrowed("overloaded_error"))));
        assert!(j.get("nope").is_none());
    }
}
