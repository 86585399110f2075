//! One HTTP error type: one status match, one body shape
//! ([`domain::error::ApiError`]). Internal failures are logged with context and
//! answered with a generic message.

use crate::profiles::ProfileError;
use crate::store::StoreError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use domain::error::{ApiError, ErrorCode};
use domain::policy::FieldError;
use domain::profile::Profile;

#[derive(Debug)]
pub enum HttpError {
    /// 400: the body is not JSON, or a query parameter is malformed.
    Malformed(String),
    /// 422: the body is JSON but breaks the rules.
    Invalid(Vec<FieldError>),
    /// 404.
    NotFound(String),
    /// 409: the profile moved on; carries what is stored now.
    StaleProfile(Box<Profile>),
    /// 409: the route moved on; carries the route now.
    StaleRoute(Box<domain::route::RouteSnapshot>),
    /// 409: the state table does not allow the action now.
    InvalidAction(String, Box<domain::route::RouteSnapshot>),
    /// 409 for other conflicts.
    Conflict(ErrorCode, String),
    /// 422: a catalogue directory did not load; the message says which
    /// version stays in force, the errors what is wrong and where.
    InvalidCatalogue(String, Vec<FieldError>),
    /// 413.
    TooLarge(usize),
    /// 401: no valid credential.
    Unauthorized(String),
    /// 403: a credential without the permission, or a feature that is
    /// switched off (e.g. the test clock).
    Forbidden(String),
    /// 429: this token sent too much; retry after this many seconds.
    /// Too many requests of one kind (`what`, plural) from one credential;
    /// the caller may try again after the seconds given.
    RateLimited(&'static str, u64),
    /// 503: the database cannot be read or written; nothing changed.
    Unavailable(String),
    /// 500: a bug; details are in the log only.
    Internal(String),
}

pub type HttpResult<T> = Result<T, HttpError>;

/// The `Retry-After` a 503 carries: soon, since the database usually comes
/// back by itself (a restart, a failover, room made on a disk).
pub const UNAVAILABLE_RETRY_AFTER_SECONDS: u64 = 2;

impl HttpError {
    pub fn status_code(&self) -> StatusCode {
        match self {
            HttpError::Malformed(_) => StatusCode::BAD_REQUEST,
            HttpError::Invalid(_) | HttpError::InvalidCatalogue(..) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            HttpError::NotFound(_) => StatusCode::NOT_FOUND,
            HttpError::StaleProfile(_)
            | HttpError::StaleRoute(_)
            | HttpError::InvalidAction(..)
            | HttpError::Conflict(..) => StatusCode::CONFLICT,
            HttpError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            HttpError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            HttpError::Forbidden(_) => StatusCode::FORBIDDEN,
            HttpError::RateLimited(..) => StatusCode::TOO_MANY_REQUESTS,
            HttpError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            HttpError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    pub fn body(self) -> ApiError {
        match self {
            HttpError::Malformed(m) => ApiError::new(ErrorCode::MalformedJson, m),
            HttpError::Invalid(errors) => ApiError {
                errors,
                ..ApiError::new(
                    ErrorCode::ValidationFailed,
                    "Some fields are invalid; nothing was saved.",
                )
            },
            HttpError::InvalidCatalogue(message, errors) => ApiError {
                errors,
                ..ApiError::new(ErrorCode::InvalidCatalogue, message)
            },
            HttpError::NotFound(what) => ApiError::new(ErrorCode::NotFound, format!("{what} was not found.")),
            HttpError::StaleProfile(current) => ApiError {
                profile: Some(current),
                ..ApiError::new(
                    ErrorCode::StaleRevision,
                    "Someone saved this profile after you loaded it; nothing was saved. Review the current version and try again.",
                )
            },
            HttpError::StaleRoute(route) => ApiError {
                route: Some(route),
                ..ApiError::new(
                    ErrorCode::StaleGeneration,
                    "The route moved on before this request; nothing was changed. The current route is attached.",
                )
            },
            HttpError::InvalidAction(m, route) => ApiError {
                route: Some(route),
                ..ApiError::new(ErrorCode::InvalidAction, m)
            },
            HttpError::Conflict(kind, m) => ApiError::new(kind, m),
            HttpError::TooLarge(limit) => ApiError::new(
                ErrorCode::PayloadTooLarge,
                format!("The request body is larger than the {limit}-byte limit."),
            ),
            HttpError::Unauthorized(m) => ApiError::new(ErrorCode::Unauthorized, m),
            HttpError::Forbidden(m) => ApiError::new(ErrorCode::Forbidden, m),
            HttpError::RateLimited(what, seconds) => ApiError::new(
                ErrorCode::RateLimited,
                format!("Too many {what} from this token; nothing was recorded. Retry in {seconds} s."),
            ),
            HttpError::Unavailable(detail) => {
                tracing::error!(%detail, "database unavailable");
                ApiError::new(
                    ErrorCode::Unavailable,
                    "The database cannot be written right now; nothing was changed. Try again shortly.",
                )
            }
            HttpError::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                ApiError::new(ErrorCode::Internal, "Something went wrong on the server; it has been logged.")
            }
        }
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        let header = match &self {
            // RFC 9110: a 401 names the scheme that would work.
            HttpError::Unauthorized(_) => {
                Some((axum::http::header::WWW_AUTHENTICATE, "Bearer".to_string()))
            }
            HttpError::RateLimited(_, seconds) => {
                Some((axum::http::header::RETRY_AFTER, seconds.to_string()))
            }
            // The database is down, full, read-only or too slow: nothing
            // changed, and the same request may simply be sent again.
            HttpError::Unavailable(_) => Some((
                axum::http::header::RETRY_AFTER,
                UNAVAILABLE_RETRY_AFTER_SECONDS.to_string(),
            )),
            _ => None,
        };
        let mut response = (status, Json(self.body())).into_response();
        if let Some((name, value)) = header {
            if let Ok(value) = axum::http::HeaderValue::from_str(&value) {
                response.headers_mut().insert(name, value);
            }
        }
        response
    }
}

impl From<StoreError> for HttpError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound => HttpError::NotFound("The record".into()),
            StoreError::StaleRevision { current } => HttpError::Conflict(
                ErrorCode::StaleRevision,
                format!("The record changed; its revision is now {current}."),
            ),
            StoreError::StaleGeneration { current } => HttpError::Conflict(
                ErrorCode::StaleGeneration,
                format!("The route moved on; its generation is now {current}."),
            ),
            StoreError::StaleCircuit { .. } => HttpError::Conflict(
                ErrorCode::Conflict,
                "A shared circuit changed at the same time; send the request again.".into(),
            ),
            StoreError::AlreadyExists => HttpError::Conflict(
                ErrorCode::AlreadyExists,
                "The record already exists.".into(),
            ),
            // The route service answers a taken key with its route; this
            // is only what it would mean anywhere else.
            StoreError::KeyTaken => HttpError::Conflict(
                ErrorCode::AlreadyExists,
                "The idempotency key is already another route's.".into(),
            ),
            StoreError::Unavailable(d) => HttpError::Unavailable(d),
        }
    }
}

impl From<ProfileError> for HttpError {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::Invalid(errors) => HttpError::Invalid(errors),
            ProfileError::NotFound => HttpError::NotFound("The profile".into()),
            ProfileError::Stale { current } => HttpError::StaleProfile(current),
            ProfileError::Misconfigured(m) => {
                HttpError::Conflict(ErrorCode::ProfileMisconfigured, m)
            }
            ProfileError::Store(e) => e.into(),
        }
    }
}
