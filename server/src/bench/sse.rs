//! Event fan-out: `subscribers` clients hold `GET /api/v1/events` open;
//! routes then report failures one after another, and each subscriber
//! notes when it receives each route's event. Latency is counted from the
//! moment the report was sent (so it includes that decision's own commit,
//! an upper bound on commit → delivery) to its delivery.

use super::fixtures;
use super::stats::Summary;
use crate::http::AppState;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Gives up waiting for deliveries after this.
const PATIENCE: Duration = Duration::from_secs(60);

/// Delivery latency in milliseconds over every (subscriber, event) pair.
pub async fn measure(
    s: &AppState,
    http: &reqwest::Client,
    base: &str,
    subscribers: usize,
    events: usize,
) -> anyhow::Result<Summary> {
    let profile = fixtures::profile(s, 3_600).await?;
    // Created before anyone subscribes, so their `created` events are not
    // in the streams.
    let routes = fixtures::create_routes(s, &profile, events, "sse-").await?;
    let wanted: Arc<std::collections::HashSet<String>> =
        Arc::new(routes.iter().map(|r| r.id.to_string()).collect());

    let mut streams = Vec::with_capacity(subscribers);
    for _ in 0..subscribers {
        let answer = http.get(format!("{base}/api/v1/events")).send().await?;
        anyhow::ensure!(
            answer.status().is_success(),
            "GET /api/v1/events answered {}",
            answer.status()
        );
        streams.push(answer);
    }
    let mut readers = Vec::with_capacity(subscribers);
    for answer in streams {
        readers.push(tokio::spawn(read(answer, wanted.clone())));
    }

    let mut sent = HashMap::with_capacity(events);
    for route in &routes {
        sent.insert(route.id.to_string(), Instant::now());
        let answer = http
            .post(format!("{base}/api/v1/routes/{}/failures", route.id))
            .json(&fixtures::overloaded(route))
            .send()
            .await?;
        anyhow::ensure!(
            answer.status().is_success(),
            "a failure report answered {}",
            answer.status()
        );
        // Apart, so each event is one delivery and not part of a burst.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let mut samples = Vec::with_capacity(subscribers * events);
    let mut missing = 0;
    for r in readers {
        let seen = r.await??;
        missing += events - seen.len();
        for (id, at) in seen {
            if let Some(t0) = sent.get(&id) {
                samples.push(at.saturating_duration_since(*t0).as_secs_f64() * 1e3);
            }
        }
    }
    anyhow::ensure!(
        missing == 0,
        "{missing} event deliveries did not arrive within {} s",
        PATIENCE.as_secs()
    );
    Ok(Summary::of(samples))
}

/// Reads one stream until every wanted route's event arrived (or
/// `PATIENCE` ran out); answers when each arrived.
async fn read(
    mut answer: reqwest::Response,
    wanted: Arc<std::collections::HashSet<String>>,
) -> anyhow::Result<HashMap<String, Instant>> {
    let mut seen = HashMap::new();
    let mut buffer = String::new();
    let until = tokio::time::Instant::now() + PATIENCE;
    while seen.len() < wanted.len() {
        let chunk = match tokio::time::timeout_at(until, answer.chunk()).await {
            Ok(chunk) => chunk?,
            Err(_) => break,
        };
        let Some(chunk) = chunk else { break };
        let at = Instant::now();
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let Ok(event) = serde_json::from_str::<serde_json::Value>(data.trim()) else {
                continue;
            };
            if let Some(id) = event["route"]["id"].as_str() {
                if wanted.contains(id) {
                    seen.entry(id.to_string()).or_insert(at);
                }
            }
        }
    }
    Ok(seen)
}
