//! Committed decisions through the HTTP API: concurrent clients each post
//! a capacity failure for a route of their own (`POST
//! /api/v1/routes/{id}/failures`), so every request is the whole path —
//! parse, classify, gate, evaluate, one fenced transaction, timer armed —
//! answered 200 only after it committed. The routes are created first,
//! untimed.

use super::fixtures;
use super::stats::Summary;
use crate::http::AppState;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub struct Figures {
    pub per_s: f64,
    /// Per decision, in milliseconds.
    pub latency_ms: Summary,
}

/// `decisions` committed decisions from `clients` concurrent clients
/// against the server at `base` (`http://127.0.0.1:port`).
pub async fn measure(
    s: &AppState,
    http: &reqwest::Client,
    base: &str,
    clients: usize,
    decisions: usize,
) -> anyhow::Result<Figures> {
    // Retries an hour away: the timers armed stay pending, nothing fires.
    let profile = fixtures::profile(s, 3_600).await?;
    let routes =
        Arc::new(fixtures::create_routes(s, &profile, decisions, &format!("d{clients}-")).await?);
    // The timed part starts here: a line between the two, so a profile of
    // the run can tell them apart.
    super::progress(format_args!(
        "  {decisions} routes ready (untimed); reporting"
    ));
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::with_capacity(clients);
    for _ in 0..clients {
        let (routes, next, http) = (routes.clone(), next.clone(), http.clone());
        let base = base.to_string();
        tasks.push(tokio::spawn(async move {
            let mut took = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(route) = routes.get(i) else { break };
                let t = Instant::now();
                let answer = http
                    .post(format!("{base}/api/v1/routes/{}/failures", route.id))
                    .json(&fixtures::overloaded(route))
                    .send()
                    .await?;
                let status = answer.status();
                let body = answer.bytes().await?;
                took.push(t.elapsed().as_secs_f64() * 1e3);
                if !status.is_success() {
                    anyhow::bail!(
                        "a failure report answered {status}: {}",
                        String::from_utf8_lossy(&body)
                    );
                }
            }
            anyhow::Ok(took)
        }));
    }
    let mut samples = Vec::with_capacity(decisions);
    for t in tasks {
        samples.extend(t.await??);
    }
    let per_s = samples.len() as f64 / started.elapsed().as_secs_f64();
    Ok(Figures {
        per_s,
        latency_ms: Summary::of(samples),
    })
}
