//! The route service: the thin shell around the pure parts. Every
//! operation loads the route, decides with pure code (the state table in
//! [`machine`], [`crate::recovery::evaluate`], the failure planner in
//! [`super::plan`]) and commits one [`Commit`] — the route row with a
//! compare-and-swap on its generation, plus the attempt, schedule,
//! dispatch and event it implies — in one transaction. Only after the
//! commit are timers woken, dispatch waiters told and events broadcast; a
//! failed write schedules nothing. Losing a race answers with the
//! authoritative snapshot.

use super::error::{Result, RouteError};
use super::machine::{self, Outcome, Trigger};
use super::model::{attempt_to_wire, new_id, Memory, Route};
use super::plan::{self, FailureFacts};
use super::signals::Signals;
use super::wire::{ActionRequest, CreateRoute, EffectReport, FailureAnswer, InvocationReport};
use crate::classify::{classify_at, Catalogue, Classification, Evidence, Phase, UnknownLog};
use crate::clock::SharedClock;
use crate::profiles::Profiles;
use crate::recovery::{EffectGate, GateInput, GateVerdict};
use crate::store::{Commit, DynStore, RouteFilter, ScheduleRow, StoreError};
use app::policy::{FieldError, FieldErrorCode};
use app::route::{
    event_kind, Action, Attempt, DispatchReason, PendingKind, RouteSnapshot, RouteState, StopReason,
};
use chrono::{DateTime, Utc};
use std::sync::Arc;

#[derive(Clone)]
pub struct Routes {
    pub(super) store: DynStore,
    clock: SharedClock,
    pub(super) profiles: Profiles,
    catalogue: &'static Catalogue,
    unknown: Arc<UnknownLog>,
    pub(super) signals: Arc<Signals>,
}

/// The shape of a transition about to be committed.
pub(super) struct Change {
    pub route: Route,
    pub expected: Option<i64>,
    /// The state the route leaves (`None` when it is created).
    pub from: Option<RouteState>,
    pub commit: Commit,
}

impl Routes {
    pub fn new(
        store: DynStore,
        clock: SharedClock,
        profiles: Profiles,
        catalogue: &'static Catalogue,
        unknown: Arc<UnknownLog>,
        signals: Arc<Signals>,
    ) -> Routes {
        Routes {
            store,
            clock,
            profiles,
            catalogue,
            unknown,
            signals,
        }
    }

    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    pub fn signals(&self) -> &Arc<Signals> {
        &self.signals
    }

    pub(super) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    pub async fn load(&self, id: &str) -> Result<Route> {
        let row = self
            .store
            .get_route(id)
            .await?
            .ok_or(RouteError::NotFound("route"))?;
        Route::from_row(row).map_err(RouteError::Corrupt)
    }

    pub async fn get(&self, id: &str) -> Result<RouteSnapshot> {
        Ok(self.load(id).await?.snapshot(self.now()))
    }

    pub async fn list(&self, filter: RouteFilter) -> Result<Vec<RouteSnapshot>> {
        let now = self.now();
        let rows = self.store.list_routes(&filter).await?;
        rows.into_iter()
            .map(|r| {
                Route::from_row(r)
                    .map(|r| r.snapshot(now))
                    .map_err(RouteError::Corrupt)
            })
            .collect()
    }

    pub async fn attempts(&self, id: &str) -> Result<Vec<Attempt>> {
        self.load(id).await?;
        self.store
            .list_attempts(id)
            .await?
            .iter()
            .map(|a| attempt_to_wire(a).map_err(RouteError::Corrupt))
            .collect()
    }

    /// Commits a change and, only then, wakes timers, dispatch waiters and
    /// event listeners.
    pub(super) async fn apply(&self, mut change: Change, kind: &str) -> Result<RouteSnapshot> {
        let now = self.now();
        change.route.updated_at = now;
        let snapshot = change.route.snapshot(now);
        change.commit.expected_generation = change.expected;
        // Only these states can leave an armed schedule or an open dispatch
        // behind; skipping the sweep elsewhere saves two statements.
        change.commit.void_pending = change.from.is_some_and(|s| {
            matches!(
                s,
                RouteState::RetryWait
                    | RouteState::WaitingForReset
                    | RouteState::Retrying
                    | RouteState::Switching
            )
        });
        change.commit.route = Some(change.route.to_row());
        change.commit.event_kind = kind.to_string();
        change.commit.event_payload =
            serde_json::to_string(&snapshot).expect("snapshots serialise");
        let has_schedule = change.commit.schedule.is_some();
        let has_dispatch = change.commit.dispatch.is_some();
        let event_id = self.store.commit(&change.commit).await?;
        if has_schedule {
            self.signals.schedules.notify_one();
        }
        if has_dispatch {
            self.signals.dispatches.notify_waiters();
        }
        let _ = self.signals.events.send(event_id);
        metrics::counter!("kandev_route_transitions_total", "kind" => kind.to_string())
            .increment(1);
        Ok(snapshot)
    }

    /// Opens a route on a usable profile, at its first candidate.
    pub async fn create(&self, req: CreateRoute) -> Result<RouteSnapshot> {
        let profile = self.profiles.get_usable(&req.profile_id).await?;
        let first = profile
            .candidates
            .first()
            .ok_or_else(|| RouteError::ProfileUnusable("the profile has no candidates".into()))?;
        if req.caller.reference.chars().count() > 200 {
            return Err(RouteError::Invalid(vec![FieldError::out_of_range(
                "caller.ref",
                "length",
                0,
                200,
            )]));
        }
        let now = self.now();
        let mut route = Route {
            id: new_id("r"),
            profile_id: profile.id.clone(),
            caller: req.caller,
            state: RouteState::Active,
            generation: 1,
            cycle: 1,
            candidate: Default::default(),
            invocation_id: String::new(),
            prompt_generation: 1,
            effects: 0,
            provider_session_id: None,
            memory: Memory::default(),
            pending: None,
            last_failure: None,
            reason: None,
            created_at: now,
            updated_at: now,
        };
        route.move_to(0, first);
        self.apply(
            Change {
                route,
                expected: None,
                from: None,
                commit: Commit::default(),
            },
            event_kind::CREATED,
        )
        .await
    }

    /// Classifies a failure, runs the gate and the policy, and commits the
    /// resulting transition.
    pub async fn report_failure(
        &self,
        id: &str,
        body: &serde_json::Value,
    ) -> Result<FailureAnswer> {
        let evidence = Evidence::from_json_value(body).map_err(|e| {
            RouteError::Malformed(format!("The evidence envelope could not be read: {e}."))
        })?;
        if let Some(rid) = &evidence.route_id {
            if rid != id {
                return Err(RouteError::Invalid(vec![FieldError::new(
                    "route_id",
                    FieldErrorCode::InvalidValue,
                    format!("the envelope names route `{rid}`, not `{id}`"),
                )]));
            }
        }
        let now = self.now();
        let classification = classify_at(self.catalogue, &evidence, now);
        if classification.class == app::policy::ErrorClass::Unclassified {
            self.unknown.record(&classification);
        }
        metrics::counter!("kandev_failures_total", "class" => classification.class.as_str())
            .increment(1);
        let route = self.load(id).await?;
        let gate = EffectGate {
            generation: route.generation,
            invocation_id: &route.invocation_id,
            prompt_generation: route.prompt_generation,
            reported_effects: route.effects,
            provider_session_id: route.provider_session_id.as_deref(),
        }
        .check(&GateInput {
            generation: evidence.generation.map(|g| g as i64),
            invocation_id: evidence.invocation_id.as_deref(),
            prompt_generation: evidence.prompt_generation.map(|g| g as i64),
            effect_items: evidence.effect_count(),
            after_completion: evidence.phase == Some(Phase::Teardown),
            resumable_session: evidence
                .resumable
                .as_ref()
                .and_then(|r| r.provider_session_id.as_deref()),
            resumable_generation: evidence
                .resumable
                .as_ref()
                .and_then(|r| r.generation)
                .map(|g| g as i64),
        });
        let accepts =
            machine::next(route.state, Trigger::Failure(Outcome::ManualRecovery)).is_some();
        if gate == GateVerdict::Stale || !accepts {
            return Ok(stale_answer(classification, &route, now));
        }
        let profile = self.profiles.get(&route.profile_id).await.ok();
        let (decision, policy) = plan::decide(&route, gate, &classification, profile.as_ref(), now);
        let plan = plan::failure(FailureFacts {
            route: &route,
            decision,
            policy,
            classification: &classification,
            http_status: error_status(&evidence),
            profile: profile.as_ref(),
            now,
        });
        let change = Change {
            route: plan.route,
            expected: Some(route.generation),
            from: Some(route.state),
            commit: plan.commit,
        };
        match self.apply(change, event_kind::FAILURE).await {
            Ok(snapshot) => {
                metrics::counter!("kandev_decisions_total", "decision" => plan.decision.kind.as_str())
                    .increment(1);
                Ok(FailureAnswer {
                    classification,
                    decision: plan.decision,
                    route: snapshot,
                })
            }
            // Someone else moved the route first: this report is stale now.
            Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {
                let route = self.load(id).await?;
                Ok(stale_answer(classification, &route, now))
            }
            Err(e) => Err(e),
        }
    }

    /// Records output or tool activity for the current invocation. An
    /// effect for an invocation that already failed and is waiting to be
    /// retried arrived out of order: replay is no longer safe, so the route
    /// stops for a person.
    pub async fn report_effect(&self, id: &str, report: EffectReport) -> Result<RouteSnapshot> {
        if report.kind.trim().is_empty() || report.kind.len() > 64 {
            return Err(RouteError::Invalid(vec![FieldError::out_of_range(
                "kind", "length", 1, 64,
            )]));
        }
        for _ in 0..3 {
            let route = self.load(id).await?;
            let same_invocation = report.invocation_id == route.invocation_id
                && report.prompt_generation == route.prompt_generation;
            let mut next = route.clone();
            let (expected, kind) = if same_invocation && report.generation == route.generation {
                next.effects += 1;
                if let Some(s) = &report.provider_session_id {
                    next.provider_session_id = Some(s.chars().take(200).collect());
                }
                (route.generation, event_kind::EFFECT)
            } else if same_invocation
                && report.generation < route.generation
                && route.state.is_waiting()
            {
                next.generation += 1;
                next.state = RouteState::ActionRequired;
                next.pending = None;
                next.reason = Some(StopReason::EffectAfterFailure);
                (route.generation, event_kind::EFFECT)
            } else {
                // About an invocation the route has left behind.
                return Ok(route.snapshot(self.now()));
            };
            match self
                .apply(
                    Change {
                        route: next,
                        expected: Some(expected),
                        from: Some(route.state),
                        commit: Commit::default(),
                    },
                    kind,
                )
                .await
            {
                Err(RouteError::Store(StoreError::StaleGeneration { .. })) => continue,
                other => return other,
            }
        }
        Err(RouteError::Conflict(
            "the route kept changing; report the effect again".into(),
        ))
    }

    /// The current invocation succeeded: the route is active again, a new
    /// cycle begins (exclusions, reset waits and retry budgets reset), and
    /// the next prompt is a new invocation (new id, prompt generation + 1),
    /// which the answer names.
    pub async fn report_success(
        &self,
        id: &str,
        report: InvocationReport,
    ) -> Result<RouteSnapshot> {
        let route = self.load(id).await?;
        let current = report.generation == route.generation
            && report.invocation_id == route.invocation_id
            && report.prompt_generation == route.prompt_generation;
        if !current {
            return Err(RouteError::Stale(Box::new(route.snapshot(self.now()))));
        }
        let Some(state) = machine::next(route.state, Trigger::Success) else {
            return Err(self.invalid("success cannot be reported", &route));
        };
        let mut next = route.clone();
        next.state = state;
        next.generation += 1;
        next.pending = None;
        next.reason = None;
        next.new_cycle();
        // The invocation is over: the next prompt is a new one, and effects
        // of this one must not taint it.
        next.new_invocation();
        next.prompt_generation += 1;
        let mut commit = Commit::default();
        // Success proves the in-flight dispatch was delivered.
        if let Some(d) = self.claimed_dispatch(&route).await? {
            commit.ack_dispatch = Some((d.id, self.now().timestamp_millis()));
        }
        self.apply_fenced(&route, next, commit, event_kind::SUCCESS)
            .await
    }

    /// Commits a fenced change; losing the race answers 409 with the route now.
    pub(super) async fn apply_fenced(
        &self,
        from: &Route,
        route: Route,
        commit: Commit,
        kind: &str,
    ) -> Result<RouteSnapshot> {
        let id = route.id.clone();
        match self
            .apply(
                Change {
                    route,
                    expected: Some(from.generation),
                    from: Some(from.state),
                    commit,
                },
                kind,
            )
            .await
        {
            Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {
                Err(RouteError::Stale(Box::new(self.get(&id).await?)))
            }
            other => other,
        }
    }

    fn invalid(&self, what: &str, route: &Route) -> RouteError {
        RouteError::InvalidAction {
            message: format!("{what} while the route is {}", route.state),
            route: Box::new(route.snapshot(self.now())),
        }
    }

    /// Retry now, skip now, cancel or stop, fenced by the expected generation.
    pub async fn act(&self, id: &str, req: ActionRequest) -> Result<RouteSnapshot> {
        let route = self.load(id).await?;
        let now = self.now();
        // Cancelling or stopping a stopped route changes nothing: answer
        // with the route as it is, whatever generation was sent.
        if matches!(req.action, Action::Cancel | Action::Stop)
            && route.state == RouteState::ActionRequired
        {
            return Ok(route.snapshot(now));
        }
        if req.expected_generation != route.generation {
            return Err(RouteError::Stale(Box::new(route.snapshot(now))));
        }
        let Some(state) = machine::next(route.state, req.action.trigger()) else {
            return Err(self.invalid(
                &format!("{:?} is not possible", req.action).to_lowercase(),
                &route,
            ));
        };
        let mut next = route.clone();
        next.generation += 1;
        next.pending = None;
        next.reason = None;
        next.state = state;
        let mut commit = Commit::default();
        let restarting = route.state == RouteState::ActionRequired;
        match req.action {
            Action::RetryNow => {
                if restarting {
                    next.new_cycle();
                    let profile = self.profiles.get_usable(&route.profile_id).await?;
                    let index = profile
                        .candidates
                        .iter()
                        .position(|c| c.id == route.candidate.id)
                        .unwrap_or(0);
                    let candidate = profile
                        .candidates
                        .get(index)
                        .ok_or(RouteError::ProfileUnusable("no candidates".into()))?;
                    next.move_to(index, candidate);
                } else {
                    next.new_invocation();
                }
                let reason = DispatchReason::after(route.pending.as_ref().map(|p| p.kind));
                commit.dispatch = Some(next.dispatch(reason, now));
            }
            Action::SkipNow => {
                if restarting {
                    next.new_cycle();
                }
                let profile = self.profiles.get_usable(&route.profile_id).await?;
                match plan::switch(&mut next, &profile, now) {
                    Some(d) => commit.dispatch = Some(d),
                    None => {
                        next.state = RouteState::ActionRequired;
                        next.reason = Some(StopReason::NoEligibleCandidate);
                    }
                }
            }
            Action::Cancel => next.reason = Some(StopReason::CancelledByUser),
            Action::Stop => next.reason = Some(StopReason::StoppedByUser),
        }
        self.apply_fenced(&route, next, commit, event_kind::ACTION)
            .await
    }

    /// Fires one due schedule if its generation is still the route's.
    /// Answers whether it created a dispatch.
    pub async fn fire(&self, schedule: &ScheduleRow) -> Result<bool> {
        let route = match self.load(&schedule.route_id).await {
            Ok(r) => r,
            Err(RouteError::NotFound(_)) => {
                self.store.void_schedule(&schedule.id).await?;
                return Ok(false);
            }
            Err(e) => return Err(e),
        };
        let Some(state) = machine::next(route.state, Trigger::Deadline)
            .filter(|_| route.generation == schedule.generation)
        else {
            self.store.void_schedule(&schedule.id).await?;
            return Ok(false);
        };
        let now = self.now();
        let mut next = route.clone();
        next.state = state;
        next.generation += 1;
        next.pending = None;
        next.new_invocation();
        let kind: PendingKind = schedule.kind.parse().map_err(|_| {
            RouteError::Corrupt(format!(
                "stored schedule kind `{}` of {} is unknown",
                schedule.kind, schedule.id
            ))
        })?;
        let reason = DispatchReason::after(Some(kind));
        let commit = Commit {
            fire_schedule: Some(schedule.id.clone()),
            dispatch: Some(next.dispatch(reason, now)),
            ..Commit::default()
        };
        let lateness = (now.timestamp_millis() - schedule.deadline).max(0) as f64 / 1000.0;
        match self
            .apply(
                Change {
                    route: next,
                    expected: Some(route.generation),
                    from: Some(route.state),
                    commit,
                },
                event_kind::FIRED,
            )
            .await
        {
            Ok(_) => {
                metrics::histogram!("kandev_timer_lateness_seconds").record(lateness);
                Ok(true)
            }
            Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {
                self.store.void_schedule(&schedule.id).await?;
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Fires every schedule due now; answers how many dispatched.
    pub async fn fire_due(&self) -> Result<usize> {
        let mut fired = 0;
        loop {
            let due = self
                .store
                .due_schedules(self.now().timestamp_millis(), 256)
                .await?;
            if due.is_empty() {
                return Ok(fired);
            }
            for s in &due {
                if self.fire(s).await? {
                    fired += 1;
                }
            }
        }
    }
}

/// The answer to a failure report that changes nothing.
fn stale_answer(
    classification: Classification,
    route: &Route,
    now: DateTime<Utc>,
) -> FailureAnswer {
    FailureAnswer {
        classification,
        decision: plan::stale(route),
        route: route.snapshot(now),
    }
}

/// The first HTTP error status in the evidence: a number, safe to show.
fn error_status(evidence: &Evidence) -> Option<u16> {
    evidence.items.iter().find_map(|i| match i {
        crate::classify::Item::Http(h) => h.status.filter(|s| *s >= 400),
        _ => None,
    })
}
