//! Pending schedules in bulk, restart reconciliation, and timer lateness.
//!
//! Pending schedules are copies of one real route waiting for its retry
//! (made through the service, so every row is what the service writes),
//! inserted with one `INSERT … SELECT` over a counter: a million in one
//! statement instead of a million transitions. Their deadlines lie an hour
//! or more ahead, spread over the next hour, so none fires during the run.
//!
//! On PostgreSQL the two tables are analysed after each fill, as
//! autovacuum soon would be.
//!
//! Lateness: with those pending, `due` more routes report a failure whose
//! retry falls due a second later, spread over `window`; lateness is when
//! the timer's dispatch was committed minus the schedule's deadline.

use super::fixtures;
use super::raw::Raw;
use super::stats::Summary;
use crate::clock::Clock;
use crate::http::{AppState, Server, Setup};
use crate::store;
use std::time::{Duration, Instant};

/// The routes table's columns, copied from the template but for `id` and
/// `caller_ref`.
const ROUTE_COLUMNS: &[&str] = &[
    "profile_id",
    "caller_kind",
    "state",
    "generation",
    "cycle",
    "candidate_index",
    "candidate_id",
    "candidate_label",
    "invocation_id",
    "prompt_generation",
    "effects",
    "provider_session_id",
    "memory",
    "pending",
    "last_failure",
    "reason",
    "created_at",
    "updated_at",
];

/// A route waiting an hour for its retry, to copy: answers its id.
pub async fn template(s: &AppState) -> anyhow::Result<String> {
    let profile = fixtures::profile(s, 3_600).await?;
    let route = fixtures::create_routes(s, &profile, 1, "template-")
        .await?
        .remove(0);
    s.routes
        .report_failure(&route.id, &fixtures::overloaded(&route))
        .await
        .map_err(|e| anyhow::anyhow!("cannot make the template route wait: {e}"))?;
    Ok(route.id.to_string())
}

/// Inserts `count` routes, each with one armed schedule, copied from
/// `template`; ids start with `prefix` (letters, digits and `-` only).
pub async fn fill(raw: &Raw, template: &str, prefix: &str, count: usize) -> anyhow::Result<()> {
    if count == 0 {
        return Ok(());
    }
    let counter = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) "
    );
    let id = format!("'{prefix}' || CAST(n.i AS TEXT)");
    let columns = ROUTE_COLUMNS.join(", ");
    let copied = ROUTE_COLUMNS
        .iter()
        .map(|c| format!("t.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    raw.execute(&format!(
        "{counter}INSERT INTO routes (id, caller_ref, {columns}) \
         SELECT {id}, {id}, {copied} FROM routes t CROSS JOIN n WHERE t.id = '{template}'"
    ))
    .await?;
    raw.execute(&format!(
        "{counter}INSERT INTO schedules (id, route_id, generation, kind, deadline, state, created_at, circuit) \
         SELECT 's' || {id}, {id}, t.generation, t.kind, t.deadline + (n.i % 3600) * 1000, t.state, t.created_at, t.circuit \
         FROM schedules t CROSS JOIN n WHERE t.route_id = '{template}' AND t.state = 'armed'"
    ))
    .await?;
    // PostgreSQL's autovacuum analyses tables changed this much within a
    // minute or so, and the planner then knows every schedule is armed:
    // measure that steady state, not the minute before it, when plans rest
    // on the statistics of the smaller table (a run then measured timers
    // whose looks scanned every schedule, or not, by chance). SQLite
    // keeps no statistics unless told to, and the server never tells it.
    if let Raw::Pg(_) = raw {
        raw.execute("ANALYZE routes, schedules").await?;
    }
    Ok(())
}

/// Opens the database as a restarted server does — connect, migrate,
/// reconcile, timers running, next deadline read — and answers the
/// server and how long that took.
pub async fn restart(url: &str) -> anyhow::Result<(Server, Duration)> {
    let t = Instant::now();
    let store = store::connect(url).await?;
    let server = Server::start(AppState::new(&Setup::new(store.clone(), Clock::system())))
        .await
        .map_err(|e| anyhow::anyhow!("restart reconciliation failed: {e}"))?;
    store.next_deadline(None).await?;
    Ok((server, t.elapsed()))
}

/// Lateness in milliseconds of `due` timers falling due over `window`.
pub async fn lateness(
    s: &AppState,
    raw: &Raw,
    tag: &str,
    due: usize,
    window: Duration,
) -> anyhow::Result<Summary> {
    let soon = fixtures::profile(s, 1).await?;
    let routes = fixtures::create_routes(s, &soon, due, &format!("late{tag}-")).await?;
    let batches = due.div_ceil(10).max(1);
    let pause = window / batches as u32;
    for batch in routes.chunks(10) {
        for r in batch {
            s.routes
                .report_failure(&r.id, &fixtures::overloaded(r))
                .await
                .map_err(|e| anyhow::anyhow!("a failure report failed: {e}"))?;
        }
        tokio::time::sleep(pause).await;
    }
    let sql = format!(
        "SELECT d.created_at - s.deadline FROM dispatches d \
         JOIN schedules s ON s.route_id = d.route_id AND s.state = 'fired' \
         JOIN routes r ON r.id = s.route_id WHERE r.caller_ref LIKE 'late{tag}-%'"
    );
    // Every retry falls due a second after its report; allow for a slow disk.
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let late = raw.integers(&sql).await?;
        if late.len() >= due || Instant::now() > until {
            anyhow::ensure!(
                late.len() >= due,
                "only {} of {due} timers fired within a minute",
                late.len()
            );
            return Ok(Summary::of(late.into_iter().map(|ms| ms as f64).collect()));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
