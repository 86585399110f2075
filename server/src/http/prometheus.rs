//! `GET /metrics` and the middleware that counts and times every request
//! by its matched route template (`/api/v1/routes/{id}`, never the raw
//! path, so ids do not become series). What is measured is in
//! [`crate::meters`].

use super::AppState;
use crate::meters::{self, HTTP_DURATION, HTTP_REQUESTS};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics::{counter, histogram};
use std::time::Instant;

/// Prometheus text: this instance's counters and histograms, and gauges of
/// the shared state read from the database now.
#[utoipa::path(get, path = "/metrics", tag = "health", operation_id = "get_metrics",
    responses((status = 200, description = "Prometheus text exposition format 0.0.4", body = String,
               content_type = "text/plain; version=0.0.4")))]
pub async fn metrics(State(s): State<AppState>) -> impl IntoResponse {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        meters::render(
            &s.metrics,
            &s.store,
            s.clock.pinned_ms(),
            &s.catalogue.current().in_force(),
        )
        .await,
    )
}

/// Counts and times one request. Requests no route matched (static files,
/// unknown paths) share the route label `unmatched`.
pub async fn track(req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = method_label(req.method());
    let started = Instant::now();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    histogram!(HTTP_DURATION, "method" => method, "route" => route.clone(), "status" => status.clone())
        .record(started.elapsed().as_secs_f64());
    counter!(HTTP_REQUESTS, "method" => method, "route" => route, "status" => status).increment(1);
    response
}

/// The standard methods by name; anything else is one label, so a client
/// cannot mint series.
fn method_label(m: &Method) -> &'static str {
    match *m {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::DELETE => "DELETE",
        Method::PATCH => "PATCH",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}
