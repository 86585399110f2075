//! Retention: ended routes (`completed`, `cancelled`) and everything that
//! hangs off them — attempts, events, schedules, dispatches — are deleted
//! once they are older than the retention time (`serve --retain-days`),
//! so the tables stay bounded however long the service runs. Open routes
//! are never pruned, however old. The unknown-evidence log and the audit
//! trail keep bounds of their own.
//!
//! Off the hot path: a background task wakes every minute and deletes
//! small batches, each in its own short transaction, pausing between
//! them, so route decisions keep committing while a backlog is pruned.

use crate::clock::SharedClock;
use crate::store::{DynStore, StoreError};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// What a deployment sets about retention.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// How long an ended route is kept after its last change; `None`:
    /// for ever (`--retain-days 0`).
    pub retain: Option<chrono::Duration>,
    /// Routes deleted per transaction.
    pub batch: i64,
    /// How often the task looks for routes to prune.
    pub every: Duration,
    /// The pause between two batches of one pass.
    pub pause: Duration,
}

impl Retention {
    pub const DEFAULT_RETAIN_DAYS: u32 = 30;
    pub const BATCH: i64 = 200;

    /// From the command line's days (0: keep for ever).
    pub fn from_days(days: u32) -> Retention {
        Retention {
            retain: (days > 0).then(|| chrono::Duration::days(i64::from(days))),
            batch: Retention::BATCH,
            every: Duration::from_secs(60),
            pause: Duration::from_millis(20),
        }
    }
}

impl Default for Retention {
    fn default() -> Retention {
        Retention::from_days(Retention::DEFAULT_RETAIN_DAYS)
    }
}

/// What one pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub routes: u64,
    pub batches: u64,
}

/// One pass: batches of ended routes older than the retention time at
/// `now_ms`, until a batch comes back short.
pub async fn prune(
    store: &DynStore,
    now_ms: i64,
    settings: &Retention,
) -> Result<Pruned, StoreError> {
    let mut done = Pruned::default();
    let Some(retain) = settings.retain else {
        return Ok(done);
    };
    let before = now_ms.saturating_sub(retain.num_milliseconds());
    loop {
        let n = store.prune_ended(before, settings.batch).await?;
        done.routes += n;
        done.batches += 1;
        metrics::counter!(crate::meters::ROUTES_PRUNED).increment(n);
        if (n as i64) < settings.batch {
            return Ok(done);
        }
        tokio::time::sleep(settings.pause).await;
    }
}

/// The background task: a pass every `settings.every` until shutdown. A
/// pass that fails (the database away) is tried again next time.
pub async fn run(
    store: DynStore,
    clock: SharedClock,
    settings: Retention,
    shutdown: CancellationToken,
) {
    if settings.retain.is_none() {
        return;
    }
    let mut every = tokio::time::interval(settings.every);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            _ = shutdown.cancelled() => return,
        }
        match prune(&store, clock.now_ms(), &settings).await {
            Ok(p) if p.routes > 0 => {
                tracing::info!(
                    routes = p.routes,
                    batches = p.batches,
                    "pruned ended routes"
                )
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "pruning ended routes failed; trying again later"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_the_retention_and_zero_keeps_for_ever() {
        assert_eq!(
            Retention::from_days(7).retain,
            Some(chrono::Duration::days(7))
        );
        assert_eq!(Retention::from_days(0).retain, None);
        assert_eq!(
            Retention::default().retain,
            Some(chrono::Duration::days(30))
        );
    }
}
