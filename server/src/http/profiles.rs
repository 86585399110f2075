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
#[utoipa::path(get, path = "/profiles", tag = "profiles", operation_id = "list_profiles",
    responses((status = 200, description = "Every profile", body = [Profile])))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<Vec<Profile>>> {
    Ok(Json(s.profiles.list().await?))
}

/// Create a dynamic profile. Candidates without an `id` get one; legacy
/// policies are normalised; the normalised profile is returned.
#[utoipa::path(post, path = "/profiles", tag = "profiles", operation_id = "create_profile",
    request_body = domain::profile::ProfileWrite,
    responses((status = 201, description = "Created: the normalised profile", body = Profile)))]
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
#[utoipa::path(post, path = "/profiles/validate", tag = "profiles", operation_id = "validate_profile",
    request_body = domain::profile::ProfileWrite,
    responses((status = 200, description = "Valid: the normalised document and each class's schedule preview; nothing was stored",
               body = ValidationReport)))]
pub async fn validate(
    State(s): State<AppState>,
    JsonBody(body): JsonBody,
) -> HttpResult<Json<ValidationReport>> {
    Ok(Json(s.profiles.validate(&body)?))
}

/// Read one profile.
#[utoipa::path(get, path = "/profiles/{id}", tag = "profiles", operation_id = "get_profile",
    params(("id" = String, Path, description = "The profile's id")),
    responses((status = 200, description = "The profile", body = Profile),
              (status = 404, description = "No profile has this id", body = ApiError)))]
pub async fn get(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<Json<Profile>> {
    Ok(Json(s.profiles.get(&id).await?))
}

/// Replace a profile. The body carries the `revision` it was based on; a
/// stale revision answers 409 with the stored profile.
#[utoipa::path(put, path = "/profiles/{id}", tag = "profiles", operation_id = "update_profile",
    params(("id" = String, Path, description = "The profile's id")),
    request_body = domain::profile::ProfileWrite,
    responses((status = 200, description = "Replaced: the normalised profile at its new revision", body = Profile),
              (status = 404, description = "No profile has this id", body = ApiError),
              (status = 409, description = "`stale_revision`: someone saved the profile since `revision`; `profile` is the stored one",
               body = ApiError)))]
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
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    /// Delete only if the profile is still at this revision.
    pub revision: Option<i64>,
}

/// Delete a profile (optionally only at a given revision).
#[utoipa::path(delete, path = "/profiles/{id}", tag = "profiles", operation_id = "delete_profile",
    params(("id" = String, Path, description = "The profile's id"), DeleteQuery),
    responses((status = 204, description = "Deleted"),
              (status = 404, description = "No profile has this id", body = ApiError),
              (status = 409, description = "`stale_revision`: the profile is no longer at `revision`; `profile` is the stored one",
               body = ApiError)))]
pub async fn delete(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<DeleteQuery>,
) -> HttpResult<StatusCode> {
    s.profiles.delete(&id, q.revision).await?;
    tracing::info!(profile = %id, "profile deleted");
    Ok(StatusCode::NO_CONTENT)
}
