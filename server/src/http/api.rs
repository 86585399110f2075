//! The route list: every endpoint once, from which both the router and the
//! OpenAPI document are built (`utoipa-axum`). A handler's
//! `#[utoipa::path]` names its method and path; listing it here serves and
//! documents it. Every entry names the [`Rule`] that guards it (see
//! `crate::auth::rules`).

use super::guard::guarded;
use super::openapi::ApiDoc;
use super::{
    circuits, health, profiles, prometheus, routes, session, AppState, HttpError, HttpResult,
};
use crate::auth::{Permission, Rule};
use crate::classify::{Catalogue, CatalogueSummary, UnknownSnapshot};
use axum::extract::State;
use axum::http::Method;
use axum::routing::{get, MethodRouter};
use axum::{Json, Router};
use std::sync::OnceLock;
use utoipa::openapi::OpenApi as Document;
use utoipa::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};
use utoipa_axum::routes;

/// One entry of the route list: a handler with the [`Rule`] that guards
/// it. There is no way to list a handler without a rule, and the
/// permission-matrix test requests every entry with every kind of
/// credential.
pub enum Entry {
    /// A handler with its `#[utoipa::path]`: served and documented.
    Documented(Rule, UtoipaMethodRouter<AppState>),
    /// An undocumented route.
    Plain(Rule, Method, &'static str, MethodRouter<AppState>),
}

/// One endpoint and its rule, as the route list declares it (for the
/// permission matrix and the README's table).
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub method: Method,
    /// The full path with `{param}` placeholders.
    pub path: String,
    pub rule: Rule,
}

fn doc(rule: Rule, route: UtoipaMethodRouter<AppState>) -> Entry {
    Entry::Documented(rule, route)
}

const READ: Rule = Rule::SignedIn;
const MANAGE: Rule = Rule::Need(Permission::ProfilesManage);
const EVIDENCE: Rule = Rule::Need(Permission::EvidenceSubmit);

/// Everything under `/api/v1`, one handler per entry.
fn v1() -> Vec<Entry> {
    vec![
        doc(READ, routes!(profiles::list)),
        doc(MANAGE, routes!(profiles::create)),
        // A dry run changes nothing: anyone who may read profiles may try
        // a policy out.
        doc(READ, routes!(profiles::validate)),
        doc(READ, routes!(profiles::get)),
        doc(MANAGE, routes!(profiles::update)),
        doc(MANAGE, routes!(profiles::delete)),
        doc(READ, routes!(routes::list)),
        // The handler picks: `office:assign` for the office caller,
        // `profiles:select` for every other.
        doc(
            Rule::AnyOf(&[Permission::ProfilesSelect, Permission::OfficeAssign]),
            routes!(routes::create),
        ),
        doc(READ, routes!(routes::get)),
        doc(READ, routes!(routes::attempts)),
        doc(EVIDENCE, routes!(routes::failures)),
        doc(EVIDENCE, routes!(routes::effects)),
        doc(EVIDENCE, routes!(routes::success)),
        doc(Rule::Need(Permission::RoutesAct), routes!(routes::actions)),
        doc(EVIDENCE, routes!(routes::claim)),
        doc(EVIDENCE, routes!(routes::ack)),
        doc(READ, routes!(routes::events)),
        doc(READ, routes!(circuits::list)),
        // Moves time for every route: only an administrator (tests).
        doc(
            Rule::Need(Permission::Admin),
            routes!(routes::advance_clock),
        ),
        // Who is signed in; signing out (a browser write: CSRF-checked).
        doc(READ, routes!(session::get)),
        doc(READ, routes!(session::sign_out)),
        // Undocumented: the catalogue's own summary types are the contract.
        Entry::Plain(READ, Method::GET, "/catalogue", get(catalogue_summary)),
        // Classifier internals: SPEC.md keeps them from profile selection.
        Entry::Plain(
            Rule::Need(Permission::CatalogueRead),
            Method::GET,
            "/catalogue/unknown",
            get(catalogue_unknown),
        ),
        // The API's description holds no data.
        Entry::Plain(
            Rule::Public,
            Method::GET,
            "/openapi.json",
            get(|| async { Json(document().clone()) }),
        ),
    ]
}

/// Outside `/api/v1`: the probes (public, so orchestrators need no
/// secret) and the Prometheus metrics (any token: route counts and error
/// codes are this installation's business).
fn root() -> Vec<Entry> {
    vec![
        doc(Rule::Public, routes!(health::healthz)),
        doc(Rule::Public, routes!(health::readyz)),
        doc(READ, routes!(prometheus::metrics)),
        // The one-time sign-in link: its code is the credential.
        Entry::Plain(Rule::Public, Method::GET, "/sign-in", get(session::sign_in)),
    ]
}

fn mount(router: OpenApiRouter<AppState>, entries: Vec<Entry>) -> OpenApiRouter<AppState> {
    entries
        .into_iter()
        .fold(router, |router, entry| match entry {
            Entry::Documented(rule, (schemas, paths, method_router)) => {
                router.routes((schemas, paths, guarded(rule, method_router)))
            }
            Entry::Plain(rule, _, path, method_router) => {
                router.route(path, guarded(rule, method_router))
            }
        })
}

fn endpoints_of(prefix: &str, entries: Vec<Entry>) -> Vec<Endpoint> {
    let mut out = Vec::new();
    for entry in entries {
        match entry {
            Entry::Documented(rule, (_, paths, _)) => {
                for (path, item) in paths.paths {
                    let methods = [
                        (Method::GET, item.get.is_some()),
                        (Method::PUT, item.put.is_some()),
                        (Method::POST, item.post.is_some()),
                        (Method::DELETE, item.delete.is_some()),
                        (Method::PATCH, item.patch.is_some()),
                    ];
                    for (method, present) in methods {
                        if present {
                            out.push(Endpoint {
                                method,
                                path: format!("{prefix}{path}"),
                                rule,
                            });
                        }
                    }
                }
            }
            Entry::Plain(rule, method, path, _) => out.push(Endpoint {
                method,
                path: format!("{prefix}{path}"),
                rule,
            }),
        }
    }
    out
}

/// Every endpoint of the route list with its rule.
pub fn endpoints() -> Vec<Endpoint> {
    let mut all = endpoints_of("/api/v1", v1());
    all.extend(endpoints_of("", root()));
    all
}

/// The API, the health probes and `/metrics`, with their document.
fn parts() -> (Router<AppState>, Document) {
    let v1 = mount(OpenApiRouter::new(), v1())
        .fallback(|| async { HttpError::NotFound("That API endpoint".into()) });
    mount(
        OpenApiRouter::with_openapi(ApiDoc::openapi()).nest("/api/v1", v1),
        root(),
    )
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
