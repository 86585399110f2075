//! Durable timers. Schedules are rows with a UTC deadline, written in the
//! same transaction as the transition that needs them; this loop only reads
//! them. It sleeps until the earliest deadline, a new schedule, a move of
//! the test clock, or shutdown — and never longer than [`POLL`], so a
//! schedule whose announcement was lost is found too. Firing goes through
//! the route service, fenced by the schedule's generation.
//!
//! Several servers may run this loop on one PostgreSQL database. Each
//! claims the due schedules it fires (skipping those another server is
//! claiming, so none is fired twice at once), the database's clock decides
//! what is due, and a schedule armed on any server wakes every loop
//! (`LISTEN/NOTIFY`, see [`crate::routes::Signals::relay`]). A server that
//! dies holding claims loses them once its connections are gone (claims
//! are made under the name its connections carry), or else when they run
//! out ([`crate::routes::service::SCHEDULE_CLAIM`]), and the others, or
//! its own next start, fire them; the generation fence keeps every firing
//! to one dispatch whatever the timing.
//!
//! Restart reconciliation is nothing special: armed schedules are rows, so
//! the loop picks them up; pending dispatches stay claimable (they were
//! provably never handed out); a claimed dispatch stays claimed while its
//! lease lasts — its caller may still acknowledge it, even while servers
//! restart one by one — and becomes ambiguous, stopping its route for a
//! person, only when the lease runs out unacknowledged. Whichever server
//! notices first stops the route, once.

use crate::routes::Routes;
use std::time::Duration;

/// The longest the loop sleeps without looking at the database.
pub const POLL: Duration = Duration::from_secs(1);

/// How often expired dispatch leases are looked for.
const LEASE_CHECK: Duration = Duration::from_secs(1);

/// What a (re)start catches up on before serving: dispatches whose lease
/// ran out while no server was looking stop their routes, and schedules
/// that fell due fire. Answers how many routes stopped as ambiguous.
pub async fn reconcile(routes: &Routes) -> crate::routes::Result<usize> {
    let stopped = routes.stop_ambiguous().await?;
    if stopped > 0 {
        tracing::warn!(
            stopped,
            "dispatches whose lease ran out unacknowledged: their routes need a person"
        );
    }
    routes.fire_due().await?;
    Ok(stopped)
}

/// The timer loop; returns when `signals.shutdown` is cancelled.
pub async fn run(routes: Routes, store: crate::store::DynStore) {
    let signals = routes.signals().clone();
    let clock = routes.clock().clone();
    let mut clock_moved = clock.subscribe();
    let mut last_lease_check = tokio::time::Instant::now() - LEASE_CHECK;
    loop {
        if signals.shutdown.is_cancelled() {
            break;
        }
        // Register interest before looking, so a schedule committed while
        // we look still wakes us.
        signals.timer_looking();
        let armed = signals.schedules.notified();
        tokio::pin!(armed);
        armed.as_mut().enable();

        let fired = routes.fire_due().await;
        if let Err(e) = &fired {
            tracing::error!(error = %e, "firing due schedules failed; will retry");
        }
        if last_lease_check.elapsed() >= LEASE_CHECK {
            last_lease_check = tokio::time::Instant::now();
            if let Err(e) = routes.stop_ambiguous().await {
                tracing::error!(error = %e, "checking dispatch leases failed; will retry");
            }
            if let Err(e) = routes.stop_unclaimed().await {
                tracing::error!(error = %e, "checking unclaimed dispatches failed; will retry");
            }
        }
        let sleep = match store.next_deadline(clock.pinned_ms()).await {
            // The database refused the last pass (full, read-only, gone):
            // a due schedule would otherwise be retried at once, in a
            // tight loop, until it comes back.
            _ if fired.is_err() => POLL,
            Ok(Some(deadline)) => {
                let ms = (deadline - clock.now_ms()).max(0) as u64;
                Duration::from_millis(ms).min(POLL)
            }
            Ok(None) => POLL,
            Err(e) => {
                tracing::error!(error = %e, "reading the next deadline failed; will retry");
                POLL
            }
        };
        // From here only a schedule due before this wake-up wakes us
        // earlier; one committed after the read above and due sooner is
        // announced after this store, or found the loop still looking.
        signals.timer_sleeps_until(clock.now_ms().saturating_add(sleep.as_millis() as i64));
        tokio::select! {
            _ = tokio::time::sleep(sleep) => {}
            _ = &mut armed => {}
            _ = clock_moved.changed() => {}
            _ = signals.shutdown.cancelled() => break,
        }
    }
    tracing::info!("scheduler stopped");
}
