//! The route list: every endpoint once, from which both the router and the
//! OpenAPI document are built (`utoipa-axum`). A handler's
//! `#[utoipa::path]` names its method and path; listing it here serves and
//! documents it. Every entry names the [`Rule`] that guards it (see
//! `crate::auth::rules`).

mod answers;
use super::guard::{guarded, guarded_decision};
use super::openapi::ApiDoc;
use super::{
    audit, catalogue, circuits, concrete, health, people, profiles, prometheus, routes, session,
    webhooks, AppState, HttpError,
};
use crate::auth::{Permission, Rule};
use axum::http::Method;
use axum::{Json, Router};
use std::sync::OnceLock;
use utoipa::openapi::OpenApi as Document;
use utoipa::OpenApi;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};
use utoipa_axum::routes;

/// One entry of the route list: a handler with its `#[utoipa::path]` and
/// the [`Rule`] that guards it. There is no way to list a handler without
/// a rule or without documenting it, and the permission-matrix test
/// requests every entry with every kind of credential.
pub enum Entry {
    /// Served and documented; the answers every guarded endpoint may give
    /// (401, 403, 429, 400/413/422 for bodies, 503) are added to its
    /// document from the rule ([`answers::add_common`]).
    Documented(Rule, UtoipaMethodRouter<AppState>),
    /// Like `Documented`, for a handler deciding on a failure of the route
    /// its path names: the guard reads that route with the token
    /// ([`super::guard::guarded_decision`]).
    Decision(Rule, UtoipaMethodRouter<AppState>),
}

impl Entry {
    /// The rule, the documented route, and whether the guard reads the
    /// route for a decision.
    fn parts(self) -> (Rule, UtoipaMethodRouter<AppState>, bool) {
        match self {
            Entry::Documented(rule, route) => (rule, route, false),
            Entry::Decision(rule, route) => (rule, route, true),
        }
    }
}

/// One endpoint and its rule, as the route list declares it (for the
/// permission matrix and the table in docs/access.md).
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
const END: Rule = Rule::AnyOf(&[Permission::EvidenceSubmit, Permission::RoutesAct]);

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
        doc(READ, routes!(audit::revisions)),
        doc(READ, routes!(routes::list)),
        // The handler picks: `office:assign` for the office caller,
        // `profiles:select` for every other.
        doc(
            Rule::AnyOf(&[Permission::ProfilesSelect, Permission::OfficeAssign]),
            routes!(routes::create),
        ),
        doc(READ, routes!(routes::get)),
        doc(READ, routes!(routes::attempts)),
        doc(READ, routes!(routes::route_events)),
        Entry::Decision(EVIDENCE, routes!(routes::failures)),
        doc(EVIDENCE, routes!(routes::effects)),
        doc(EVIDENCE, routes!(routes::success)),
        doc(Rule::Need(Permission::RoutesAct), routes!(routes::actions)),
        // The caller ends its own session; a person with `routes:act`
        // ends any route (the handler tells them apart).
        doc(END, routes!(routes::complete)),
        doc(END, routes!(routes::cancel)),
        doc(EVIDENCE, routes!(routes::claim)),
        doc(EVIDENCE, routes!(routes::ack)),
        doc(READ, routes!(routes::events)),
        // Concrete sessions: evidence in, like a failure report (and
        // rate-limited like one), but no route.
        doc(EVIDENCE, routes!(concrete::classify)),
        doc(EVIDENCE, routes!(concrete::evaluate)),
        doc(READ, routes!(circuits::list)),
        // A circuit holds every route on its resource back: only an
        // administrator overrides it.
        doc(Rule::Need(Permission::Admin), routes!(circuits::release)),
        doc(Rule::Need(Permission::Admin), routes!(circuits::probe)),
        // Moves time for every route: only an administrator (tests).
        doc(
            Rule::Need(Permission::Admin),
            routes!(routes::advance_clock),
        ),
        // Who is signed in; signing out (a browser write: CSRF-checked).
        doc(READ, routes!(session::get)),
        doc(READ, routes!(session::sign_out)),
        doc(READ, routes!(catalogue::summary)),
        doc(READ, routes!(catalogue::current)),
        // Swaps what every later classification of this instance uses.
        doc(Rule::Need(Permission::Admin), routes!(catalogue::reload)),
        // Classifier internals: profile selection does not reach them
        // (docs/design.md, “Permissions”).
        doc(
            Rule::Need(Permission::CatalogueRead),
            routes!(catalogue::unknown),
        ),
        // Declared before the entry by id: `reclassify` is not an id.
        doc(
            Rule::Need(Permission::CatalogueRead),
            routes!(catalogue::reclassify),
        ),
        doc(
            Rule::Need(Permission::CatalogueRead),
            routes!(catalogue::unknown_entry),
        ),
        // People: administrators only.
        doc(Rule::Need(Permission::Admin), routes!(people::list)),
        doc(Rule::Need(Permission::Admin), routes!(people::disable)),
        doc(Rule::Need(Permission::Admin), routes!(people::enable)),
        doc(Rule::Need(Permission::Admin), routes!(people::remove)),
        doc(Rule::Need(Permission::Admin), routes!(people::permissions)),
        // The audit trail names people and tokens: administrators only.
        doc(Rule::Need(Permission::Admin), routes!(audit::list)),
        // Webhooks reach out of the server with its data: administrators.
        doc(Rule::Need(Permission::Admin), routes!(webhooks::create)),
        doc(Rule::Need(Permission::Admin), routes!(webhooks::list)),
        doc(Rule::Need(Permission::Admin), routes!(webhooks::remove)),
        doc(Rule::Need(Permission::Admin), routes!(webhooks::deliveries)),
        // The API's description holds no data.
        doc(Rule::Public, routes!(openapi_json)),
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
        // The one-time sign-in link: its code is the credential. Opening
        // it shows a button; only posting the code uses it up.
        doc(Rule::Public, routes!(session::sign_in_page)),
        doc(Rule::Public, routes!(session::sign_in)),
    ]
}

fn mount(router: OpenApiRouter<AppState>, entries: Vec<Entry>) -> OpenApiRouter<AppState> {
    entries.into_iter().fold(router, |router, entry| {
        let (rule, (schemas, mut paths, method_router), decision) = entry.parts();
        for item in paths.paths.values_mut() {
            for (method, operation) in operations(item) {
                answers::add_common(rule, &method, operation);
            }
        }
        let method_router = if decision {
            guarded_decision(rule, method_router)
        } else {
            guarded(rule, method_router)
        };
        router.routes((schemas, paths, method_router))
    })
}

/// The operations of one documented path, by method.
fn operations(
    item: &mut utoipa::openapi::PathItem,
) -> impl Iterator<Item = (Method, &mut utoipa::openapi::path::Operation)> {
    [
        (Method::GET, item.get.as_mut()),
        (Method::PUT, item.put.as_mut()),
        (Method::POST, item.post.as_mut()),
        (Method::DELETE, item.delete.as_mut()),
        (Method::PATCH, item.patch.as_mut()),
    ]
    .into_iter()
    .filter_map(|(m, op)| op.map(|op| (m, op)))
}

fn endpoints_of(prefix: &str, entries: Vec<Entry>) -> Vec<Endpoint> {
    let mut out = Vec::new();
    for entry in entries {
        let (rule, (_, paths, _), _) = entry.parts();
        for (path, mut item) in paths.paths {
            for (method, _) in operations(&mut item) {
                out.push(Endpoint {
                    method,
                    path: format!("{prefix}{path}"),
                    rule,
                });
            }
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

/// This document: every endpoint, its request and response bodies and the
/// errors it may answer.
#[utoipa::path(get, path = "/openapi.json", tag = "meta", operation_id = "get_openapi_document",
    responses((status = 200, description = "The OpenAPI 3.1 document", body = Object)))]
async fn openapi_json() -> Json<Document> {
    Json(document().clone())
}
