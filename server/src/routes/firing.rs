//! Timers: firing due schedules (claimed a batch at a time, so several
//! servers share them and none fires one twice), and moving a circuit's
//! waiters to their new deadlines once its probe came back.

use super::error::{Result, RouteError};
use super::machine::{self, Trigger};
use super::plan;
use super::service::{Change, CIRCUIT_ATTEMPTS, SCHEDULE_CLAIM};
use super::Routes;
use crate::circuits::CircuitKey;
use crate::store::{ScheduleRow, StoreError};
use chrono::{DateTime, Utc};
use domain::ids::{Generation, RouteId};
use domain::route::{EventKind, PendingKind};
use futures::StreamExt;

/// Due schedules claimed at a time: small, so one server never hoards what
/// the others could be firing.
const FIRE_BATCH: i64 = 64;

/// Claimed schedules fired at once. Each is its own fenced transaction
/// on a different route; a few keep the database busy without starving
/// requests of pool connections (16).
const FIRE_CONCURRENCY: usize = 4;

impl Routes {
    /// Fires one due schedule if its generation is still the route's.
    /// Answers whether it created a dispatch.
    pub async fn fire(&self, schedule: &ScheduleRow) -> Result<bool> {
        let route = match self.load(&RouteId(schedule.route_id.clone())).await {
            Ok(r) => r,
            Err(RouteError::NotFound(_)) => {
                self.store.void_schedule(&schedule.id).await?;
                return Ok(false);
            }
            Err(e) => return Err(e),
        };
        let Some(state) = machine::next(route.state, Trigger::Deadline)
            .filter(|_| route.generation == Generation(schedule.generation))
        else {
            self.store.void_schedule(&schedule.id).await?;
            return Ok(false);
        };
        let kind: PendingKind = schedule.kind.parse().map_err(|_| {
            RouteError::Corrupt(format!(
                "stored schedule kind `{}` of {} is unknown",
                schedule.kind, schedule.id
            ))
        })?;
        let mut candidate = None;
        for _ in 0..CIRCUIT_ATTEMPTS {
            let now = self.now();
            let mut circuits = self.circuits().await?;
            let candidate = self
                .candidate_if_circuits(&route, &circuits, &mut candidate)
                .await;
            let mut plan = plan::deadline(
                &route,
                state,
                schedule,
                kind,
                candidate.as_ref(),
                &mut circuits.set,
                now,
            );
            plan.commit.circuits = circuits.writes(route.id.as_str());
            let dispatched = plan.commit.dispatch.is_some();
            let lateness = (now.timestamp_millis() - schedule.deadline).max(0) as f64 / 1000.0;
            let change = Change {
                route: plan.route,
                expected: Some(route.generation),
                from: Some(route.state),
                commit: plan.commit,
            };
            match self.apply(change, plan.event).await {
                Ok(_) => {
                    metrics::histogram!(crate::meters::TIMER_LATENESS).record(lateness);
                    return Ok(dispatched);
                }
                // Another route took the probe first: look again.
                Err(RouteError::Store(StoreError::StaleCircuit { .. })) => continue,
                Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {
                    self.store.void_schedule(&schedule.id).await?;
                    return Ok(false);
                }
                Err(e) => return Err(e),
            }
        }
        Err(RouteError::Conflict(
            "shared circuits kept changing while firing a schedule".into(),
        ))
    }

    /// After a circuit's probe came back (closed, or reopened), its waiters
    /// get their new deadlines: released a few at a time, or held until
    /// the circuit's new end. Each is its own fenced route change; a waiter
    /// that moved on in the meantime is left alone (never moved back).
    /// Failures are logged: a waiter not moved still fires at its old
    /// deadline and looks at the circuit then.
    pub async fn revisit_waiters(&self, key: &crate::circuits::CircuitKey) -> Result<usize> {
        let waiters = self.store.circuit_waiters(&key.to_string()).await?;
        if waiters.is_empty() {
            return Ok(0);
        }
        let now = self.now();
        let circuits = self.circuits().await?;
        let hold = circuits
            .set
            .get(key)
            .map(|c| crate::circuits::hold([c], "", now))
            .unwrap_or(crate::circuits::Hold::Free { probes: vec![] });
        let current: Vec<DateTime<Utc>> = waiters
            .iter()
            .map(|w| crate::clock::from_ms(w.deadline))
            .collect();
        let mut moved = 0;
        for (w, (deadline, held)) in waiters
            .iter()
            .zip(plan::waiter_deadlines(&current, &hold, now))
        {
            let route = match self.load(&RouteId(w.route_id.clone())).await {
                Ok(r) => r,
                Err(RouteError::NotFound(_)) => continue,
                Err(e) => return Err(e),
            };
            let Ok(kind) = w.kind.parse::<PendingKind>() else {
                continue;
            };
            if route.generation != Generation(w.generation) || route.pending.is_none() {
                continue;
            }
            if held.is_some() && crate::clock::from_ms(w.deadline) == deadline {
                continue;
            }
            let (next, commit) = plan::rearm(&route, w, kind, deadline, held, now);
            match self
                .apply(
                    Change {
                        route: next,
                        expected: Some(route.generation),
                        from: Some(route.state),
                        commit,
                    },
                    EventKind::Held,
                )
                .await
            {
                Ok(_) => moved += 1,
                Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(moved)
    }

    /// Fires every schedule due now that no other server is firing;
    /// answers how many dispatched, or the first failure. Schedules are
    /// claimed a batch at a time (see [`SCHEDULE_CLAIM`]); one that fails
    /// to fire stays claimed until its claim runs out, then any server
    /// tries it again — the rest of its batch is fired meanwhile, so one
    /// bad row never holds up the others.
    pub async fn fire_due(&self) -> Result<usize> {
        let _one_pass = self.firing.lock().await;
        let claim_ms = SCHEDULE_CLAIM.as_millis() as i64;
        let mut fired = 0;
        loop {
            // Shutting down: the batch fired so far is committed; what is
            // still due stays armed, unclaimed, for the next start.
            if self.signals.shutdown.is_cancelled() {
                return Ok(fired);
            }
            let due = self
                .store
                .claim_due_schedules(self.pinned_ms(), claim_ms, FIRE_BATCH)
                .await?;
            if due.is_empty() {
                return Ok(fired);
            }
            // Several at once: each firing is a few round trips and a
            // commit, so a server that fires one at a time mostly waits.
            // (Owned values: a stream of futures borrowing `self` and the
            // batch trips the compiler's `Send` inference in handlers.)
            let outcomes: Vec<(ScheduleRow, Result<bool>)> = futures::stream::iter(due)
                .map(|s| {
                    let routes = self.clone();
                    async move {
                        let outcome = routes.fire(&s).await;
                        (s, outcome)
                    }
                })
                .buffer_unordered(FIRE_CONCURRENCY)
                .collect()
                .await;
            let mut failed = None;
            for (s, outcome) in outcomes {
                match outcome {
                    Ok(true) => fired += 1,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::warn!(schedule = %s.id, error = %e, "a due schedule did not fire; it is tried again when its claim runs out");
                        failed.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
        }
    }

    /// [`Routes::revisit_waiters`] for each circuit, after the change that
    /// moved them committed; a failure only delays waiters, so it is logged.
    pub(super) async fn revisit_all(&self, keys: &[CircuitKey]) {
        for key in keys {
            if let Err(e) = self.revisit_waiters(key).await {
                tracing::warn!(circuit = %key, error = %e, "moving a circuit's waiters failed; they look again at their deadline");
            }
        }
    }
}
