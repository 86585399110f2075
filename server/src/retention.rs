//! Retention: ended routes (`completed`, `cancelled`) and everything that
//! hangs off them — attempts, events, schedules, dispatches — are deleted
//! once they are older than the retention time (`serve --retain-days`),
//! so the tables stay bounded however long the service runs. Open routes
//! are never pruned, however old. The audit trail is kept for its own
//! time (`--audit-retain-days`), circuit events as long as ended routes;
//! the unknown-evidence log and each webhook's delivery log keep bounds of
//! their own (a capacity, the newest finished deliveries).
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
    /// How long an audit entry is kept (`--audit-retain-days`); `None`:
    /// for ever. Circuit events are kept as long as ended routes.
    pub audit_retain: Option<chrono::Duration>,
}

impl Retention {
    pub const DEFAULT_RETAIN_DAYS: u32 = 30;
    /// A year: the trail outlives the routes it speaks of, long enough to
    /// trace a change behind an incident noticed months later.
    pub const DEFAULT_AUDIT_RETAIN_DAYS: u32 = 365;
    pub const BATCH: i64 = 200;

    /// From the command line's days (0: keep for ever), the audit trail
    /// kept for its default.
    pub fn from_days(days: u32) -> Retention {
        Retention {
            retain: days_of(days),
            batch: Retention::BATCH,
            every: Duration::from_secs(60),
            pause: Duration::from_millis(20),
            audit_retain: days_of(Retention::DEFAULT_AUDIT_RETAIN_DAYS),
        }
    }

    /// The audit trail kept `days` (0: for ever).
    pub fn with_audit_days(self, days: u32) -> Retention {
        Retention {
            audit_retain: days_of(days),
            ..self
        }
    }
}

fn days_of(days: u32) -> Option<chrono::Duration> {
    (days > 0).then(|| chrono::Duration::days(i64::from(days)))
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

/// What one pass over the logs did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogsPruned {
    pub audit: u64,
    pub circuit_events: u64,
}

/// One pass over the append-only logs: audit entries older than the audit
/// retention, circuit events older than the route retention, in batches
/// until one comes back short.
pub async fn prune_logs(
    store: &DynStore,
    now_ms: i64,
    settings: &Retention,
) -> Result<LogsPruned, StoreError> {
    let mut done = LogsPruned::default();
    let before = |d: chrono::Duration| now_ms.saturating_sub(d.num_milliseconds());
    if let Some(keep) = settings.audit_retain {
        loop {
            let n = store.prune_audit(before(keep), settings.batch).await?;
            done.audit += n;
            if (n as i64) < settings.batch {
                break;
            }
            tokio::time::sleep(settings.pause).await;
        }
    }
    if let Some(keep) = settings.retain {
        loop {
            let n = store
                .prune_circuit_events(before(keep), settings.batch)
                .await?;
            done.circuit_events += n;
            if (n as i64) < settings.batch {
                break;
            }
            tokio::time::sleep(settings.pause).await;
        }
    }
    Ok(done)
}

/// The background task: a pass every `settings.every` until shutdown. A
/// pass that fails (the database away) is tried again next time.
pub async fn run(
    store: DynStore,
    clock: SharedClock,
    settings: Retention,
    shutdown: CancellationToken,
) {
    if settings.retain.is_none() && settings.audit_retain.is_none() {
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
        match prune_logs(&store, clock.now_ms(), &settings).await {
            Ok(p) if p != LogsPruned::default() => tracing::info!(
                audit = p.audit,
                circuit_events = p.circuit_events,
                "pruned old audit entries and circuit events"
            ),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "pruning the audit trail or circuit events failed; trying again later")
            }
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
            Retention::from_days(0).audit_retain,
            Some(chrono::Duration::days(365))
        );
        assert_eq!(
            Retention::from_days(7).with_audit_days(0).audit_retain,
            None
        );
        assert_eq!(
            Retention::default().retain,
            Some(chrono::Duration::days(30))
        );
    }
}
