//! How JSON is read into wire types: in the browser through serde_json's
//! `Value` and a small hand reader per type ([`FromJson`]); on the server
//! (and in host builds) with serde, every struct read as an object only.
//!
//! **The browser** parses every answer, event and island prop into a
//! `Value` (one parser, shared) and reads the wire type out of it with
//! [`FromJson`]: a few lines per type beside it, where serde's derive
//! compiled a `visit_map`, a field-name visitor and a `deserialize_map` of
//! every field type for each of some twenty structs. The readers follow the
//! types' serde attributes: an absent `Option` field is `None` (and so is
//! `null`), `#[serde(default)]` fields take their default, unknown fields
//! are ignored except where the type denies them, integers must fit their
//! type, and a struct is an object. They are checked against serde's
//! reader on the same JSON, including every one-field change of a sample of
//! each type (`tests::agree`). One difference, on input the server never
//! writes: an object with a key given twice is read with the last value,
//! where serde's derive refuses it. Error messages are shorter: the field
//! that did not read, not serde's sentence.
//!
//! **Host builds** read with serde through [`StructsAsMaps`]: serde_json
//! accepts a struct written as an object or as an array of its fields, so
//! each wire type's deserializer is compiled twice over, its `visit_map`
//! and its `visit_seq`; the API and the page only ever write objects.
//! [`StructsAsMaps`] wraps a deserializer and asks it for a map wherever a
//! struct is wanted, all the way down. An array where an object belongs is
//! then an "invalid type" error, as any other wrong type.

#[cfg(not(feature = "browser"))]
use serde::de::DeserializeOwned;
use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};
use std::fmt;

#[cfg(any(test, feature = "reader"))]
pub use reader::{by_name, read, Error, Fields, FromJson, ReadError};

/// In the browser: a `T` from JSON text through its [`FromJson`] reader.
#[cfg(feature = "browser")]
pub use reader::read as from_str;

/// Reads a `T` from JSON text, structs as objects only.
#[cfg(not(feature = "browser"))]
pub fn from_str<T: DeserializeOwned>(text: &str) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(StructsAsMaps(&mut de))?;
    de.end()?;
    Ok(value)
}

/// A deserializer that reads structs as maps (see the module).
pub struct StructsAsMaps<D>(pub D);

/// Forwards `deserialize_*` methods, wrapping the visitor.
macro_rules! forward {
    ($($method:ident)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.0.$method(Wrap(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for StructsAsMaps<D> {
    type Error = D::Error;

    forward! {
        deserialize_any deserialize_bool deserialize_i8 deserialize_i16 deserialize_i32
        deserialize_i64 deserialize_i128 deserialize_u8 deserialize_u16 deserialize_u32
        deserialize_u64 deserialize_u128 deserialize_f32 deserialize_f64 deserialize_char
        deserialize_str deserialize_string deserialize_bytes deserialize_byte_buf
        deserialize_option deserialize_unit deserialize_seq deserialize_map
        deserialize_identifier deserialize_ignored_any
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_unit_struct(name, Wrap(visitor))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_newtype_struct(name, Wrap(visitor))
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple(len, Wrap(visitor))
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_tuple_struct(name, len, Wrap(visitor))
    }

    /// The point of the wrapper: a struct is read as a map.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_map(Wrap(visitor))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_enum(name, variants, Wrap(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor whose nested deserializers are wrapped too.
struct Wrap<V>(V);

/// Forwards `visit_*` methods that carry a plain value.
macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_f64(f64) visit_char(char) visit_str(&str)
        visit_borrowed_str(&'de str) visit_string(String) visit_bytes(&[u8])
        visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(StructsAsMaps(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(StructsAsMaps(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Wrap(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Wrap(map))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Wrap(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Wrap<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(StructsAsMaps(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Wrap(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(Wrap(seed))
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Wrap(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Wrap<A> {
    type Error = A::Error;
    type Variant = Wrap<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Wrap<A::Variant>), A::Error> {
        self.0
            .variant_seed(Wrap(seed))
            .map(|(value, variant)| (value, Wrap(variant)))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Wrap(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Wrap(visitor))
    }
}

/// The browser's readers (see the module): compiled into the browser and
/// into host tests, which check them against serde's.
#[cfg(any(test, feature = "reader"))]
mod reader {
    use chrono::{DateTime, Utc};
    use serde_json::{Map, Value};
    use std::cell::Cell;
    use std::fmt;

    /// A value of another shape than its type's. No data: every reader's
    /// result is then no larger than its value, which keeps the readers
    /// small; the field to blame is kept aside ([`blame`]).
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Error;

    thread_local! {
        /// The innermost field that did not read, in the read under way.
        static BLAME: Cell<Option<&'static str>> = const { Cell::new(None) };
    }

    /// Blames `field`, unless a field inside it is already blamed.
    fn blame(field: &'static str) {
        BLAME.with(|b| {
            if b.get().is_none() {
                b.set(Some(field));
            }
        });
    }

    /// Why JSON text did not read as a `T`.
    #[derive(Debug)]
    pub enum ReadError {
        /// Not JSON at all.
        Syntax(serde_json::Error),
        /// JSON of another shape; the innermost field that did not read,
        /// when there is one.
        Shape(Option<&'static str>),
    }

    impl fmt::Display for ReadError {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self {
                ReadError::Syntax(e) => e.fmt(f),
                ReadError::Shape(Some(field)) => {
                    write!(f, "field `{field}` is missing or invalid")
                }
                ReadError::Shape(None) => f.write_str("not the expected JSON"),
            }
        }
    }

    impl fmt::Display for Error {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("not the expected JSON")
        }
    }

    /// A type the browser reads out of a JSON `Value`.
    pub trait FromJson: Sized {
        fn from_json(v: &Value) -> Result<Self, Error>;

        /// What an absent field reads as: an error, but `None` for an
        /// option (as serde's derive has it).
        fn absent() -> Result<Self, Error> {
            Err(Error)
        }
    }

    /// A `T` from JSON text: parsed into a `Value`, then read.
    pub fn read<T: FromJson>(text: &str) -> Result<T, ReadError> {
        let value: Value = serde_json::from_str(text).map_err(ReadError::Syntax)?;
        BLAME.with(|b| b.set(None));
        T::from_json(&value).map_err(|Error| ReadError::Shape(BLAME.with(Cell::take)))
    }

    /// An object's fields, read one by one.
    pub struct Fields<'a>(&'a Map<String, Value>);

    impl<'a> Fields<'a> {
        /// `v` as an object, or the error a struct that is not one is.
        pub fn of(v: &'a Value) -> Result<Fields<'a>, Error> {
            v.as_object().map(Fields).ok_or(Error)
        }

        /// The field `key`, as serde's derive reads a plain field.
        pub fn get<T: FromJson>(&self, key: &'static str) -> Result<T, Error> {
            let value = match self.0.get(key) {
                Some(v) => T::from_json(v),
                None => T::absent(),
            };
            if value.is_err() {
                blame(key);
            }
            value
        }

        /// A `#[serde(default)]` field: absent is the default.
        pub fn or_default<T: FromJson + Default>(&self, key: &'static str) -> Result<T, Error> {
            match self.0.get(key) {
                Some(_) => self.get(key),
                None => Ok(T::default()),
            }
        }

        /// `#[serde(deny_unknown_fields)]`: no field but `known`.
        pub fn only(&self, known: &[&str]) -> Result<(), Error> {
            match self.0.keys().all(|k| known.contains(&k.as_str())) {
                true => Ok(()),
                false => Err(Error),
            }
        }
    }

    impl FromJson for Value {
        fn from_json(v: &Value) -> Result<Value, Error> {
            Ok(v.clone())
        }
    }

    impl FromJson for String {
        fn from_json(v: &Value) -> Result<String, Error> {
            v.as_str().map(str::to_string).ok_or(Error)
        }
    }

    impl FromJson for bool {
        fn from_json(v: &Value) -> Result<bool, Error> {
            v.as_bool().ok_or(Error)
        }
    }

    impl FromJson for i64 {
        fn from_json(v: &Value) -> Result<i64, Error> {
            v.as_i64().ok_or(Error)
        }
    }

    /// Unsigned integers: whole, not negative, and within the type.
    macro_rules! unsigned {
        ($($ty:ty)*) => {$(
            impl FromJson for $ty {
                fn from_json(v: &Value) -> Result<$ty, Error> {
                    v.as_u64().and_then(|n| <$ty>::try_from(n).ok()).ok_or(Error)
                }
            }
        )*};
    }

    unsigned!(u16 u32 u64 usize);

    impl<T: FromJson> FromJson for Option<T> {
        fn from_json(v: &Value) -> Result<Option<T>, Error> {
            match v {
                Value::Null => Ok(None),
                v => T::from_json(v).map(Some),
            }
        }

        fn absent() -> Result<Option<T>, Error> {
            Ok(None)
        }
    }

    impl<T: FromJson> FromJson for Box<T> {
        fn from_json(v: &Value) -> Result<Box<T>, Error> {
            T::from_json(v).map(Box::new)
        }
    }

    impl<T: FromJson> FromJson for Vec<T> {
        fn from_json(v: &Value) -> Result<Vec<T>, Error> {
            let items = v.as_array().ok_or(Error)?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(T::from_json(item)?);
            }
            Ok(out)
        }
    }

    /// A pair is an array of exactly two.
    impl<A: FromJson, B: FromJson> FromJson for (A, B) {
        fn from_json(v: &Value) -> Result<(A, B), Error> {
            match v.as_array().map(Vec::as_slice) {
                Some([a, b]) => Ok((A::from_json(a)?, B::from_json(b)?)),
                _ => Err(Error),
            }
        }
    }

    /// Times as `crate::wire_time` reads them: RFC 3339 text.
    impl FromJson for DateTime<Utc> {
        fn from_json(v: &Value) -> Result<DateTime<Utc>, Error> {
            let text = v.as_str().ok_or(Error)?;
            DateTime::parse_from_rfc3339(text)
                .map(|t| t.to_utc())
                .map_err(|_| Error)
        }
    }

    /// A name read by its `FromStr` (the wire enums).
    pub fn by_name<T: std::str::FromStr>(v: &Value) -> Result<T, Error> {
        v.as_str().and_then(|s| s.parse().ok()).ok_or(Error)
    }
}

#[cfg(test)]
mod tests {
    use super::from_str;
    use serde::Deserialize;
    use serde_json::{json, Value};
    use std::collections::HashMap;

    #[derive(Debug, PartialEq, Deserialize)]
    struct Inner {
        n: u32,
        #[serde(default)]
        tag: Option<String>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Id(String);

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Plain,
        Wrapped(u8),
        Shaped { x: i32 },
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Outer {
        id: Id,
        inner: Inner,
        list: Vec<Inner>,
        maybe: Option<Inner>,
        names: HashMap<String, String>,
        kinds: Vec<Kind>,
        pair: (u8, String),
        any: Value,
        ratio: f64,
    }

    #[test]
    fn reads_what_serde_json_reads_from_objects() {
        let text = json!({
            "id": "r_1",
            "inner": {"n": 1},
            "list": [{"n": 2, "tag": "a"}, {"n": 3, "tag": null}],
            "maybe": null,
            "names": {"p": "Profile"},
            "kinds": ["plain", {"wrapped": 7}, {"shaped": {"x": -1}}],
            "pair": [1, "one"],
            "any": {"deep": [1, {"x": true}], "s": "é\n"},
            "ratio": 0.5,
            "unknown": [1, 2, 3],
        })
        .to_string();
        let ours: Outer = from_str(&text).unwrap();
        let theirs: Outer = serde_json::from_str(&text).unwrap();
        assert_eq!(ours, theirs);
        assert_eq!(ours.list[0].tag.as_deref(), Some("a"));
    }

    #[test]
    fn structs_are_objects_only() {
        assert!(serde_json::from_str::<Inner>("[1, null]").is_ok());
        let err = from_str::<Inner>("[1, null]").unwrap_err().to_string();
        assert!(err.starts_with("invalid type: sequence"), "{err}");
        assert!(from_str::<Inner>(r#"{"n": 1} x"#).is_err());
        assert!(from_str::<Inner>(r#"{"n": "1"}"#).is_err());
    }
}

/// The browser's readers against serde's (the host's [`from_str`]): the
/// same JSON, the same answer — a value equal field for field, or an error
/// from both. Public to the web app's tests (feature `reader`), which check
/// its island props the same way.
#[cfg(all(any(test, feature = "reader"), not(feature = "browser")))]
pub mod agree {
    use super::{from_str, read, FromJson};
    use serde::de::DeserializeOwned;
    use serde_json::{json, Value};
    use std::fmt::Debug;
    #[cfg(test)]
    use {
        super::ReadError,
        crate::circuit::CircuitList,
        crate::error::{ApiError, Viewer},
        crate::policy::ClassPolicy,
        crate::profile::Profile,
        crate::route::{Attempt, RouteEvent, RouteSnapshot},
    };

    /// What a field is replaced with: every JSON type, integers at the
    /// edges of the wire's integer types, names, times, pairs.
    fn replacements() -> Vec<Value> {
        vec![
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(7),
            json!(-7),
            json!(1.5),
            json!(2.0),
            json!(65_535),
            json!(65_536),
            json!(4_294_967_295u64),
            json!(4_294_967_296u64),
            json!(i64::MAX),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(""),
            json!("x"),
            json!("retry_wait"),
            json!("hard"),
            json!("stop"),
            json!("stopped_by_policy"),
            json!("action_required: something_new"),
            json!("2026-11-30T12:00:00Z"),
            json!("2026-11-30T13:00:00.5+01:00"),
            json!("30 Nov 2026"),
            json!([]),
            json!(["a", "b"]),
            json!(["a", "b", "c"]),
            json!({}),
            json!({"enabled": true, "max_wait_seconds": 60}),
        ]
    }

    /// Every document one change away from `v`: each field (at any depth)
    /// removed or replaced, an unknown field added to each object, each
    /// array element replaced, and `v` itself replaced.
    fn neighbours(v: &Value) -> Vec<Value> {
        let mut out: Vec<Value> = replacements();
        match v {
            Value::Object(map) => {
                let mut extra = map.clone();
                extra.insert("zz_unknown".into(), json!(1));
                out.push(Value::Object(extra));
                for (key, field) in map {
                    let mut without = map.clone();
                    without.remove(key);
                    out.push(Value::Object(without));
                    for changed in neighbours(field) {
                        let mut next = map.clone();
                        next.insert(key.clone(), changed);
                        out.push(Value::Object(next));
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    for changed in neighbours(item) {
                        let mut next = items.clone();
                        next[i] = changed;
                        out.push(Value::Array(next));
                    }
                }
            }
            _ => {}
        }
        out
    }

    /// `sample` and all its neighbours read alike by both readers.
    pub fn agree<T>(sample: Value)
    where
        T: DeserializeOwned + FromJson + PartialEq + Debug,
    {
        let text = sample.to_string();
        let theirs = from_str::<T>(&text).expect("the sample reads with serde");
        assert_eq!(read::<T>(&text).ok(), Some(theirs), "{text}");
        let mut accepted = 0;
        for doc in neighbours(&sample) {
            let text = doc.to_string();
            let theirs = from_str::<T>(&text).ok();
            accepted += usize::from(theirs.is_some());
            assert_eq!(read::<T>(&text).ok(), theirs, "{text}");
        }
        // The changes reach both verdicts (the test is not vacuous).
        assert!(accepted > 0, "{text}");
    }

    pub fn class_policy() -> Value {
        json!({
            "retry": {"enabled": true, "max_retries": 3, "initial_interval_seconds": 5},
            "wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "on_exhausted": "skip",
        })
    }

    pub fn profile() -> Value {
        json!({
            "id": "p_1",
            "name": "Main",
            "revision": 4,
            "prefer": "first_eligible",
            "candidates": [{
                "id": "c_1",
                "label": "Claude",
                "agent": "claude-code",
                "provider_id": "anthropic",
                "model_id": "claude-sonnet-4-5",
                "profile_ref": "",
                "account_ref": "team-a",
                "policy": {"version": 1, "transient": class_policy(), "hard": class_policy()},
            }],
            "configuration_error": {
                "message": "legacy",
                "errors": [{"field": "candidates[0].policy", "code": "legacy_unmappable",
                            "message": "no", "min": 1, "max": 10}],
            },
            "created_at": "2026-11-30T12:00:00Z",
            "updated_at": "2026-11-30T12:00:05.250Z",
        })
    }

    pub fn snapshot() -> Value {
        json!({
            "id": "r_1",
            "profile_id": "p_1",
            "caller": {"kind": "kanban", "ref": "task-1"},
            "state": "retry_wait",
            "generation": 3,
            "cycle": 1,
            "candidate": {"index": 0, "id": "c_1", "label": "Claude"},
            "invocation_id": "inv",
            "prompt_generation": 2,
            "pending": {
                "kind": "retry",
                "deadline": "2026-11-30T12:00:05Z",
                "retry_ordinal": 1,
                "max_retries": 3,
                "outcome_after": "skip",
                "code": "provider_overloaded",
                "class": "transient",
                "circuit": {"scope": "account", "resource": "anthropic/team-a",
                            "until": "2026-11-30T12:01:00Z", "awaiting_probe": false},
            },
            "last_failure": {"code": "provider_overloaded", "class": "transient",
                             "safe_cause": "Provider overloaded", "http_status": 529},
            "reason": "stopped_by_policy",
            "excluded": ["c_2"],
            "updated_at": "2026-11-30T12:00:00Z",
            "server_time": "2026-11-30T12:00:01Z",
        })
    }

    pub fn attempt() -> Value {
        json!({
            "seq": 1,
            "generation": 2,
            "cycle": 1,
            "candidate": {"index": 0, "id": "c_1", "label": "Claude"},
            "invocation_id": "inv",
            "code": "provider_overloaded",
            "class": "transient",
            "catalogue_version": "1.2.0",
            "classifier_rule": "anthropic.overloaded",
            "safe_excerpt": "HTTP 529",
            "http_status": 529,
            "policy": class_policy(),
            "decision": "retry",
            "retry_ordinal": 1,
            "deadline": "2026-11-30T12:00:05Z",
            "outcome": {"kind": "waiting", "state": "retry_wait", "until": "2026-11-30T12:00:05.250Z"},
            "created_at": "2026-11-30T12:00:00Z",
            "classification": {"confidence": "high", "retry_after_seconds": 12.5},
        })
    }

    pub fn circuits() -> Value {
        json!({
            "circuits": [{
                "scope": "provider",
                "resource": "anthropic",
                "label": "Anthropic",
                "state": "probing",
                "until": "2026-11-30T12:01:00Z",
                "probe_holder": "r_1",
                "probe_until": "2026-11-30T12:02:00Z",
                "routes_waiting": 2,
                "code": "quota_limited",
                "openings": 1,
                "changed_at": "2026-11-30T12:00:00Z",
            }],
            "server_time": "2026-11-30T12:00:01Z",
        })
    }

    #[test]
    fn policies() {
        agree::<ClassPolicy>(class_policy());
    }

    #[test]
    fn profiles() {
        agree::<Profile>(profile());
        agree::<Option<Profile>>(json!(null));
    }

    #[test]
    fn routes_and_events() {
        agree::<RouteSnapshot>(snapshot());
        agree::<Vec<RouteSnapshot>>(json!([snapshot()]));
        agree::<RouteEvent>(json!({"id": 9, "kind": "route.failure", "route": snapshot()}));
        agree::<RouteEvent>(json!({"id": 9, "kind": "route.action", "route": snapshot(),
            "actor": {"kind": "person", "id": "u1", "name": "alice"}}));
    }

    #[test]
    fn attempts() {
        agree::<Vec<Attempt>>(json!([attempt()]));
        let mut bare = attempt();
        for key in ["deadline", "classification", "http_status"] {
            bare.as_object_mut().unwrap().remove(key);
        }
        agree::<Attempt>(bare);
    }

    #[test]
    fn circuit_lists() {
        agree::<CircuitList>(circuits());
    }

    #[test]
    fn errors_and_viewers() {
        agree::<ApiError>(json!({
            "error": "stale_generation",
            "message": "moved on",
            "errors": [{"field": "name", "code": "required", "message": "needed"}],
            "profile": profile(),
            "route": snapshot(),
        }));
        agree::<ApiError>(json!({"error": "something_new", "message": "?"}));
        agree::<Viewer>(json!({"name": "ann", "permissions": ["admin"], "session": true}));
        agree::<Value>(json!({"any": [1, "thing"]}));
    }

    #[test]
    fn errors_name_the_innermost_field() {
        assert!(matches!(read::<Value>("{"), Err(ReadError::Syntax(_))));
        assert!(matches!(read::<Value>("1 x"), Err(ReadError::Syntax(_))));
        let mut route = snapshot();
        route["pending"]["deadline"] = json!("soon");
        let e = read::<RouteSnapshot>(&route.to_string()).unwrap_err();
        assert_eq!(e.to_string(), "field `deadline` is missing or invalid");
        // Each read starts without blame.
        assert!(read::<RouteSnapshot>(&snapshot().to_string()).is_ok());
        let e = read::<Viewer>(r#"{"name": "ann", "permissions": []}"#).unwrap_err();
        assert_eq!(e.to_string(), "field `session` is missing or invalid");
        let e = read::<Vec<String>>("[1]").unwrap_err();
        assert_eq!(e.to_string(), "not the expected JSON");
    }
}
