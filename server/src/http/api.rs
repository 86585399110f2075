//! The route list: every endpoint once, from which both the router and the
//! OpenAPI document are built (`utoipa-axum`). A handler's
//! `#[utoipa::path]` names its method and path; listing it here serves and
//! documents it.

use super::openapi::ApiDoc;
use super::{circuits, health, profiles, prometheus, routes, AppState, HttpError, HttpResult};
use crate::classify::{Catalogue, CatalogueSummary, UnknownSnapshot};
use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use std::sync::OnceLock;
use utoipa::openapi::OpenApi as Document;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Everything under `/api/v1`.
fn v1() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(profiles::list, profiles::create))
        .routes(routes!(profiles::validate))
        .routes(routes!(profiles::get, profiles::update, profiles::delete))
        .routes(routes!(routes::list, routes::create))
        .routes(routes!(routes::get))
        .routes(routes!(routes::attempts))
        .routes(routes!(routes::failures))
        .routes(routes!(routes::effects))
        .routes(routes!(routes::success))
        .routes(routes!(routes::actions))
        .routes(routes!(routes::claim))
        .routes(routes!(routes::ack))
        .routes(routes!(routes::events))
        .routes(routes!(circuits::list))
        .routes(routes!(routes::advance_clock))
        // Undocumented: the catalogue's own summary types are the contract.
        .route("/catalogue", get(catalogue_summary))
        .route("/catalogue/unknown", get(catalogue_unknown))
        .route("/openapi.json", get(|| async { Json(document().clone()) }))
        .fallback(|| async { HttpError::NotFound("That API endpoint".into()) })
}

/// The API, the health probes and `/metrics`, with their document.
fn parts() -> (Router<AppState>, Document) {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .nest("/api/v1", v1())
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(prometheus::metrics))
        .split_for_parts()
}

/// The router of every API endpoint and health probe.
pub fn router() -> Router<AppState> {
    parts().0
}

/// The OpenAPI document of the same routes.
pub fn document() -> &'static Document {
    static DOCUMENT: OnceLock<Document> = OnceLock::new();
    DOCUMENT.get_or_init(|| parts().1)
}

async fn catalogue_summary() -> Json<CatalogueSummary> {
    Json(Catalogue::builtin().describe())
}

async fn catalogue_unknown(State(s): State<AppState>) -> HttpResult<Json<UnknownSnapshot>> {
    Ok(Json(s.unknown.snapshot().await?))
}
