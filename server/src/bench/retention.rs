//! A long run with pruning on: routes are opened, decided and ended day
//! after day on a manual clock, with ended routes kept one day, and the
//! retention task's pass (routes, then the audit trail and circuit events)
//! runs once a simulated day, as it would every minute. Per day: the
//! decisions committed a second (failure reports through the route
//! service from 8 concurrent callers, each a whole classify–decide–commit),
//! the database's size and the routes it holds. Flat figures from the
//! first days to the last say pruning keeps the database bounded without
//! slowing decisions.

use super::fixtures;
use super::raw::Raw;
use crate::clock::Clock;
use crate::http::{AppState, Setup};
use crate::retention::{prune, prune_logs, Retention};
use domain::api::EndRequest;
use domain::ids::RouteId;
use std::sync::Arc;
use std::time::Instant;

/// Concurrent callers reporting failures.
const CALLERS: usize = 8;

/// One simulated day.
#[derive(Debug, Clone, Copy)]
pub struct Day {
    pub day: usize,
    pub decisions_per_s: f64,
    /// The database's size after the day's prune: SQLite's pages (the
    /// file, freed pages included: they are reused, not returned),
    /// PostgreSQL's `pg_database_size`.
    pub db_bytes: i64,
    /// Routes stored after the prune (open and kept ended ones).
    pub routes: i64,
    /// Ended routes the day's prune deleted.
    pub pruned: u64,
}

/// `days` simulated days of `per_day` routes each, on the database `url`.
pub async fn measure(url: &str, days: usize, per_day: usize) -> anyhow::Result<Vec<Day>> {
    let clock = Clock::manual(fixtures::corpus_now());
    let store = crate::store::connect(url).await?;
    let state = AppState::new(&Setup {
        evidence_per_minute: 0,
        routes_per_minute: 0,
        ..Setup::new(store.clone(), clock.clone())
    });
    let raw = Raw::open(url).await?;
    let settings = Retention {
        pause: std::time::Duration::ZERO,
        ..Retention::from_days(1).with_audit_days(1)
    };
    let profile = fixtures::profile(&state, 3_600).await?;
    let mut out = Vec::with_capacity(days);
    for day in 1..=days {
        let routes = Arc::new(
            fixtures::create_routes(&state, &profile, per_day, &format!("day{day}-")).await?,
        );
        // Timed: each route's capacity failure, decided and committed.
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Instant::now();
        let mut callers = Vec::with_capacity(CALLERS);
        for _ in 0..CALLERS {
            let (routes, next, s) = (routes.clone(), next.clone(), state.routes.clone());
            callers.push(tokio::spawn(async move {
                let mut ended = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(route) = routes.get(i) else { break };
                    let answer = s
                        .report_failure(&route.id, &fixtures::overloaded(route))
                        .await
                        .map_err(|e| anyhow::anyhow!("a failure report failed: {e}"))?;
                    ended.push((route.id.clone(), answer.route.generation));
                }
                anyhow::Ok(ended)
            }));
        }
        let mut decided: Vec<(RouteId, domain::ids::Generation)> = Vec::new();
        for c in callers {
            decided.extend(c.await??);
        }
        let per_s = decided.len() as f64 / started.elapsed().as_secs_f64();
        // Untimed: each caller's session ends (`completed`).
        for (id, generation) in decided {
            state
                .routes
                .end(
                    &id,
                    crate::routes::lifecycle::End::Complete,
                    EndRequest {
                        expected_generation: generation,
                    },
                )
                .await
                .map_err(|e| anyhow::anyhow!("completing a route failed: {e}"))?;
        }
        // The retention task's pass: yesterday's ended routes go, today's
        // stay (kept a day).
        let pruned = prune(&store, clock.now_ms(), &settings).await?;
        prune_logs(&store, clock.now_ms(), &settings).await?;
        if let Raw::Pg(_) = raw {
            // A simulated day lasts seconds, autovacuum's pace is minutes:
            // the plain VACUUM it would have run in a real day, so the
            // deleted rows' space is reusable as it would be (it is not
            // returned to the system; the size stays what it was).
            raw.execute("VACUUM").await?;
        }
        let d = Day {
            day,
            decisions_per_s: per_s,
            db_bytes: size(&raw).await?,
            routes: raw.integers("SELECT COUNT(*) FROM routes").await?[0],
            pruned: pruned.routes,
        };
        super::progress(format_args!(
            "  day {day}: {:.0} decisions/s, database {:.1} MB, {} routes kept, {} pruned",
            d.decisions_per_s,
            d.db_bytes as f64 / 1e6,
            d.routes,
            d.pruned
        ));
        out.push(d);
        clock.advance(chrono::Duration::days(1) + chrono::Duration::seconds(1));
    }
    raw.close().await;
    Ok(out)
}

async fn size(raw: &Raw) -> anyhow::Result<i64> {
    Ok(match raw {
        Raw::Sqlite(_) => {
            let pages = raw.integers("PRAGMA page_count").await?[0];
            let page = raw.integers("PRAGMA page_size").await?[0];
            pages * page
        }
        Raw::Pg(_) => {
            raw.integers("SELECT pg_database_size(current_database())")
                .await?[0]
        }
    })
}
