//! `/api/v1/circuits`: the shared resource circuits, for people and
//! dashboards, and an administrator's two controls over one: release it
//! now, or make it probe now (audited, with an event).

use super::error::{HttpError, HttpResult};
use super::extract::JsonBody;
use super::AppState;
use crate::circuits::{CircuitKey, Operation};
use crate::routes::circuit_controls::ControlError;
use axum::extract::State;
use axum::Json;
use domain::circuit::{CircuitList, CircuitRequest, CircuitView};
use domain::error::{ApiError, ErrorCode};
use domain::policy::{FieldError, FieldErrorCode};

/// Every circuit: its state, scope, resource (and in words), until when it
/// is open, who holds its probe, and how many routes wait for it. Not
/// closed ones first.
#[utoipa::path(get, path = "/circuits", tag = "circuits", operation_id = "list_circuits",
    responses((status = 200, description = "Every circuit, not closed ones first", body = CircuitList)))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<CircuitList>> {
    Ok(Json(s.routes.circuit_list().await?))
}

impl From<ControlError> for HttpError {
    fn from(e: ControlError) -> Self {
        match e {
            ControlError::NotFound(key) => HttpError::NotFound(format!("The circuit {key}")),
            ControlError::Closed(m) => HttpError::Conflict(ErrorCode::InvalidAction, m),
            e @ ControlError::Moved(_) => HttpError::Conflict(ErrorCode::Conflict, e.to_string()),
            ControlError::Route(e) => e.into(),
        }
    }
}

fn key(req: CircuitRequest) -> HttpResult<CircuitKey> {
    if req.resource.trim().is_empty() {
        return Err(HttpError::Invalid(vec![FieldError::new(
            "resource",
            FieldErrorCode::Required,
            "name the circuit's resource, as GET /api/v1/circuits lists it",
        )]));
    }
    Ok(CircuitKey {
        scope: req.scope,
        resource: req.resource,
    })
}

/// Release a circuit now, as if its probe had succeeded: it closes, and
/// the routes waiting for it go, a few at a time. Audited
/// (`circuit.released`); its event is `circuit.closed`.
#[utoipa::path(post, path = "/circuits/release", tag = "circuits", operation_id = "release_circuit",
    request_body = CircuitRequest,
    responses((status = 200, description = "Released: the circuit now, and the routes still waiting for it", body = CircuitView),
              (status = 404, description = "No circuit has this scope and resource", body = ApiError),
              (status = 409, description = "The circuit is closed already (`invalid_action`), or a route changed it meanwhile (`conflict`); nothing was changed", body = ApiError),
              (status = 422, description = "`scope` is not a circuit scope or `resource` is empty; `errors` names the field", body = ApiError)))]
pub async fn release(
    State(s): State<AppState>,
    JsonBody(req): JsonBody<CircuitRequest>,
) -> HttpResult<Json<CircuitView>> {
    let key = key(req)?;
    Ok(Json(
        s.routes.control_circuit(&key, Operation::Release).await?,
    ))
}

/// Make a circuit probe now: it expires, and the next route to go is its
/// one probe (a probe in flight is given up). Audited
/// (`circuit.probed`); its event is `circuit.probe_requested`.
#[utoipa::path(post, path = "/circuits/probe", tag = "circuits", operation_id = "probe_circuit",
    request_body = CircuitRequest,
    responses((status = 200, description = "Expired: the circuit now, and the routes still waiting for it", body = CircuitView),
              (status = 404, description = "No circuit has this scope and resource", body = ApiError),
              (status = 409, description = "The circuit is closed (`invalid_action`), or a route changed it meanwhile (`conflict`); nothing was changed", body = ApiError),
              (status = 422, description = "`scope` is not a circuit scope or `resource` is empty; `errors` names the field", body = ApiError)))]
pub async fn probe(
    State(s): State<AppState>,
    JsonBody(req): JsonBody<CircuitRequest>,
) -> HttpResult<Json<CircuitView>> {
    let key = key(req)?;
    Ok(Json(
        s.routes.control_circuit(&key, Operation::Probe).await?,
    ))
}
