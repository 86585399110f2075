//! The field-error reader toolkit: reading an untrusted JSON document
//! while collecting every problem at once, each addressed by its path
//! (`candidates[0].policy.transient.retry.max_retries`). The policy
//! validator, the legacy normaliser and the profile reader are all written
//! with it.

use super::error::{FieldError, FieldErrorCode};
use serde_json::{Map, Value};

/// Joins a parent path and a field name: `candidates[0]` + `policy`.
pub fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

/// Collects field errors while reading one JSON document.
#[derive(Debug, Default)]
pub struct Errors(pub Vec<FieldError>);

impl Errors {
    pub fn push(&mut self, e: FieldError) {
        self.0.push(e);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Runs `f` and returns its value only if it added no error.
    pub fn checked<T>(&mut self, f: impl FnOnce(&mut Errors) -> Option<T>) -> Option<T> {
        let before = self.len();
        let value = f(self);
        if self.len() == before {
            value
        } else {
            None
        }
    }

    pub fn into_result<T>(self, value: Option<T>) -> Result<T, Vec<FieldError>> {
        match value {
            Some(v) if self.0.is_empty() => Ok(v),
            _ => Err(self.0),
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn wrong_type(path: &str, expected: &str, got: &Value) -> FieldError {
    FieldError::new(
        path,
        FieldErrorCode::InvalidType,
        format!("must be {expected}, not {}", type_name(got)),
    )
}

/// A JSON object being read, with its path.
pub struct Obj<'v> {
    pub map: &'v Map<String, Value>,
    pub path: String,
}

impl<'v> Obj<'v> {
    /// Reads `v` as an object, or records why it is not one.
    pub fn read(v: &'v Value, path: &str, errs: &mut Errors) -> Option<Obj<'v>> {
        match v {
            Value::Object(map) => Some(Obj {
                map,
                path: path.to_string(),
            }),
            other => {
                errs.push(wrong_type(path, "an object", other));
                None
            }
        }
    }

    pub fn at(&self, field: &str) -> String {
        join(&self.path, field)
    }

    /// Records every field not in `known`, in a stable (sorted) order:
    /// serde_json's `Map` is a `BTreeMap` (its `preserve_order` feature is
    /// off in every build), so its keys come sorted. Not sorting again
    /// keeps a stable sort's code out of the browser bundle.
    pub fn reject_unknown(&self, known: &[&str], errs: &mut Errors) {
        let unknown = self.map.keys().filter(|k| !known.contains(&k.as_str()));
        for k in unknown {
            errs.push(FieldError::new(
                self.at(k),
                FieldErrorCode::UnknownField,
                format!("unknown field `{k}`; expected one of: {}", known.join(", ")),
            ));
        }
    }

    /// A present, non-null field.
    pub fn get(&self, field: &str) -> Option<&'v Value> {
        self.map.get(field).filter(|v| !v.is_null())
    }

    /// A field that must be present.
    pub fn required(&self, field: &str, errs: &mut Errors) -> Option<&'v Value> {
        let v = self.get(field);
        if v.is_none() {
            errs.push(FieldError::new(
                self.at(field),
                FieldErrorCode::Required,
                "is required",
            ));
        }
        v
    }

    pub fn bool(&self, field: &str, errs: &mut Errors) -> Option<bool> {
        match self.required(field, errs)? {
            Value::Bool(b) => Some(*b),
            other => {
                errs.push(wrong_type(&self.at(field), "true or false", other));
                None
            }
        }
    }

    /// An optional string (absent and null read as `None`).
    pub fn opt_string(&self, field: &str, max_chars: usize, errs: &mut Errors) -> Option<String> {
        match self.get(field)? {
            Value::String(s) => {
                let s = s.trim();
                if s.chars().count() > max_chars {
                    errs.push(FieldError::out_of_range(
                        self.at(field),
                        "length",
                        0,
                        max_chars as u64,
                    ));
                    None
                } else if let Err(e) = super::text::check_visible(&self.at(field), s) {
                    // Every string of a profile is shown to people.
                    errs.push(e);
                    None
                } else {
                    Some(s.to_string())
                }
            }
            other => {
                errs.push(wrong_type(&self.at(field), "a string", other));
                None
            }
        }
    }

    /// A required string of 1..=max_chars characters after trimming.
    pub fn string(&self, field: &str, max_chars: usize, errs: &mut Errors) -> Option<String> {
        self.required(field, errs)?;
        let s = self.opt_string(field, max_chars, errs)?;
        if s.is_empty() {
            errs.push(FieldError {
                min: Some(1),
                max: Some(max_chars as u64),
                ..FieldError::new(
                    self.at(field),
                    FieldErrorCode::Required,
                    "must not be empty",
                )
            });
            return None;
        }
        Some(s)
    }

    /// A whole number in `0..=u32::MAX`, range-checked by the caller.
    /// Absent reads as `default` when one is given.
    pub fn count(&self, field: &str, default: Option<u32>, errs: &mut Errors) -> Option<u32> {
        let path = self.at(field);
        let v = match (self.get(field), default) {
            (Some(v), _) => v,
            (None, Some(d)) => return Some(d),
            (None, None) => return self.required(field, errs).and(None),
        };
        read_count(v, &path, errs)
    }
}

/// A JSON value as a non-negative whole number that fits a `u32`. Integral
/// floats (`5.0`) are accepted; fractions, negatives and huge values are not.
pub fn read_count(v: &Value, path: &str, errs: &mut Errors) -> Option<u32> {
    let Value::Number(n) = v else {
        errs.push(wrong_type(path, "a whole number", v));
        return None;
    };
    let as_int = if let Some(u) = n.as_u64() {
        Some(u as f64)
    } else if let Some(i) = n.as_i64() {
        Some(i as f64)
    } else {
        n.as_f64()
    };
    let Some(f) = as_int.filter(|f| f.is_finite()) else {
        errs.push(FieldError::new(
            path,
            FieldErrorCode::InvalidType,
            "must be a finite number",
        ));
        return None;
    };
    if f.fract() != 0.0 {
        errs.push(FieldError::new(
            path,
            FieldErrorCode::NotInteger,
            "must be a whole number",
        ));
        return None;
    }
    if f < 0.0 || f > u32::MAX as f64 {
        errs.push(FieldError::out_of_range(path, "value", 0, u32::MAX as u64));
        return None;
    }
    Some(f as u32)
}

pub(crate) fn check_range(
    value: u32,
    path: &str,
    what: &str,
    min: u32,
    max: u32,
    errs: &mut Errors,
) -> Option<u32> {
    if (min..=max).contains(&value) {
        Some(value)
    } else {
        errs.push(FieldError::out_of_range(path, what, min as u64, max as u64));
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Errors, Obj};

    #[test]
    fn unknown_fields_are_reported_sorted_whatever_order_they_came_in() {
        let v: serde_json::Value =
            serde_json::from_str(r#"{"zeta": 1, "name": "x", "alpha": 2, "Mid": 3}"#).unwrap();
        let mut errs = Errors::default();
        let obj = Obj::read(&v, "p", &mut errs).unwrap();
        obj.reject_unknown(&["name"], &mut errs);
        let fields: Vec<&str> = errs.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["p.Mid", "p.alpha", "p.zeta"]);
    }
}
