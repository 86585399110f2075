//! Request extractors, each with the one rejection the API answers:
//! - [`JsonBody`]: malformed JSON is a 400 that says where, an oversized
//!   body a 413, a field of the wrong shape a 422 naming it — never a 500.
//!   `JsonBody<Value>` hands the document to a domain reader that reports
//!   every field at once (profiles, evidence envelopes).
//! - [`Query`]: a malformed query string is a 400.
//! - [`TestClockEnabled`]: the test clock's routes answer 403 unless
//!   `--test-clock` is on (checked before the body is read).

use super::error::HttpError;
use super::AppState;
use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use domain::policy::{FieldError, FieldErrorCode};
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A JSON request body read as `T`.
pub struct JsonBody<T = Value>(pub T);

impl<T: DeserializeOwned> FromRequest<AppState> for JsonBody<T> {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                HttpError::TooLarge(state.max_body_bytes)
            } else {
                HttpError::Malformed(format!("The request body could not be read: {e}"))
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(HttpError::Malformed(
                "The request body is empty; send a JSON object.".into(),
            ));
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            HttpError::Malformed(format!("The request body is not valid JSON: {e}."))
        })?;
        typed(value).map(JsonBody)
    }
}

/// Reads a typed body; a field of the wrong shape is a 422 naming it.
fn typed<T: DeserializeOwned>(body: Value) -> Result<T, HttpError> {
    serde_path_to_error::deserialize(body).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        // serde's messages are the only description of what failed; they
        // are read here, at the edge, into the field error's code.
        let code = if inner.starts_with("missing field") {
            FieldErrorCode::Required
        } else if inner.starts_with("unknown field") {
            FieldErrorCode::UnknownField
        } else if inner.starts_with("invalid type") {
            FieldErrorCode::InvalidType
        } else {
            FieldErrorCode::InvalidValue
        };
        // Missing fields are reported at the object; name the field itself.
        let field = match (code, inner.split('`').nth(1)) {
            (FieldErrorCode::Required | FieldErrorCode::UnknownField, Some(name))
                if path == "." =>
            {
                name.to_string()
            }
            (FieldErrorCode::Required | FieldErrorCode::UnknownField, Some(name)) => {
                format!("{path}.{name}")
            }
            _ => path,
        };
        HttpError::Invalid(vec![FieldError::new(field, code, inner)])
    })
}

/// A query string read as `T`.
pub struct Query<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequestParts<S> for Query<T> {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(q)| Query(q))
            .map_err(|e| HttpError::Malformed(format!("Bad query string: {e}")))
    }
}

/// Admits the request only when the test clock is enabled.
pub struct TestClockEnabled;

impl FromRequestParts<AppState> for TestClockEnabled {
    type Rejection = HttpError;

    async fn from_request_parts(_: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        if state.test_clock {
            Ok(TestClockEnabled)
        } else {
            Err(HttpError::Forbidden(
                "The test clock is not enabled; start the server with --test-clock (tests only)."
                    .into(),
            ))
        }
    }
}
