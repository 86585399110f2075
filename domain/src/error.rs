//! The error body every API failure answers with, and who is looking.

use crate::access::Permission;
use crate::policy::FieldError;
use crate::profile::Profile;
use crate::route::RouteSnapshot;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The kind of an API error (the body's `error`): what a client branches
/// on. A kind this build does not know is kept as sent.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, strum::Display, strum::EnumString,
)]
#[serde(from = "String", into = "String")]
#[strum(serialize_all = "snake_case")]
pub enum ErrorCode {
    /// 400: the body is not JSON, or a query parameter is malformed.
    MalformedJson,
    /// 422: field errors in `errors`.
    ValidationFailed,
    NotFound,
    /// 409: the profile moved on; the stored one is attached.
    StaleRevision,
    /// 409: the route moved on; the route now is attached.
    StaleGeneration,
    /// 409: the state table does not allow the action now.
    InvalidAction,
    /// 409: a report kept losing races.
    Conflict,
    /// 409: the profile cannot authorise work.
    ProfileUnusable,
    ProfileMisconfigured,
    /// 422: a catalogue directory did not load (a reload); the catalogue in
    /// force is kept and every problem is in `errors` (`field`: where).
    InvalidCatalogue,
    /// 409: the server runs the embedded catalogue, which does not reload.
    CatalogueNotReloadable,
    AlreadyExists,
    PayloadTooLarge,
    /// 401: no valid credential (sign in, or send an API token).
    Unauthorized,
    /// 403: the credential lacks the permission (or a browser write lacks
    /// its CSRF token), or the feature is switched off.
    Forbidden,
    /// 429: too many requests for this token; `retry-after` says when.
    RateLimited,
    /// 503: the database cannot be written; nothing changed.
    Unavailable,
    Internal,
    /// Client side: the server could not be reached.
    Network,
    /// Client side: an error answer without an error body.
    HttpError,
    #[strum(default)]
    Other(String),
}

open_wire_names!(ErrorCode);

/// The error body every API failure answers with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ApiError {
    /// Machine-readable kind: `validation_failed`, `malformed_json`,
    /// `not_found`, `stale_revision`, `unavailable`, `payload_too_large`,
    /// `internal`, …
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "validation_failed"))]
    pub error: ErrorCode,
    /// A sentence a person can act on.
    pub message: String,
    /// Field errors (with `validation_failed`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    /// The current stored profile (with `stale_revision` on a profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<Box<Profile>>,
    /// The authoritative route (with `stale_generation` and `invalid_action`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Box<RouteSnapshot>>,
    /// HTTP status, filled in by the client (not sent on the wire).
    #[serde(skip)]
    pub status: u16,
}

impl ApiError {
    pub fn new(error: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            error,
            message: message.into(),
            errors: Vec::new(),
            profile: None,
            route: None,
            status: 0,
        }
    }
}

/// The browser's reader (`crate::wire_json`), field for field as serde's;
/// `status` is not on the wire.
#[cfg(any(test, feature = "reader"))]
impl crate::wire_json::FromJson for ApiError {
    fn from_json(v: &serde_json::Value) -> Result<Self, crate::wire_json::Error> {
        let o = crate::wire_json::Fields::of(v)?;
        Ok(ApiError {
            error: o.get("error")?,
            message: o.get("message")?,
            errors: o.or_default("errors")?,
            profile: o.get("profile")?,
            route: o.get("route")?,
            status: 0,
        })
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Who is looking at the page (`GET /api/v1/session`): the UI hides what
/// they may not do; the server refuses it anyway.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Viewer {
    /// The person's (or token's) name.
    pub name: String,
    pub permissions: Vec<Permission>,
    /// Signed in in this browser (so there is a session to sign out of).
    pub session: bool,
}

#[cfg(any(test, feature = "reader"))]
impl crate::wire_json::FromJson for Viewer {
    fn from_json(v: &serde_json::Value) -> Result<Self, crate::wire_json::Error> {
        let o = crate::wire_json::Fields::of(v)?;
        Ok(Viewer {
            name: o.get("name")?,
            permissions: o.get("permissions")?,
            session: o.get("session")?,
        })
    }
}

impl Viewer {
    /// Whether the viewer holds `permission` (directly or as `admin`).
    pub fn may(&self, permission: Permission) -> bool {
        self.permissions
            .iter()
            .any(|&p| p == permission || p == Permission::Admin)
    }
}
