//! The HTTP surface: REST under `/api/v1`, the OpenAPI document, health
//! probes, and the server-rendered Leptos pages with their static assets.

mod error;
mod health;
mod json;
pub mod openapi;
mod pages;
mod profiles;
mod routes;

pub use error::{HttpError, HttpResult};

use crate::classify::{Catalogue, UnknownLog};
use crate::clock::{Clock, SharedClock};
use crate::config::ServeArgs;
use crate::profiles::Profiles;
use crate::routes::Routes;
use crate::routes::Signals;
use crate::scheduler;
use crate::store::{self, DynStore};
use anyhow::Context;
use app::api::SharedBackend;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::routing::{get, post};
use axum::{Json, Router};
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};
use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::net::TcpListener;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;

/// Everything handlers share. Cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub store: DynStore,
    pub clock: SharedClock,
    pub profiles: Profiles,
    pub routes: Routes,
    pub unknown: Arc<UnknownLog>,
    pub metrics: metrics_exporter_prometheus::PrometheusHandle,
    pub leptos_options: LeptosOptions,
    pub test_clock: bool,
}

impl FromRef<AppState> for LeptosOptions {
    fn from_ref(s: &AppState) -> Self {
        s.leptos_options.clone()
    }
}

static MAX_BODY_BYTES: AtomicUsize = AtomicUsize::new(256 * 1024);

pub(crate) fn max_body_bytes() -> usize {
    MAX_BODY_BYTES.load(Ordering::Relaxed)
}

/// Options for building the app without the command line (tests).
pub struct Setup {
    pub store: DynStore,
    pub clock: SharedClock,
    pub site_root: String,
    pub max_body_bytes: usize,
    pub test_clock: bool,
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
        let catalogue = Catalogue::builtin();
        let profiles = Profiles::new(setup.store.clone(), setup.clock.clone(), class_of);
        let unknown = Arc::new(UnknownLog::new(
            crate::classify::unknown::DEFAULT_UNKNOWN_CAPACITY,
        ));
        let routes = Routes::new(
            setup.store.clone(),
            setup.clock.clone(),
            profiles.clone(),
            catalogue,
            unknown.clone(),
            Arc::new(Signals::new()),
        );
        AppState {
            profiles,
            routes,
            unknown,
            metrics: metrics_handle(),
            store: setup.store.clone(),
            clock: setup.clock.clone(),
            leptos_options,
            test_clock: setup.test_clock,
        }
    }
}

/// Code → class from the runtime catalogue (used for legacy per-code rules).
fn class_of(code: &str) -> Option<app::policy::ErrorClass> {
    Catalogue::builtin().class_of(code)
}

/// The Prometheus recorder is process-wide; install it once.
fn metrics_handle() -> metrics_exporter_prometheus::PrometheusHandle {
    static HANDLE: std::sync::OnceLock<metrics_exporter_prometheus::PrometheusHandle> =
        std::sync::OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = metrics_exporter_prometheus::PrometheusBuilder::new()
                .set_buckets(&[0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0])
                .expect("valid buckets")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder (a test harness) may own the global slot.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

async fn catalogue_summary() -> Json<crate::classify::CatalogueSummary> {
    Json(Catalogue::builtin().describe())
}

async fn catalogue_unknown(
    axum::extract::State(s): axum::extract::State<AppState>,
) -> Json<crate::classify::UnknownSnapshot> {
    Json(s.unknown.snapshot())
}

async fn prometheus(axum::extract::State(s): axum::extract::State<AppState>) -> String {
    s.metrics.render()
}

fn api_router() -> Router<AppState> {
    Router::new()
        .route("/routes", get(routes::list).post(routes::create))
        .route("/routes/{id}", get(routes::get))
        .route("/routes/{id}/attempts", get(routes::attempts))
        .route("/routes/{id}/failures", post(routes::failures))
        .route("/routes/{id}/effects", post(routes::effects))
        .route("/routes/{id}/success", post(routes::success))
        .route("/routes/{id}/actions", post(routes::actions))
        .route("/dispatches/claim", post(routes::claim))
        .route("/dispatches/{id}/ack", post(routes::ack))
        .route("/events", get(routes::events))
        .route("/test/clock", post(routes::advance_clock))
        .route("/catalogue", get(catalogue_summary))
        .route("/catalogue/unknown", get(catalogue_unknown))
        .route("/profiles", get(profiles::list).post(profiles::create))
        .route("/profiles/validate", post(profiles::validate))
        .route(
            "/profiles/{id}",
            get(profiles::get)
                .put(profiles::update)
                .delete(profiles::delete),
        )
        .route(
            "/openapi.json",
            get(|| async { Json(openapi::ApiDoc::openapi()) }),
        )
        .fallback(|| async { HttpError::NotFound("That API endpoint".into()) })
}

/// The whole application router.
pub fn router(state: AppState, max_body: usize) -> Router {
    MAX_BODY_BYTES.store(max_body, Ordering::Relaxed);
    let backend: SharedBackend = Arc::new(pages::PageBackend {
        profiles: state.profiles.clone(),
        routes: state.routes.clone(),
    });
    let routes = generate_route_list(app::App);
    let leptos_options = state.leptos_options.clone();
    Router::new()
        .nest("/api/v1", api_router())
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(prometheus))
        .leptos_routes_with_context(
            &state,
            routes,
            move || provide_context(backend.clone()),
            move || app::shell(leptos_options.clone()),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(
            app::shell,
        ))
        .layer(DefaultBodyLimit::max(max_body))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Opens the database, seeds the example on first start, and serves until
/// `shutdown` resolves; in-flight requests finish first.
pub async fn serve(
    args: ServeArgs,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let store = store::connect(&args.database_url).await.with_context(|| {
        format!(
            "cannot open the database at {}",
            redact_url(&args.database_url)
        )
    })?;
    let clock = Clock::system();
    if args.test_clock {
        tracing::warn!("the test clock is enabled: POST /api/v1/test/clock can move time forward");
    }
    let state = AppState::new(&Setup {
        store,
        clock,
        site_root: args.site_root.clone(),
        max_body_bytes: args.max_body_bytes,
        test_clock: args.test_clock,
    });
    if !args.no_seed {
        if let Some(p) = state
            .profiles
            .seed_example()
            .await
            .context("cannot seed the example profile")?
        {
            tracing::info!(profile = %p.id, "seeded the example dynamic profile");
        }
    }
    scheduler::reconcile(&state.routes)
        .await
        .context("restart reconciliation failed")?;
    let timers = tokio::spawn(scheduler::run(state.routes.clone(), state.store.clone()));
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    tracing::info!(
        address = %listener.local_addr()?,
        database = %redact_url(&args.database_url),
        "serving http://{}",
        listener.local_addr()?
    );
    let signals = state.routes.signals().clone();
    let stop = signals.shutdown.clone();
    axum::serve(listener, router(state, args.max_body_bytes))
        .with_graceful_shutdown(async move {
            shutdown.await;
            // Ends long polls, event streams and the timer loop, so the
            // graceful shutdown does not wait on them.
            stop.cancel();
        })
        .await?;
    signals.shutdown.cancel();
    let _ = timers.await;
    tracing::info!("stopped");
    Ok(())
}

/// A database URL without its password, for logs.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{}@{}", &url[..scheme + 3], user, &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown requested; finishing in-flight requests");
}
