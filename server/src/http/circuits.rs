//! `/api/v1/circuits`: the shared resource circuits, for people and
//! dashboards. Read-only; circuits change only with the route changes that
//! cause them.

use super::error::HttpResult;
use super::AppState;
use axum::extract::State;
use axum::Json;
use domain::circuit::CircuitList;

/// Every circuit: its state, scope, resource (and in words), until when it
/// is open, who holds its probe, and how many routes wait for it. Not
/// closed ones first.
#[utoipa::path(get, path = "/circuits", tag = "circuits", operation_id = "list_circuits",
    responses((status = 200, description = "Every circuit, not closed ones first", body = CircuitList)))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<CircuitList>> {
    Ok(Json(s.routes.circuit_list().await?))
}
