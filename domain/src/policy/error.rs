//! One shape for every validation problem, in the API and in the form:
//! `{"field": "candidates[0].policy.transient.retry.max_retries",
//!   "code": "out_of_range", "message": "…", "min": 1, "max": 10}`.

use serde::{Deserialize, Serialize};
use std::fmt;

wire_names! {
    /// Machine-readable reason of a [`FieldError`].
    pub enum FieldErrorCode {
        /// A required field is absent.
        Required,
        /// The value has the wrong JSON type (a string where a number belongs).
        InvalidType,
        /// A number that must be a whole number is not.
        NotInteger,
        /// A number or length outside its bounds (`min` / `max` say which).
        OutOfRange,
        /// A string outside its allowed set (`on_exhausted: "pause"`).
        InvalidValue,
        /// A field this version of the document does not define.
        UnknownField,
        /// `version` is not one this build understands.
        UnsupportedVersion,
        /// Two items that must differ do not (duplicate candidate ids).
        Duplicate,
        /// A legacy document that cannot be mapped to version 1.
        LegacyUnmappable,
    }
}

/// A validation problem addressed to one field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FieldError {
    /// Path of the field, e.g. `candidates[1].policy.hard.retry.max_retries`.
    pub field: String,
    /// Machine-readable reason.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "out_of_range"))]
    pub code: FieldErrorCode,
    /// A sentence a person can act on.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
}

impl FieldError {
    pub fn new(field: impl Into<String>, code: FieldErrorCode, message: impl Into<String>) -> Self {
        FieldError {
            field: field.into(),
            code,
            message: message.into(),
            min: None,
            max: None,
        }
    }

    pub fn out_of_range(field: impl Into<String>, what: &str, min: u64, max: u64) -> Self {
        FieldError {
            min: Some(min),
            max: Some(max),
            ..FieldError::new(
                field,
                FieldErrorCode::OutOfRange,
                format!("{what} must be between {min} and {max}"),
            )
        }
    }
}

#[cfg(any(test, feature = "reader"))]
impl crate::wire_json::FromJson for FieldError {
    fn from_json(v: &serde_json::Value) -> Result<Self, crate::wire_json::Error> {
        let o = crate::wire_json::Fields::of(v)?;
        Ok(FieldError {
            field: o.get("field")?,
            code: o.get("code")?,
            message: o.get("message")?,
            min: o.get("min")?,
            max: o.get("max")?,
        })
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Finds the error for one field, for forms that show messages in place.
pub fn error_for<'a>(errors: &'a [FieldError], field: &str) -> Option<&'a FieldError> {
    errors.iter().find(|e| e.field == field)
}
