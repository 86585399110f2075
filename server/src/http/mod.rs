//! The HTTP surface: REST under `/api/v1`, the OpenAPI document, health
//! probes and metrics, and the server-rendered Leptos pages with their
//! static assets.
//!
//! - [`api`]: the route list — the API router and its OpenAPI document
//!   from one list; [`openapi`] holds the document's frame.
//! - `profiles`, `routes`, `circuits`, `catalogue`, `health`: the
//!   handlers, thin over the services.
//! - `prometheus`: `GET /metrics` and the middleware that counts and times
//!   requests by route template (what is measured: [`crate::meters`]).
//! - [`extract`]: the request extractors and their one rejection each.
//! - [`guard`]: access control on every route (rules in `crate::auth`).
//! - [`error`]: [`HttpError`], one status match and one body shape.
//! - `pages`: the server side of the UI (the page renderer's backend).
//! - [`conn`]: the accept loop: connection cap, header, body and idle
//!   timeouts, the early 413.
//! - [`server`]: the one place a server is assembled — used by `serve`,
//!   the tests and the benchmarks.

pub mod api;
mod audit;
mod catalogue;
mod circuits;
mod concrete;
pub mod conn;
mod error;
pub mod extract;
pub mod guard;
mod headers;
mod health;
pub mod openapi;
mod pages;
mod people;
mod profiles;
mod prometheus;
mod routes;
pub mod server;
mod session;
mod webhooks;

pub use error::{HttpError, HttpResult};

/// How often an open event stream checks its credential again: a revoked
/// token's, a signed-out or ended session's, or a disabled or removed
/// person's stream closes within this long.
pub const STREAM_RECHECK: std::time::Duration = std::time::Duration::from_secs(2);
pub use server::{redact_url, serve, shutdown_signal, Server};

use crate::auth::Access;
use crate::catalogue::Catalogues;
use crate::clock::{Clock, SharedClock};
use crate::profiles::Profiles;
use crate::routes::{Routes, Signals};
use crate::store::DynStore;
use crate::unknown::UnknownLog;
use app::api::SharedBackend;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::Router;
use leptos::prelude::*;
use leptos_axum::{generate_route_list, AxumRouteListing, LeptosRoutes};
use std::sync::Arc;
use tower_http::trace::TraceLayer;

/// Everything handlers share. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub store: DynStore,
    pub clock: SharedClock,
    pub profiles: Profiles,
    pub routes: Routes,
    pub unknown: UnknownLog,
    /// The catalogue in force, and its reload.
    pub catalogue: Catalogues,
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
    pub leptos_options: LeptosOptions,
    pub test_clock: bool,
    /// The largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// `serve --retain-days`: when ended routes are pruned.
    pub retention: crate::retention::Retention,
    /// Who may do what: checks tokens and sessions.
    pub access: Access,
    /// The folder of the SQLite file, whose free space `/readyz` checks
    /// (`None`: PostgreSQL, or not known).
    pub database_dir: Option<std::path::PathBuf>,
    /// Connection count and timeouts ([`conn`]).
    pub limits: conn::ConnectionLimits,
    /// `/readyz`'s last verdict, shared by the probes of a period.
    pub ready: Arc<health::ReadyCache>,
    /// Webhook subscriptions and their deliveries.
    pub webhooks: crate::webhooks::Webhooks,
}

impl AppState {
    /// The audit trail over this state's store and clock.
    pub fn audit(&self) -> crate::audit::Audit {
        crate::audit::Audit::new(self.store.clone(), self.clock.clone())
    }
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(s: &AppState) -> Self {
        s.leptos_options.clone()
    }
}

/// What the services are built from.
pub struct Setup {
    pub store: DynStore,
    pub clock: SharedClock,
    pub site_root: String,
    pub max_body_bytes: usize,
    pub test_clock: bool,
    /// `serve --no-auth`: every request is allowed (local development).
    pub no_auth: bool,
    /// Evidence reports per token and minute (0: no limit).
    pub evidence_per_minute: u32,
    /// Routes opened per token and minute (0: no limit).
    pub routes_per_minute: u32,
    /// `serve --max-hold-wait`, `--dispatch-timeout`.
    pub route_settings: crate::routes::service::RouteSettings,
    /// See [`AppState::database_dir`].
    pub database_dir: Option<std::path::PathBuf>,
    /// `serve --retain-days`.
    pub retention: crate::retention::Retention,
    /// See [`AppState::limits`].
    pub limits: conn::ConnectionLimits,
    /// `serve --allow-private-webhooks`.
    pub allow_private_webhooks: bool,
    /// The catalogue in force (`serve --catalogue`; default: embedded).
    pub catalogue: Catalogues,
}

impl Setup {
    /// `serve`'s defaults over `store` and `clock`.
    pub fn new(store: DynStore, clock: SharedClock) -> Setup {
        let defaults = crate::config::ServeArgs::default();
        Setup {
            store,
            clock,
            site_root: defaults.site_root,
            max_body_bytes: defaults.max_body_bytes,
            test_clock: defaults.test_clock,
            no_auth: defaults.no_auth,
            evidence_per_minute: defaults.evidence_per_minute,
            routes_per_minute: defaults.routes_per_minute,
            route_settings: crate::routes::service::RouteSettings::from_seconds(
                defaults.max_hold_wait,
                defaults.dispatch_timeout,
            ),
            database_dir: None,
            retention: crate::retention::Retention::from_days(defaults.retain_days)
                .with_audit_days(defaults.audit_retain_days),
            limits: conn::ConnectionLimits::default(),
            allow_private_webhooks: defaults.allow_private_webhooks,
            catalogue: Catalogues::embedded(),
        }
    }
}

impl AppState {
    pub fn new(setup: &Setup) -> AppState {
        let leptos_options = LeptosOptions::builder()
            .output_name(
                std::env::var("LEPTOS_OUTPUT_NAME").unwrap_or_else(|_| "kandev-recovery".into()),
            )
            .site_root(setup.site_root.clone())
            .site_pkg_dir(std::env::var("LEPTOS_SITE_PKG_DIR").unwrap_or_else(|_| "pkg".into()))
            .build();
        let catalogue = setup.catalogue.clone();
        // Legacy per-code rules name codes of the catalogue in force.
        let codes = catalogue.clone();
        let profiles = Profiles::new(
            setup.store.clone(),
            setup.clock.clone(),
            Arc::new(move |code: &str| codes.current().class_of(code)),
        );
        let unknown = UnknownLog::new(
            setup.store.clone(),
            crate::unknown::DEFAULT_UNKNOWN_CAPACITY,
        );
        let routes = Routes::new(
            setup.store.clone(),
            setup.clock.clone(),
            profiles.clone(),
            catalogue.clone(),
            unknown.clone(),
            Arc::new(Signals::new()),
        )
        .with_settings(setup.route_settings);
        AppState {
            catalogue,
            profiles,
            routes,
            unknown,
            metrics: crate::meters::handle(),
            store: setup.store.clone(),
            clock: setup.clock.clone(),
            leptos_options,
            test_clock: setup.test_clock,
            max_body_bytes: setup.max_body_bytes,
            retention: setup.retention,
            // Credentials expire in real time: the test clock moves route
            // timers, and moving it must not sign anyone out.
            access: Access::new(setup.store.clone(), Clock::system(), setup.no_auth)
                .with_evidence_limit(setup.evidence_per_minute)
                .with_route_limit(setup.routes_per_minute),
            database_dir: setup.database_dir.clone(),
            limits: setup.limits,
            ready: Arc::new(health::ReadyCache::default()),
            webhooks: crate::webhooks::Webhooks::new(
                setup.store.clone(),
                setup.clock.clone(),
                setup.allow_private_webhooks,
            ),
        }
    }
}

/// The app's page routes, generated once per process.
///
/// Generating them runs the app once with resource loading suppressed,
/// through a process-global flag in leptos_server (`SuppressResourceLoad`,
/// leptos issue 4773): a page whose data another server in the same process
/// started loading while the flag was up waits for that data for ever, and
/// its response never comes. A server process builds one router, before it
/// serves, so the two never overlap there; the integration tests run many
/// servers in one process, starting and serving at once, and a page
/// (`/profiles/{id}` on SQLite, once in a few runs under load) hung until
/// the client gave up. Generated once, before any router exists, nothing
/// can be rendering while the flag is up.
fn page_routes() -> Vec<AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<AxumRouteListing>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(app::App)).clone()
}

/// The whole application router.
pub fn router(state: AppState) -> Router {
    let max_body = state.max_body_bytes;
    let body_timeout = state.limits.body_timeout;
    let backend: SharedBackend = Arc::new(pages::PageBackend {
        catalogue: state.catalogue.clone(),
        profiles: state.profiles.clone(),
        routes: state.routes.clone(),
        access: state.access.clone(),
        unknown: state.unknown.clone(),
    });
    let routes = page_routes();
    let leptos_options = state.leptos_options.clone();
    // The pages show profiles and routes: the same rule as reading them
    // through the API. Static assets (the fallback) stay public.
    let pages = Router::new()
        .leptos_routes_with_context(
            &state,
            routes,
            move || {
                provide_context(backend.clone());
                pages::provide_request_context();
            },
            move || app::shell(leptos_options.clone()),
        )
        // The guard outermost: only an admitted page gets a nonce.
        .route_layer(axum::middleware::from_fn(pages::with_nonce))
        .route_layer(axum::middleware::from_fn(guard::page_guard));
    let access = state.access.clone();
    api::router()
        .merge(pages)
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(
            app::shell,
        ))
        // Inside the router's layers, so the matched route template is known.
        .layer(axum::middleware::from_fn(prometheus::track))
        .layer(DefaultBodyLimit::max(max_body))
        .layer(axum::middleware::from_fn_with_state(
            body_timeout,
            conn::body_deadline,
        ))
        // Before the credential check: an announced oversized body is
        // refused without waiting for anything.
        .layer(axum::middleware::from_fn_with_state(
            max_body,
            conn::refuse_oversized,
        ))
        .layer(axum::Extension(access.clone()))
        .layer(axum::middleware::from_fn_with_state(
            access.no_auth(),
            guard::local_only,
        ))
        .layer(axum::middleware::from_fn(headers::security_headers))
        // The path only: a query string can carry a credential (the
        // sign-in link's code), and secrets are never logged.
        .layer(TraceLayer::new_for_http().make_span_with(
            |req: &axum::http::Request<axum::body::Body>| {
                tracing::debug_span!("request", method = %req.method(), path = %req.uri().path())
            },
        ))
        .with_state(state)
}
