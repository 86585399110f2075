//! Liveness and readiness.

use super::AppState;
use axum::extract::State;
use axum::http::StatusCode;

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", responses((status = 200, body = String)))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// The process can serve requests: the database answers.
#[utoipa::path(get, path = "/readyz", tag = "health",
    responses((status = 200, body = String), (status = 503, body = String)))]
pub async fn readyz(State(s): State<AppState>) -> (StatusCode, String) {
    match s.store.ping().await {
        Ok(()) => (StatusCode::OK, "ready".into()),
        Err(e) => {
            tracing::warn!(error = %e, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                "database unavailable".into(),
            )
        }
    }
}
