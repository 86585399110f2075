//! `/api/v1/webhooks`: subscriptions (administrators only) and their
//! delivery logs. Thin: the rules live in [`crate::webhooks`].

use super::error::{HttpError, HttpResult};
use super::extract::{JsonBody, Query};
use super::AppState;
use crate::webhooks::WebhookError;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use domain::audit::AuditAction;
use domain::error::ApiError;
use domain::policy::{FieldError, FieldErrorCode};
use domain::webhook::{DeliveryLog, Webhook, WebhookWrite};
use serde::Deserialize;

impl From<WebhookError> for HttpError {
    fn from(e: WebhookError) -> Self {
        match e {
            WebhookError::Invalid { field, message } => HttpError::Invalid(vec![FieldError::new(
                field,
                FieldErrorCode::InvalidValue,
                message,
            )]),
            WebhookError::NotFound => HttpError::NotFound("That webhook".into()),
            WebhookError::Store(e) => e.into(),
        }
    }
}

/// Subscribe a URL to events. Deliveries are signed with `secret`
/// (`Kandev-Signature`, see docs/webhooks.md) and start with the events
/// committed after this.
#[utoipa::path(post, path = "/webhooks", tag = "webhooks", operation_id = "create_webhook",
    request_body = WebhookWrite,
    responses((status = 201, description = "Subscribed", body = Webhook),
              (status = 422, description = "The URL is not http(s), resolves to a private or loopback address \
                (without --allow-private-webhooks), no event is named, or the secret is too short; `errors` says which",
               body = ApiError)))]
pub async fn create(
    State(s): State<AppState>,
    JsonBody(req): JsonBody<WebhookWrite>,
) -> HttpResult<(StatusCode, Json<Webhook>)> {
    let hook = s.webhooks.create(&req).await?;
    s.audit()
        .record(
            AuditAction::WebhookCreated,
            &hook.id,
            Some(serde_json::json!({"url": hook.url, "events": hook.events})),
        )
        .await?;
    Ok((StatusCode::CREATED, Json(hook)))
}

/// Every subscription, oldest first (never their secrets).
#[utoipa::path(get, path = "/webhooks", tag = "webhooks", operation_id = "list_webhooks",
    responses((status = 200, description = "Every subscription", body = [Webhook])))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<Vec<Webhook>>> {
    Ok(Json(s.webhooks.list().await?))
}

/// Unsubscribe: the subscription and its undelivered deliveries go.
#[utoipa::path(delete, path = "/webhooks/{id}", tag = "webhooks", operation_id = "delete_webhook",
    params(("id" = String, Path, description = "The webhook's id")),
    responses((status = 204, description = "Removed"),
              (status = 404, description = "No webhook has this id", body = ApiError)))]
pub async fn remove(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<StatusCode> {
    let gone = s.webhooks.remove(&id).await?;
    s.audit()
        .record(
            AuditAction::WebhookRemoved,
            &gone.id,
            Some(serde_json::json!({"url": gone.url, "events": gone.events})),
        )
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct LogQuery {
    /// At most this many, newest first (1–200, default 50).
    pub limit: Option<i64>,
}

/// A subscription's delivery log, newest first: each delivery's state,
/// attempts, last status and error, and the body posted.
#[utoipa::path(get, path = "/webhooks/{id}/deliveries", tag = "webhooks", operation_id = "list_webhook_deliveries",
    params(("id" = String, Path, description = "The webhook's id"), LogQuery),
    responses((status = 200, description = "The subscription and its deliveries", body = DeliveryLog),
              (status = 404, description = "No webhook has this id", body = ApiError),
              (status = 422, description = "`limit` is out of range; `errors` names it", body = ApiError)))]
pub async fn deliveries(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<LogQuery>,
) -> HttpResult<Json<DeliveryLog>> {
    let limit = q.limit.unwrap_or(50);
    if !(1..=crate::store::webhooks::KEPT_DELIVERIES).contains(&limit) {
        return Err(HttpError::Invalid(vec![FieldError::new(
            "limit",
            FieldErrorCode::OutOfRange,
            format!(
                "limit must be between 1 and {}",
                crate::store::webhooks::KEPT_DELIVERIES
            ),
        )]));
    }
    Ok(Json(s.webhooks.deliveries(&id, limit).await?))
}
