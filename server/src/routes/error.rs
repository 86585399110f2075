//! What the route service answers instead of a snapshot: each case a
//! caller can act on, mapped to one HTTP status in `http::routes`.

use crate::profiles::ProfileError;
use crate::store::StoreError;
use domain::policy::FieldError;
use domain::route::RouteSnapshot;

#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    #[error("not found: {0}")]
    NotFound(&'static str),
    #[error("the request is invalid")]
    Invalid(Vec<FieldError>),
    #[error("{0}")]
    Malformed(String),
    /// The expected generation is not the route's: here is the route now.
    #[error("the route moved on")]
    Stale(Box<RouteSnapshot>),
    /// The state table does not allow this now.
    #[error("{message}")]
    InvalidAction {
        message: String,
        route: Box<RouteSnapshot>,
    },
    #[error("{0}")]
    Conflict(String),
    #[error("the profile cannot authorise work: {0}")]
    ProfileUnusable(String),
    /// A stored route, attempt, schedule or dispatch row that does not
    /// read back: answered as an error, never replaced by a default.
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for RouteError {
    fn from(e: StoreError) -> Self {
        RouteError::Store(e)
    }
}

impl From<ProfileError> for RouteError {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::NotFound => RouteError::NotFound("profile"),
            ProfileError::Misconfigured(m) => RouteError::ProfileUnusable(m),
            ProfileError::Store(s) => RouteError::Store(s),
            other => RouteError::ProfileUnusable(other.to_string()),
        }
    }
}

pub type Result<T, E = RouteError> = std::result::Result<T, E>;
