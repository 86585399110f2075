//! The catalogue endpoints: what the catalogue in force holds, which
//! version this instance runs, its reload, and the log of evidence it did
//! not recognise.

use super::{AppState, HttpError, HttpResult};
use crate::catalogue::ReloadError;
use crate::unknown::UnknownSnapshot;
use axum::extract::{Path, State};
use axum::Json;
use classify::CatalogueSummary;
use domain::catalogue::{
    CatalogueInForce, CatalogueReload, UnknownDetail, UnknownReclassification,
};
use domain::error::ErrorCode;
use domain::policy::{FieldError, FieldErrorCode};

/// The catalogue in force: its version, precedence tiers, every code with
/// its class and an explanation, and how many rules it has.
#[utoipa::path(get, path = "/catalogue", tag = "catalogue", operation_id = "get_catalogue",
    responses((status = 200, description = "The catalogue in force", body = CatalogueSummary)))]
pub async fn summary(State(s): State<AppState>) -> Json<CatalogueSummary> {
    Json(s.catalogue.current().describe())
}

/// Which catalogue this instance classifies with: version, source
/// (embedded or a directory), when it was loaded and how many rules it has.
/// Each instance of a deployment answers for itself.
#[utoipa::path(get, path = "/catalogue/current", tag = "catalogue", operation_id = "get_catalogue_in_force",
    responses((status = 200, description = "The catalogue this instance runs", body = CatalogueInForce)))]
pub async fn current(State(s): State<AppState>) -> Json<CatalogueInForce> {
    Json(s.catalogue.current().in_force())
}

/// Reads the catalogue directory (`serve --catalogue DIR`) again and swaps
/// it in whole; when it does not load, the catalogue in force stays and
/// the answer lists every problem with its file, entry and field. Reloads
/// this instance only: send it to each (or SIGHUP each).
#[utoipa::path(post, path = "/catalogue/reload", tag = "catalogue", operation_id = "reload_catalogue",
    responses((status = 200, description = "The directory loaded and is in force", body = CatalogueReload),
              (status = 409, description = "`catalogue_not_reloadable`: the server runs the embedded catalogue", body = domain::error::ApiError),
              (status = 422, description = "`invalid_catalogue`: the directory did not load; the old catalogue stays, `errors` says why", body = domain::error::ApiError)))]
pub async fn reload(State(s): State<AppState>) -> HttpResult<Json<CatalogueReload>> {
    let catalogues = s.catalogue.clone();
    let outcome = tokio::task::spawn_blocking(move || catalogues.reload())
        .await
        .map_err(|e| HttpError::Internal(format!("catalogue reload: {e}")))?;
    match outcome {
        Ok(answer) => Ok(Json(answer)),
        Err(ReloadError::Embedded) => Err(HttpError::Conflict(
            ErrorCode::CatalogueNotReloadable,
            "This server runs the embedded catalogue, which does not reload; start it with --catalogue DIR.".into(),
        )),
        Err(ReloadError::Invalid { kept_version, error }) => Err(HttpError::InvalidCatalogue(
            format!(
                "The catalogue directory did not load ({} problems); version {kept_version} stays in force.",
                error.problems.len()
            ),
            error.problems.iter().map(|p| problem_field(p)).collect(),
        )),
    }
}

/// A catalogue problem (`rules/x.toml, rule `a.b`, field `tier`: unknown
/// tier`) as a field error: where, then what.
fn problem_field(problem: &str) -> FieldError {
    let (at, what) = problem.split_once(": ").unwrap_or(("catalogue", problem));
    FieldError::new(at, FieldErrorCode::InvalidValue, what)
}

/// Evidence the catalogue did not recognise: sanitised excerpts,
/// de-duplicated and counted, most frequent first (bounded; the oldest are
/// evicted), each with its id (signature), first and last sighting, agent,
/// and the latest route attempts it was seen in.
#[utoipa::path(get, path = "/catalogue/unknown", tag = "catalogue", operation_id = "list_unknown_evidence",
    responses((status = 200, description = "Unrecognised evidence, most frequent first", body = UnknownSnapshot)))]
pub async fn unknown(State(s): State<AppState>) -> HttpResult<Json<UnknownSnapshot>> {
    Ok(Json(s.unknown.snapshot().await?))
}

/// One unknown-log entry with the sanitised skeleton of its latest
/// sighting: item kinds, HTTP statuses and header names, ACP codes, exits,
/// agent, provider, model, phase and a bounded sanitised excerpt per item.
#[utoipa::path(get, path = "/catalogue/unknown/{id}", tag = "catalogue", operation_id = "get_unknown_evidence",
    params(("id" = String, Path, description = "The entry's id (its signature, from the list)")),
    responses((status = 200, description = "The entry and its skeleton", body = UnknownDetail),
              (status = 404, description = "The log has no such entry (never logged, or evicted)", body = domain::error::ApiError)))]
pub async fn unknown_entry(
    State(s): State<AppState>,
    Path(id): Path<String>,
) -> HttpResult<Json<UnknownDetail>> {
    s.unknown
        .detail(&id)
        .await?
        .map(Json)
        .ok_or_else(|| HttpError::NotFound(format!("The unknown-log entry `{id}`")))
}

/// What the catalogue in force makes of the logged unknowns: each entry's
/// skeleton classified again — how many it now classifies, and as what.
/// After a reload, this is what the new version would have done with them.
#[utoipa::path(get, path = "/catalogue/unknown/reclassify", tag = "catalogue", operation_id = "reclassify_unknown_evidence",
    responses((status = 200, description = "The logged unknowns as the catalogue in force classifies them", body = UnknownReclassification)))]
pub async fn reclassify(State(s): State<AppState>) -> HttpResult<Json<UnknownReclassification>> {
    let catalogue = s.catalogue.current();
    Ok(Json(s.unknown.reclassify(&catalogue).await?))
}
