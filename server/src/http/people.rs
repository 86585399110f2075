//! `/api/v1/people`: the administrator's people management, the same as
//! `kandev-recovery user list|disable|enable|remove|grant|revoke`. Every
//! endpoint needs `admin` (the route list says so).

use super::error::{HttpError, HttpResult};
use super::extract::JsonBody;
use super::AppState;
use crate::auth::{Access, Permissions};
use crate::store::{PersonRow, UserRow};
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::Json;
use domain::error::ApiError;
use domain::people::Person;
use domain::policy::{FieldError, FieldErrorCode};
use serde::Deserialize;

fn person_of(p: PersonRow) -> Person {
    Person {
        id: p.user.id,
        name: p.user.name,
        permissions: Permissions::from_stored(&p.user.permissions).list(),
        disabled: p.disabled_at_ms.is_some(),
        sessions: p.sessions,
    }
}

/// Everyone who signs in, by name.
pub async fn people(access: &Access) -> HttpResult<Vec<Person>> {
    Ok(access
        .list_people()
        .await?
        .into_iter()
        .map(person_of)
        .collect())
}

/// The person `changed` names, as the list shows them now.
async fn answer(access: &Access, changed: Option<UserRow>) -> HttpResult<Json<Person>> {
    let user = changed.ok_or_else(|| HttpError::NotFound("That person".into()))?;
    people(access)
        .await?
        .into_iter()
        .find(|p| p.id == user.id)
        .map(Json)
        .ok_or_else(|| HttpError::NotFound("That person".into()))
}

/// Everyone who signs in: permissions, enabled or not, live sessions.
#[utoipa::path(get, path = "/people", tag = "access", operation_id = "list_people",
    responses((status = 200, description = "Everyone who signs in, by name", body = [Person])))]
pub async fn list(State(s): State<AppState>) -> HttpResult<Json<Vec<Person>>> {
    Ok(Json(people(&s.access).await?))
}

/// Disable a person: their sessions end at once; they cannot sign in
/// until enabled.
#[utoipa::path(post, path = "/people/{id}/disable", tag = "access", operation_id = "disable_person",
    params(("id" = String, Path, description = "The person's id")),
    responses((status = 200, description = "The person, disabled", body = Person),
              (status = 404, description = "Nobody has this id", body = ApiError)))]
pub async fn disable(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> HttpResult<Json<Person>> {
    let changed = s.access.disable_user(&id).await?;
    answer(&s.access, changed).await
}

/// Enable a disabled person.
#[utoipa::path(post, path = "/people/{id}/enable", tag = "access", operation_id = "enable_person",
    params(("id" = String, Path, description = "The person's id")),
    responses((status = 200, description = "The person, enabled", body = Person),
              (status = 404, description = "Nobody has this id", body = ApiError)))]
pub async fn enable(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<Json<Person>> {
    let changed = s.access.enable_user(&id).await?;
    answer(&s.access, changed).await
}

/// Remove a person; their sessions end at once.
#[utoipa::path(delete, path = "/people/{id}", tag = "access", operation_id = "remove_person",
    params(("id" = String, Path, description = "The person's id")),
    responses((status = 204, description = "Removed"),
              (status = 404, description = "Nobody has this id", body = ApiError)))]
pub async fn remove(State(s): State<AppState>, Path(id): Path<String>) -> HttpResult<StatusCode> {
    match s.access.remove_user(&id).await? {
        Some(_) => Ok(StatusCode::NO_CONTENT),
        None => Err(HttpError::NotFound("That person".into())),
    }
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPermissions {
    /// Every permission the person has from now on. Read as names, so an
    /// unknown one is answered with a field error that lists the known.
    #[schema(value_type = Vec<domain::access::Permission>)]
    pub permissions: Vec<String>,
}

/// Set a person's permissions (from their next request on).
#[utoipa::path(put, path = "/people/{id}/permissions", tag = "access", operation_id = "set_person_permissions",
    params(("id" = String, Path, description = "The person's id")),
    request_body = SetPermissions,
    responses((status = 200, description = "The person with their new permissions", body = Person),
              (status = 404, description = "Nobody has this id", body = ApiError),
              (status = 422, description = "A permission is unknown; `errors` names it", body = ApiError)))]
pub async fn permissions(
    State(s): State<AppState>,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<SetPermissions>,
) -> HttpResult<Json<Person>> {
    let set = Permissions::parse_list(&req.permissions.join(",")).map_err(|message| {
        HttpError::Invalid(vec![FieldError::new(
            "permissions",
            FieldErrorCode::InvalidValue,
            message,
        )])
    })?;
    let changed = s.access.change_permissions(&id, |_| set).await?;
    answer(&s.access, changed).await
}
