//! Durable recovery routes: SPEC.md's state machine over the store.
//!
//! Every operation loads the route, decides with pure code ([`machine`],
//! [`crate::recovery`]), and commits one [`Commit`] — the route row with a
//! compare-and-swap on its generation, plus the attempt, schedule, dispatch
//! and event it implies — in one transaction. Only after the commit are
//! timers woken, dispatch waiters told and events broadcast; a failed write
//! schedules nothing. Losing a race answers with the authoritative snapshot.

pub mod model;

pub use app::route::machine;

use crate::classify::{classify_at, Catalogue, Classification, Evidence, Phase, UnknownLog};
use crate::clock::SharedClock;
use crate::profiles::{ProfileError, Profiles};
use crate::recovery::{evaluate, Decision, EffectGate, Failure, GateInput, GateVerdict, Rejection};
use crate::scheduler::Signals;
use crate::store::{
    ClaimFilter, Commit, DispatchRow, DynStore, RouteFilter, ScheduleRow, StoreError,
};
use app::policy::{ClassPolicy, FieldError, FieldErrorCode, PolicyClass};
use app::profile::Profile;
use app::route::{
    event_kind, Action, Attempt, Caller, CallerKind, DecisionKind, Dispatch, DispatchReason,
    DispatchState, LastFailure, Pending, PendingKind, RouteOutcome, RouteSnapshot, RouteState,
    ScheduleState, StopReason,
};
use app::words::safe_cause;
use chrono::{DateTime, Utc};
use machine::{Outcome, Trigger};
use model::{attempt_to_wire, dispatch_state, dispatch_to_wire, new_id, Memory, Route};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum RouteError {
    #[error("not found: {0}")]
    NotFound(&'static str),
    #[error("the request is invalid")]
    Invalid(Vec<FieldError>),
    #[error("{0}")]
    Malformed(String),
    /// The expected generation is not the route's: here is the route now.
    #[error("the route moved on")]
    Stale(Box<RouteSnapshot>),
    /// The state table does not allow this now.
    #[error("{message}")]
    InvalidAction {
        message: String,
        route: Box<RouteSnapshot>,
    },
    #[error("{0}")]
    Conflict(String),
    #[error("the profile cannot authorise work: {0}")]
    ProfileUnusable(String),
    #[error("stored route is corrupt: {0}")]
    Corrupt(String),
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for RouteError {
    fn from(e: StoreError) -> Self {
        RouteError::Store(e)
    }
}

impl From<ProfileError> for RouteError {
    fn from(e: ProfileError) -> Self {
        match e {
            ProfileError::NotFound => RouteError::NotFound("profile"),
            ProfileError::Misconfigured(m) => RouteError::ProfileUnusable(m),
            ProfileError::Store(s) => RouteError::Store(s),
            other => RouteError::ProfileUnusable(other.to_string()),
        }
    }
}

pub type Result<T, E = RouteError> = std::result::Result<T, E>;

/// `POST /routes` body.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRoute {
    pub profile_id: String,
    pub caller: Caller,
}

/// Identity of the invocation a report is about.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InvocationReport {
    pub generation: i64,
    pub invocation_id: String,
    pub prompt_generation: i64,
}

/// `POST /routes/{id}/effects` body: the agent produced output or touched tools.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EffectReport {
    pub generation: i64,
    pub invocation_id: String,
    pub prompt_generation: i64,
    /// `agent_message_chunk`, `tool_call`, `tool_call_update`, `partial_result`, …
    pub kind: String,
    /// The provider-native session, for resumable retries.
    #[serde(default)]
    pub provider_session_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    pub action: Action,
    pub expected_generation: i64,
}

/// The decision as the API reports it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct DecisionView {
    pub kind: DecisionKind,
    #[schema(value_type = Option<String>, example = "transient")]
    pub class: Option<PolicyClass>,
    pub retry_ordinal: Option<u32>,
    pub max_retries: Option<u32>,
    pub delay_seconds: Option<u64>,
    pub deadline: Option<DateTime<Utc>>,
    /// Where the route went: its state, or why nothing changed.
    #[schema(value_type = String, example = "retry_wait until 2026-11-30T12:00:05+00:00")]
    pub outcome: RouteOutcome,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FailureAnswer {
    #[schema(value_type = Object)]
    pub classification: Classification,
    pub decision: DecisionView,
    pub route: RouteSnapshot,
}

/// `POST /dispatches/claim` body.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimRequest {
    #[serde(default)]
    pub route_id: Option<String>,
    #[serde(default)]
    pub caller_kind: Option<CallerKind>,
    pub lease_seconds: u32,
    #[serde(default)]
    pub wait_seconds: u32,
}

pub const MAX_LEASE_SECONDS: u32 = 3_600;
pub const MAX_CLAIM_WAIT_SECONDS: u32 = 60;
const CLAIM_BATCH: i64 = 32;

#[derive(Clone)]
pub struct Routes {
    store: DynStore,
    clock: SharedClock,
    profiles: Profiles,
    catalogue: &'static Catalogue,
    unknown: Arc<UnknownLog>,
    signals: Arc<Signals>,
}

/// The shape of a transition about to be committed.
struct Change {
    route: Route,
    expected: Option<i64>,
    /// The state the route leaves (`None` when it is created).
    from: Option<RouteState>,
    commit: Commit,
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

    fn now(&self) -> DateTime<Utc> {
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
    async fn apply(&self, mut change: Change, kind: &str) -> Result<RouteSnapshot> {
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
            return Ok(self.stale_answer(classification, route, now));
        }
        let failure = Failure {
            class: classification.class,
            confidence: classification.confidence,
            reset_at: classification.reset_at,
        };
        let profile = self.profiles.get(&route.profile_id).await.ok();
        let candidate = profile
            .as_ref()
            .filter(|p| p.configuration_error.is_none())
            .and_then(|p| p.candidates.iter().find(|c| c.id == route.candidate.id));
        let (decision, policy) = match candidate {
            Some(c) => {
                let usage = failure
                    .class
                    .policy_class()
                    .map(|pc| route.memory.usage(&route.candidate.id, pc))
                    .unwrap_or_default();
                (
                    evaluate(gate, &failure, &c.policy, usage, now),
                    Some(c.policy),
                )
            }
            // The profile lost this candidate or cannot be read: nothing
            // authorises automatic work.
            None => (
                Decision::Stop {
                    class: PolicyClass::Transient,
                },
                None,
            ),
        };
        let reason_override = candidate.is_none().then_some(StopReason::ProfileChanged);

        let failed_generation = route.generation;
        let failed_invocation = route.invocation_id.clone();
        let mut next = route.clone();
        next.generation += 1;
        next.last_failure = Some(LastFailure {
            code: classification.code.clone(),
            class: classification.class,
            safe_cause: safe_cause(&classification.code),
            http_status: error_status(&evidence),
        });
        let mut commit = Commit::default();
        let class_policy = |class: PolicyClass| policy.map(|p| *p.class(class));
        let (outcome, view) = match decision {
            Decision::Rejected(r) => {
                next.reason = Some(r.into());
                (Outcome::ManualRecovery, decision_view(&decision))
            }
            Decision::WaitForReset { class, deadline } => {
                let p = class_policy(class).unwrap_or_default();
                next.memory
                    .reset_used
                    .push(Memory::key(&route.candidate.id, class));
                next.pending = Some(pending(
                    PendingKind::ResetWait,
                    deadline,
                    0,
                    &p,
                    &classification,
                ));
                commit.schedule = Some(schedule(&next, PendingKind::ResetWait, deadline, now));
                (Outcome::WaitForReset, decision_view(&decision))
            }
            Decision::Retry {
                class,
                ordinal,
                deadline,
                ..
            } => {
                let p = class_policy(class).unwrap_or_default();
                next.memory
                    .retries
                    .insert(Memory::key(&route.candidate.id, class), ordinal);
                next.pending = Some(pending(
                    PendingKind::Retry,
                    deadline,
                    ordinal,
                    &p,
                    &classification,
                ));
                commit.schedule = Some(schedule(&next, PendingKind::Retry, deadline, now));
                (Outcome::Retry, decision_view(&decision))
            }
            Decision::Skip { .. } => {
                let switched = profile
                    .as_ref()
                    .and_then(|p| self.switch(&mut next, p, now));
                match switched {
                    Some(d) => {
                        commit.dispatch = Some(d);
                        (Outcome::Switch, decision_view(&decision))
                    }
                    None => {
                        next.reason = Some(StopReason::NoEligibleCandidate);
                        (Outcome::ManualRecovery, decision_view(&decision))
                    }
                }
            }
            Decision::Stop { .. } => {
                next.reason = Some(reason_override.unwrap_or(StopReason::StoppedByPolicy));
                (Outcome::ManualRecovery, decision_view(&decision))
            }
        };
        next.state = machine::next(route.state, Trigger::Failure(outcome))
            .expect("failing states accept failures");
        if next.state != RouteState::RetryWait && next.state != RouteState::WaitingForReset {
            next.pending = None;
        }
        if next.state != RouteState::ActionRequired {
            next.reason = None;
        }
        let mut view = view;
        view.outcome = describe_outcome(&next);
        commit.attempt = Some(crate::store::AttemptRow {
            route_id: route.id.clone(),
            seq: 0,
            generation: failed_generation,
            cycle: route.cycle,
            candidate_index: route.candidate.index as i64,
            candidate_id: route.candidate.id.clone(),
            candidate_label: route.candidate.label.clone(),
            invocation_id: failed_invocation,
            code: classification.code.clone(),
            class: classification.class.as_str().into(),
            catalogue_version: classification.catalogue_version.clone(),
            classifier_rule: classification.classifier_rule.clone(),
            safe_excerpt: classification.safe_excerpt.clone(),
            http_status: error_status(&evidence).map(i64::from),
            policy: failure
                .class
                .policy_class()
                .and_then(class_policy)
                .map(|p| serde_json::to_string(&p).expect("policies serialise"))
                .unwrap_or_else(|| "null".into()),
            decision: view.kind.to_string(),
            retry_ordinal: view.retry_ordinal.unwrap_or(0) as i64,
            deadline: view.deadline.map(|d| d.timestamp_millis()),
            outcome: view.outcome.to_string(),
            created_at: now.timestamp_millis(),
        });
        let change = Change {
            route: next,
            expected: Some(failed_generation),
            from: Some(route.state),
            commit,
        };
        match self.apply(change, event_kind::FAILURE).await {
            Ok(route) => {
                metrics::counter!("kandev_decisions_total", "decision" => view.kind.as_str())
                    .increment(1);
                Ok(FailureAnswer {
                    classification,
                    decision: view,
                    route,
                })
            }
            // Someone else moved the route first: this report is stale now.
            Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {
                let route = self.load(id).await?;
                Ok(self.stale_answer(classification, route, now))
            }
            Err(e) => Err(e),
        }
    }

    fn stale_answer(
        &self,
        classification: Classification,
        route: Route,
        now: DateTime<Utc>,
    ) -> FailureAnswer {
        let decision = Decision::Rejected(Rejection::Stale);
        let mut view = decision_view(&decision);
        view.outcome = RouteOutcome::Unchanged {
            generation: route.generation,
            state: route.state,
        };
        FailureAnswer {
            classification,
            decision: view,
            route: route.snapshot(now),
        }
    }

    /// Excludes the current candidate and moves to the next eligible one;
    /// answers the switch dispatch, or `None` when no candidate is left.
    fn switch(
        &self,
        route: &mut Route,
        profile: &Profile,
        now: DateTime<Utc>,
    ) -> Option<DispatchRow> {
        if !route.memory.excluded.contains(&route.candidate.id) {
            route.memory.excluded.push(route.candidate.id.clone());
        }
        let (index, candidate) =
            profile.next_eligible(&route.candidate.id, &route.memory.excluded)?;
        route.move_to(index, candidate);
        Some(route.dispatch(DispatchReason::Switch, now))
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

    async fn claimed_dispatch(&self, route: &Route) -> Result<Option<DispatchRow>> {
        for d in self.store.list_dispatches(&route.id).await? {
            let claimed =
                dispatch_state(&d).map_err(RouteError::Corrupt)? == DispatchState::Claimed;
            if claimed && d.generation == route.generation {
                return Ok(Some(d));
            }
        }
        Ok(None)
    }

    /// Commits a fenced change; losing the race answers 409 with the route now.
    async fn apply_fenced(
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
                match self.switch(&mut next, &profile, now) {
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

    /// Claims due dispatches with a lease, waiting up to `wait_seconds` for one.
    pub async fn claim(&self, req: ClaimRequest) -> Result<Vec<Dispatch>> {
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
            route_id: req.route_id.clone(),
            caller_kind: req.caller_kind.map(|k| k.as_str().to_string()),
            limit: CLAIM_BATCH,
        };
        // Long-polling waits in real time: it is how long a client holds a
        // connection, not a recovery deadline.
        let give_up =
            tokio::time::Instant::now() + std::time::Duration::from_secs(req.wait_seconds as u64);
        loop {
            let notified = self.signals.dispatches.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let now = self.now();
            let lease_until = now + chrono::Duration::seconds(req.lease_seconds as i64);
            let rows = self
                .store
                .claim_dispatches(
                    &filter,
                    now.timestamp_millis(),
                    lease_until.timestamp_millis(),
                )
                .await?;
            if !rows.is_empty() || tokio::time::Instant::now() >= give_up {
                return rows
                    .iter()
                    .map(|d| dispatch_to_wire(d).map_err(RouteError::Corrupt))
                    .collect();
            }
            tokio::select! {
                _ = notified => {}
                _ = tokio::time::sleep_until(give_up) => {}
                _ = self.signals.shutdown.cancelled() => return Ok(Vec::new()),
            }
        }
    }

    /// The caller delivered the prompt of a claimed dispatch.
    pub async fn acknowledge(&self, dispatch_id: &str, generation: i64) -> Result<RouteSnapshot> {
        let d = self
            .store
            .get_dispatch(dispatch_id)
            .await?
            .ok_or(RouteError::NotFound("dispatch"))?;
        let route = self.load(&d.route_id).await?;
        let wire = dispatch_to_wire(&d).map_err(RouteError::Corrupt)?;
        let state = dispatch_state(&d).map_err(RouteError::Corrupt)?;
        if state == DispatchState::Acked && d.generation == generation {
            return Ok(route.snapshot(self.now()));
        }
        if generation != d.generation || route.generation != d.generation {
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
        self.apply_fenced(&route, next, commit, event_kind::DISPATCH_ACKED)
            .await
    }

    /// Claimed dispatches that were never acknowledged are ambiguous: the
    /// prompt may or may not have reached the agent. Their routes stop for a
    /// person; nothing is re-dispatched. With `lease_expired_before`, only
    /// dispatches whose lease ran out; without, all (at start-up).
    pub async fn stop_ambiguous(
        &self,
        lease_expired_before: Option<DateTime<Utc>>,
    ) -> Result<usize> {
        let claimed = self
            .store
            .claimed_dispatches(lease_expired_before.map(|t| t.timestamp_millis()))
            .await?;
        let mut stopped = 0;
        for d in claimed {
            let route = self.load(&d.route_id).await?;
            let Some(state) = machine::next(route.state, Trigger::AmbiguousDispatch)
                .filter(|_| route.generation == d.generation)
            else {
                continue;
            };
            let mut next = route.clone();
            next.state = state;
            next.generation += 1;
            next.reason = Some(StopReason::AmbiguousDispatch);
            match self
                .apply_fenced(&route, next, Commit::default(), event_kind::AMBIGUOUS)
                .await
            {
                Ok(_) => stopped += 1,
                Err(RouteError::Stale(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(stopped)
    }
}

/// The first HTTP error status in the evidence: a number, safe to show.
fn error_status(evidence: &Evidence) -> Option<u16> {
    evidence.items.iter().find_map(|i| match i {
        crate::classify::Item::Http(h) => h.status.filter(|s| *s >= 400),
        _ => None,
    })
}

fn pending(
    kind: PendingKind,
    deadline: DateTime<Utc>,
    ordinal: u32,
    p: &ClassPolicy,
    c: &Classification,
) -> Pending {
    Pending {
        kind,
        deadline,
        retry_ordinal: ordinal,
        max_retries: p.retry.max_retries,
        outcome_after: p.on_exhausted,
        code: c.code.clone(),
        class: c.class,
    }
}

fn schedule(
    route: &Route,
    kind: PendingKind,
    deadline: DateTime<Utc>,
    now: DateTime<Utc>,
) -> ScheduleRow {
    ScheduleRow {
        id: new_id("s"),
        route_id: route.id.clone(),
        generation: route.generation,
        kind: kind.as_str().into(),
        deadline: deadline.timestamp_millis(),
        state: ScheduleState::Armed.to_string(),
        created_at: now.timestamp_millis(),
    }
}

fn decision_view(d: &Decision) -> DecisionView {
    let mut v = DecisionView {
        kind: d.kind(),
        class: d.class(),
        retry_ordinal: None,
        max_retries: None,
        delay_seconds: None,
        deadline: None,
        // Set once the route's next state is known.
        outcome: RouteOutcome::In(RouteState::Active),
    };
    match *d {
        Decision::WaitForReset { deadline, .. } => v.deadline = Some(deadline),
        Decision::Retry {
            ordinal,
            max_retries,
            delay_seconds,
            deadline,
            ..
        } => {
            v.retry_ordinal = Some(ordinal);
            v.max_retries = Some(max_retries);
            v.delay_seconds = Some(delay_seconds);
            v.deadline = Some(deadline);
        }
        Decision::Skip { .. } | Decision::Stop { .. } | Decision::Rejected(_) => {}
    }
    v
}

fn describe_outcome(route: &Route) -> RouteOutcome {
    match (route.state, &route.reason, &route.pending) {
        (RouteState::ActionRequired, Some(reason), _) => RouteOutcome::Stopped(reason.clone()),
        (RouteState::Switching, _, _) => RouteOutcome::Switching {
            to: route.candidate.label.clone(),
        },
        (state, _, Some(p)) => RouteOutcome::Waiting {
            state,
            until: p.deadline,
        },
        (state, _, _) => RouteOutcome::In(state),
    }
}
