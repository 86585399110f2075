//! The JSON body extractor: malformed JSON is a 400 that says where, an
//! oversized body a 413 — never a 500. Bodies are read as `serde_json::Value`
//! and validated by the domain readers, which report every field at once.

use super::error::HttpError;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde_json::Value;

pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                HttpError::TooLarge(super::max_body_bytes())
            } else {
                HttpError::Malformed(format!("The request body could not be read: {e}"))
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Err(HttpError::Malformed(
                "The request body is empty; send a JSON object.".into(),
            ));
        }
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|e| HttpError::Malformed(format!("The request body is not valid JSON: {e}.")))
    }
}
