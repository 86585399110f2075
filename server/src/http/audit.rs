//! `/api/v1/audit` (the trail, for administrators) and
//! `/api/v1/profiles/{id}/revisions` (a profile's kept revisions, for
//! anyone who may read profiles). Thin: the rows come from
//! [`crate::audit`] and the store.

use super::error::{HttpError, HttpResult};
use super::extract::Query;
use super::AppState;
use axum::extract::{Path, State};
use axum::Json;
use domain::audit::{AuditEntry, ProfileRevision};
use domain::error::ApiError;
use domain::policy::{FieldError, FieldErrorCode};
use serde::Deserialize;

/// The most entries one page of the trail holds.
pub const AUDIT_PAGE_MAX: i64 = 500;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// Entries with an id above this one (the last id of the page before).
    pub after: Option<i64>,
    /// Only entries about this route, profile, token, person, circuit or
    /// webhook id.
    pub subject: Option<String>,
    /// At most this many (1–500, default 100).
    pub limit: Option<i64>,
}

/// The audit trail, oldest first: every manual action, profile change,
/// token and person change, circuit release and webhook change, with who
/// made it and when. Page with `after` (the last `id` seen).
#[utoipa::path(get, path = "/audit", tag = "audit", operation_id = "list_audit",
    params(AuditQuery),
    responses((status = 200, description = "Entries after `after`, oldest first", body = [AuditEntry]),
              (status = 422, description = "`limit` is out of range; `errors` names it", body = ApiError)))]
pub async fn list(
    State(s): State<AppState>,
    Query(q): Query<AuditQuery>,
) -> HttpResult<Json<Vec<AuditEntry>>> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=AUDIT_PAGE_MAX).contains(&limit) {
        return Err(HttpError::Invalid(vec![FieldError::new(
            "limit",
            FieldErrorCode::OutOfRange,
            format!("limit must be between 1 and {AUDIT_PAGE_MAX}"),
        )]));
    }
    let entries = s
        .audit()
        .entries(q.after.unwrap_or(0), q.subject.as_deref(), limit)
        .await?;
    Ok(Json(entries))
}

/// Every kept revision of a profile, oldest first, with who saved it and
/// when (kept after the profile is deleted).
#[utoipa::path(get, path = "/profiles/{id}/revisions", tag = "profiles", operation_id = "list_profile_revisions",
    params(("id" = String, Path, description = "The profile's id")),
    responses((status = 200, description = "Its revisions, oldest first", body = [ProfileRevision]),
              (status = 404, description = "No revision of such a profile is kept", body = ApiError)))]
pub async fn revisions(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> HttpResult<Json<Vec<ProfileRevision>>> {
    let rows = s.store.profile_revisions(&id).await?;
    if rows.is_empty() {
        return Err(HttpError::NotFound("That profile".into()));
    }
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let corrupt = |what: &str| {
            HttpError::Internal(format!(
                "profile {} revision {}: {what}",
                r.profile_id, r.revision
            ))
        };
        out.push(ProfileRevision {
            document: serde_json::from_str(&r.document)
                .map_err(|_| corrupt("document is not JSON"))?,
            actor: crate::audit::actor_of_json(&r.actor)?,
            at: chrono::DateTime::from_timestamp_millis(r.at_ms)
                .ok_or_else(|| corrupt("time out of range"))?,
            profile_id: r.profile_id,
            revision: r.revision,
            name: r.name,
        });
    }
    Ok(Json(out))
}
