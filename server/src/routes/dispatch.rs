//! Dispatches: claiming them with a lease (long-polling for one to come
//! due), acknowledging delivery, and the ambiguity rule — a dispatch that
//! was claimed but not acknowledged within its lease may or may not have
//! reached the agent, so its route stops for a person and nothing is
//! repeated. Claims and lease expiry are judged in the database (its clock
//! unless the test clock pins one), so every server sharing it agrees.

use super::error::{Result, RouteError};
use super::machine::{self, Trigger};
use super::model::{dispatch_state, dispatch_to_wire, Route};
use super::Routes;
use crate::store::{ClaimFilter, Commit, DispatchRow};
use domain::api::{ClaimRequest, MAX_CLAIM_WAIT_SECONDS, MAX_LEASE_SECONDS};
use domain::ids::{Generation, RouteId};
use domain::policy::FieldError;
use domain::route::{
    Dispatch, DispatchReason, DispatchState, EventKind, RouteSnapshot, StopReason,
};

/// The most dispatches one claim hands out.
const CLAIM_BATCH: i64 = 32;

/// A long-polling claim looks at the database this often even when no
/// wake-up came: a fallback, since commits on every server wake it (see
/// [`super::signals`]); it only matters if an announcement was lost.
const CLAIM_POLL: std::time::Duration = std::time::Duration::from_secs(5);

impl Routes {
    pub(super) async fn claimed_dispatch(&self, route: &Route) -> Result<Option<DispatchRow>> {
        for d in self.store.list_dispatches(route.id.as_str()).await? {
            let claimed =
                dispatch_state(&d).map_err(RouteError::Corrupt)? == DispatchState::Claimed;
            if claimed && Generation(d.generation) == route.generation {
                return Ok(Some(d));
            }
        }
        Ok(None)
    }

    /// Claims due dispatches with a lease, waiting up to `wait_seconds` for one.
    pub async fn claim(&self, req: ClaimRequest) -> Result<Vec<Dispatch>> {
        self.claim_opened_by(req, None).await
    }

    /// [`Routes::claim`], of the routes `opened_by` opened only (`None`:
    /// every route's).
    pub async fn claim_opened_by(
        &self,
        req: ClaimRequest,
        opened_by: Option<String>,
    ) -> Result<Vec<Dispatch>> {
        let mut errors = Vec::new();
        if !(1..=MAX_LEASE_SECONDS).contains(&req.lease_seconds) {
            errors.push(FieldError::out_of_range(
                "lease_seconds",
                "lease (seconds)",
                1,
                MAX_LEASE_SECONDS as u64,
            ));
        }
        if req.wait_seconds > MAX_CLAIM_WAIT_SECONDS {
            errors.push(FieldError::out_of_range(
                "wait_seconds",
                "wait (seconds)",
                0,
                MAX_CLAIM_WAIT_SECONDS as u64,
            ));
        }
        if !errors.is_empty() {
            return Err(RouteError::Invalid(errors));
        }
        let filter = ClaimFilter {
            route_id: req.route_id.as_ref().map(RouteId::to_string),
            caller_kind: req.caller_kind.map(|k| k.as_str().to_string()),
            limit: CLAIM_BATCH,
            opened_by,
        };
        // Long-polling waits in real time: it is how long a client holds a
        // connection, not a recovery deadline.
        let give_up =
            tokio::time::Instant::now() + std::time::Duration::from_secs(req.wait_seconds as u64);
        let lease_ms = req.lease_seconds as i64 * 1000;
        loop {
            let notified = self.signals.dispatches.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let rows = self
                .store
                .claim_dispatches(&filter, self.pinned_ms(), lease_ms)
                .await?;
            metrics::counter!(crate::meters::DISPATCHES_CLAIMED).increment(rows.len() as u64);
            if !rows.is_empty() || tokio::time::Instant::now() >= give_up {
                return rows
                    .iter()
                    .map(|d| dispatch_to_wire(d).map_err(RouteError::Corrupt))
                    .collect();
            }
            let poll = (tokio::time::Instant::now() + CLAIM_POLL).min(give_up);
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep_until(poll) => {}
                _ = self.signals.shutdown.cancelled() => return Ok(Vec::new()),
            }
        }
    }

    /// The caller delivered the prompt of a claimed dispatch.
    pub async fn acknowledge(
        &self,
        dispatch_id: &str,
        generation: Generation,
    ) -> Result<RouteSnapshot> {
        let d = self
            .store
            .get_dispatch(dispatch_id)
            .await?
            .ok_or(RouteError::NotFound("dispatch"))?;
        let route = self.load(&RouteId(d.route_id.clone())).await?;
        let wire = dispatch_to_wire(&d).map_err(RouteError::Corrupt)?;
        let state = dispatch_state(&d).map_err(RouteError::Corrupt)?;
        let of_dispatch = Generation(d.generation);
        if state == DispatchState::Acked && of_dispatch == generation {
            return Ok(route.snapshot(self.now()));
        }
        if generation != of_dispatch || route.generation != of_dispatch {
            return Err(RouteError::Stale(Box::new(route.snapshot(self.now()))));
        }
        if state != DispatchState::Claimed {
            return Err(RouteError::InvalidAction {
                message: format!("the dispatch is {state}, not claimed"),
                route: Box::new(route.snapshot(self.now())),
            });
        }
        let mut next = route.clone();
        if wire.reason == DispatchReason::Switch {
            if let Some(state) = machine::next(route.state, Trigger::SwitchAcknowledged) {
                next.state = state;
            }
        }
        let commit = Commit {
            ack_dispatch: Some((d.id.clone(), self.now().timestamp_millis())),
            ..Commit::default()
        };
        self.apply_fenced(&route, next, commit, EventKind::DispatchAcked)
            .await
    }

    /// A claimed dispatch whose lease ran out unacknowledged is ambiguous:
    /// the prompt may or may not have reached the agent. Its route stops
    /// for a person; nothing is re-dispatched. Only the lease decides, not
    /// a restart: a caller still within its lease may acknowledge while
    /// servers restart around it. Any number of servers may run this at
    /// once; the generation fence stops each route once, and the dispatch
    /// fence ([`Commit::expire_dispatch`]) never after an acknowledgement.
    pub async fn stop_ambiguous(&self) -> Result<usize> {
        let claimed = self.store.expired_dispatches(self.pinned_ms()).await?;
        // Fenced on the dispatch too: an acknowledgement that commits
        // after the expiry was read wins, and the route goes on.
        self.stop_for(claimed, DispatchStop::Ambiguous).await
    }

    /// A dispatch nobody claimed within the deployment's dispatch timeout
    /// means no caller is picking the route's work up: the route stops for
    /// a person (`dispatch_not_claimed`) rather than sit in `retrying` or
    /// `switching` for ever. The dispatch is withdrawn with its generation,
    /// fenced on its still being pending: a claim that commits after the
    /// check was read wins, and the route goes on. Answers how many routes
    /// stopped.
    pub async fn stop_unclaimed(&self) -> Result<usize> {
        let Some(timeout) = self.settings.dispatch_timeout else {
            return Ok(0);
        };
        let unclaimed = self
            .store
            .unclaimed_dispatches(self.pinned_ms(), timeout.num_milliseconds())
            .await?;
        self.stop_for(unclaimed, DispatchStop::Unclaimed).await
    }

    /// Stops the route of each dispatch for `why`, if the route is still at
    /// the dispatch's generation in a state the table lets it stop from;
    /// answers how many stopped.
    async fn stop_for(&self, dispatches: Vec<DispatchRow>, why: DispatchStop) -> Result<usize> {
        let (trigger, reason, kind) = match why {
            DispatchStop::Ambiguous => (
                Trigger::AmbiguousDispatch,
                StopReason::AmbiguousDispatch,
                EventKind::Ambiguous,
            ),
            DispatchStop::Unclaimed => (
                Trigger::DispatchNotClaimed,
                StopReason::DispatchNotClaimed,
                EventKind::Unclaimed,
            ),
        };
        let mut stopped = 0;
        for d in dispatches {
            let route = self.load(&RouteId(d.route_id.clone())).await?;
            let Some(state) = machine::next(route.state, trigger)
                .filter(|_| route.generation == Generation(d.generation))
            else {
                continue;
            };
            let mut next = route.clone();
            next.state = state;
            next.generation = next.generation.next();
            next.pending = None;
            next.reason = Some(reason.clone());
            let commit = match why {
                DispatchStop::Ambiguous => Commit {
                    expire_dispatch: Some(d.id.clone()),
                    ..Commit::default()
                },
                DispatchStop::Unclaimed => Commit {
                    withdraw_unclaimed: Some(d.id.clone()),
                    ..Commit::default()
                },
            };
            match self.apply_fenced(&route, next, commit, kind).await {
                Ok(_) => stopped += 1,
                Err(RouteError::Stale(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(stopped)
    }
}

/// Why a dispatch stops its route.
#[derive(Debug, Clone, Copy)]
enum DispatchStop {
    /// Claimed, and its lease ran out unacknowledged.
    Ambiguous,
    /// Never claimed within the dispatch timeout.
    Unclaimed,
}
