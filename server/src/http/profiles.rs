//! `/api/v1/profiles`: dynamic profile CRUD and the validate dry run.
//! Thin: every rule lives in `crate::profiles` and `domain::profile`.

use super::error::HttpResult;
use super::extract::{JsonBody, Query};
use super::AppState;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use domain::error::ApiError;
use domain::profile::{Profile, ValidationReport};
use serde::Deserialize;

/// List every dynamic profile, oldest first.
#[utoipa::path(get, path = "/profiles", tag = "profiles",
    responses((status = 200, body = [Profile]), (status = 503, body = ApiError)))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<Vec<Profile>>> {
    Ok(Json(s.profiles.list().await?))
}

/// Create a dynamic profile. Candidates without an `id` get one; legacy
/// policies are normalised; the normalised profile is returned.
#[utoipa::path(post, path = "/profiles", tag = "profiles",
    request_body = domain::profile::ProfileWrite,
    responses((status = 201, body = Profile), (status = 400, body = ApiError),
              (status = 422, body = ApiError), (status = 503, body = ApiError)))]
pub async fn create(
    State(s): State<AppState>,
    JsonBody(body): JsonBody,
) -> HttpResult<(StatusCode, Json<Profile>)> {
    let profile = s.profiles.create(&body).await?;
    tracing::info!(profile = %profile.id, "profile created");
    Ok((StatusCode::CREATED, Json(profile)))
}

/// Validate a profile without storing it: the normalised document and each
/// class's schedule preview.
#[utoipa::path(post, path = "/profiles/validate", tag = "profiles",
    request_body = domain::profile::ProfileWrite,
    responses((status = 200, body = ValidationReport), (status = 400, body = ApiError),
              (status = 422, body = ApiError)))]
pub async fn validate(
    State(s): State<AppState>,
    JsonBody(body): JsonBody,
) -> HttpResult<Json<ValidationReport>> {
    Ok(Json(s.profiles.validate(&body)?))
}

/// Read one profile.
#[utoipa::path(get, path = "/profiles/{id}", tag = "profiles",
    params(("id" = String, Path)),
    responses((status = 200, body = Profile), (status = 404, body = ApiError)))]
pub async fn get(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<Json<Profile>> {
    Ok(Json(s.profiles.get(&id).await?))
}

/// Replace a profile. The body carries the `revision` it was based on; a
/// stale revision answers 409 with the stored profile.
#[utoipa::path(put, path = "/profiles/{id}", tag = "profiles",
    params(("id" = String, Path)), request_body = domain::profile::ProfileWrite,
    responses((status = 200, body = Profile), (status = 404, body = ApiError),
              (status = 409, body = ApiError), (status = 422, body = ApiError)))]
pub async fn update(
    State(s): State<AppState>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> HttpResult<Json<Profile>> {
    let profile = s.profiles.update(&id, &body).await?;
    tracing::info!(profile = %profile.id, revision = profile.revision, "profile updated");
    Ok(Json(profile))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
pub struct DeleteQuery {
    /// Delete only if the profile is still at this revision.
    pub revision: Option<i64>,
}

/// Delete a profile (optionally only at a given revision).
#[utoipa::path(delete, path = "/profiles/{id}", tag = "profiles",
    params(("id" = String, Path), DeleteQuery),
    responses((status = 204), (status = 404, body = ApiError), (status = 409, body = ApiError)))]
pub async fn delete(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<DeleteQuery>,
) -> HttpResult<StatusCode> {
    s.profiles.delete(&id, q.revision).await?;
    tracing::info!(profile = %id, "profile deleted");
    Ok(StatusCode::NO_CONTENT)
}
