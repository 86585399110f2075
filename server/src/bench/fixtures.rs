//! What the measurements are made of, shared by `kandev-recovery bench`
//! and the `cargo bench` benchmarks (server/benches/): the classifier's
//! envelopes, a profile that retries, the failure every route reports, and
//! routes created in bulk through the service.

use crate::http::AppState;
use classify::fixtures;
use domain::api::CreateRoute;
use domain::ids::ProfileId;
use domain::route::{Caller, CallerKind, RouteSnapshot};
use serde_json::json;

/// The public corpus, when the shared folder is checked out beside the repo.
pub const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/public.jsonl"
);

/// Each envelope as the JSON line an adapter would send, from the public
/// corpus, else the catalogue fixtures compiled into the binary. Answers
/// the lines and where they came from.
pub fn envelopes() -> (Vec<String>, &'static str) {
    if let Ok(text) = std::fs::read_to_string(CORPUS) {
        let lines: Vec<String> = text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .map(|v| v["evidence"].to_string())
            .collect();
        if !lines.is_empty() {
            return (lines, "public corpus");
        }
    }
    let lines = fixtures::builtin_fixtures()
        .unwrap_or_default()
        .into_iter()
        .map(|f| f.evidence.to_string())
        .collect();
    (lines, "catalogue fixtures")
}

/// The instant the corpus's relative timing hints are read against, so
/// every run classifies the same way.
pub fn corpus_now() -> chrono::DateTime<chrono::Utc> {
    "2026-11-30T12:00:00Z"
        .parse()
        .unwrap_or_else(|_| chrono::Utc::now())
}

/// A profile whose first candidate retries transient failures after
/// `initial_seconds`. Its candidates name no provider or model, so no
/// shared circuit opens and every report is a plain retry: the path under
/// test, not the circuits' hold-back.
pub async fn profile(s: &AppState, initial_seconds: u32) -> anyhow::Result<ProfileId> {
    let policy = json!({"version": 1,
        "transient": {"retry": {"enabled": true, "max_retries": 3, "initial_interval_seconds": initial_seconds},
                      "wait_for_reset": {"enabled": false}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false}, "wait_for_reset": {"enabled": false}, "on_exhausted": "skip"}});
    let name = format!("bench {initial_seconds}s {}", uuid::Uuid::new_v4().simple());
    Ok(s.profiles
        .create(&json!({"name": name, "candidates": [{"label": "A", "agent": "a", "policy": policy}, {"label": "B", "agent": "b"}]}))
        .await
        .map_err(|e| anyhow::anyhow!("cannot create the benchmark profile: {e:?}"))?
        .id)
}

/// A capacity failure (HTTP 529, Anthropic's overloaded error) of the
/// route's current invocation: transient, so the policy retries.
pub fn overloaded(route: &RouteSnapshot) -> serde_json::Value {
    json!({"generation": route.generation, "invocation_id": route.invocation_id,
           "prompt_generation": route.prompt_generation, "phase": "prompt",
           "agent": "claude-code", "provider_id": "anthropic",
           "items": [{"kind": "http", "status": 529, "headers": {},
                      "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}]})
}

/// How many creations run at once.
const CREATE_CONCURRENCY: usize = 8;

/// Creates `n` routes on `profile_id` through the service (callers
/// `{prefix}{i}`), a few at a time.
pub async fn create_routes(
    s: &AppState,
    profile_id: &ProfileId,
    n: usize,
    prefix: &str,
) -> anyhow::Result<Vec<RouteSnapshot>> {
    let mut routes = Vec::with_capacity(n);
    let mut start = 0;
    while start < n {
        let end = (start + CREATE_CONCURRENCY * 64).min(n);
        let mut tasks = Vec::with_capacity(end - start);
        for i in start..end {
            let (r, p) = (s.routes.clone(), profile_id.clone());
            let reference = format!("{prefix}{i}");
            tasks.push(tokio::spawn(async move {
                r.create(CreateRoute {
                    profile_id: p,
                    caller: Caller {
                        kind: CallerKind::Kanban,
                        reference,
                    },
                })
                .await
            }));
        }
        for t in tasks {
            routes.push(
                t.await?
                    .map_err(|e| anyhow::anyhow!("cannot create a route: {e}"))?,
            );
        }
        start = end;
    }
    Ok(routes)
}
