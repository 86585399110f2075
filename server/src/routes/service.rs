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
use super::idempotency::{self, Creation, RouteKey};
use super::machine::{self, Outcome, Trigger};
use super::model::{attempt_to_wire, Route};
use super::plan::{self, FailureFacts};
use super::signals::Signals;
use super::wire::{ActionRequest, CreateRoute, EffectReport, FailureAnswer, InvocationReport};
use crate::circuits::row::Loaded;
use crate::circuits::CircuitKey;
use crate::clock::SharedClock;
use crate::profiles::Profiles;
use crate::recovery::{EffectGate, GateInput, GateVerdict};
use crate::store::{
    Commit, DecisionRows, DynStore, RouteFilter, RouteKeyRow, ScheduleRow, StoreError,
};
use crate::unknown::UnknownLog;
use chrono::{DateTime, Utc};
use classify::{classify_at, Catalogue, Classification, Evidence};
use domain::ids::{Generation, RouteId};
use domain::policy::{ErrorClass, FieldError, FieldErrorCode};
use domain::profile::Profile;
use domain::route::{
    event_kind, Action, Attempt, DispatchState, PendingKind, RouteSnapshot, RouteState,
};
use futures::StreamExt;
use std::sync::Arc;

/// How often a change is planned again when a shared circuit moved under
/// it (each time, another route's change committed: progress was made).
const CIRCUIT_ATTEMPTS: usize = 8;

/// How long a server holds the due schedules it claimed to fire. Firing a
/// batch takes milliseconds; the claim only has to outlast a slow batch,
/// and it is how long a claim whose holder cannot be seen to be gone
/// (see the store's `claimant`) waits before another server takes it.
pub const SCHEDULE_CLAIM: std::time::Duration = std::time::Duration::from_secs(10);

/// Due schedules claimed at a time: small, so one server never hoards what
/// the others could be firing.
const FIRE_BATCH: i64 = 64;

/// Claimed schedules fired at once. Each is its own fenced transaction
/// on a different route; a few keep the database busy without starving
/// requests of pool connections (16).
const FIRE_CONCURRENCY: usize = 4;

/// What a deployment sets about routes (`serve --max-hold-wait`,
/// `--dispatch-timeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteSettings {
    /// How long a switch (or a new route) waits for a candidate that a
    /// shared circuit holds, when every remaining candidate is held; beyond
    /// it the route stops (`all_candidates_held`).
    pub max_hold_wait: chrono::Duration,
    /// A dispatch nobody claims within this stops its route
    /// (`dispatch_not_claimed`); `None`: never.
    pub dispatch_timeout: Option<chrono::Duration>,
}

impl RouteSettings {
    pub const DEFAULT_MAX_HOLD_WAIT_SECONDS: u64 = 900;
    pub const DEFAULT_DISPATCH_TIMEOUT_SECONDS: u64 = 1800;

    /// From the command line's seconds (`dispatch_timeout` 0: never).
    pub fn from_seconds(max_hold_wait: u64, dispatch_timeout: u64) -> RouteSettings {
        let seconds = |s: u64| chrono::Duration::seconds(s.min(i64::MAX as u64 / 1000) as i64);
        RouteSettings {
            max_hold_wait: seconds(max_hold_wait),
            dispatch_timeout: (dispatch_timeout > 0).then(|| seconds(dispatch_timeout)),
        }
    }
}

impl Default for RouteSettings {
    fn default() -> RouteSettings {
        RouteSettings::from_seconds(
            RouteSettings::DEFAULT_MAX_HOLD_WAIT_SECONDS,
            RouteSettings::DEFAULT_DISPATCH_TIMEOUT_SECONDS,
        )
    }
}

#[derive(Clone)]
pub struct Routes {
    pub(super) store: DynStore,
    clock: SharedClock,
    pub(super) profiles: Profiles,
    catalogue: &'static Catalogue,
    unknown: UnknownLog,
    pub(super) signals: Arc<Signals>,
    /// The committed event tail every event stream reads.
    feed: Arc<super::feed::Feed>,
    /// One firing pass at a time in this process: the test clock's
    /// "fire everything due before answering" waits for a pass the timer
    /// loop has under way instead of answering while its claims are still
    /// being fired.
    firing: Arc<tokio::sync::Mutex<()>>,
    pub(super) settings: RouteSettings,
}

/// The shape of a transition about to be committed.
pub(super) struct Change {
    pub route: Route,
    pub expected: Option<Generation>,
    /// The state the route leaves (`None` when it is created).
    pub from: Option<RouteState>,
    pub commit: Commit,
}

impl Change {
    /// `next` replaces `from`, fenced by `from`'s generation.
    pub fn after(from: &Route, next: Route, commit: Commit) -> Change {
        Change {
            route: next,
            expected: Some(from.generation),
            from: Some(from.state),
            commit,
        }
    }
}

impl Routes {
    pub fn new(
        store: DynStore,
        clock: SharedClock,
        profiles: Profiles,
        catalogue: &'static Catalogue,
        unknown: UnknownLog,
        signals: Arc<Signals>,
    ) -> Routes {
        Routes {
            store,
            clock,
            profiles,
            catalogue,
            unknown,
            signals,
            feed: Arc::default(),
            firing: Arc::default(),
            settings: RouteSettings::default(),
        }
    }

    /// The deployment's route settings instead of the defaults.
    pub fn with_settings(mut self, settings: RouteSettings) -> Routes {
        self.settings = settings;
        self
    }

    pub fn clock(&self) -> &SharedClock {
        &self.clock
    }

    pub fn signals(&self) -> &Arc<Signals> {
        &self.signals
    }

    /// Committed events from now on, for an event stream (see
    /// [`super::feed`]).
    pub async fn feed(&self) -> Result<tokio::sync::broadcast::Receiver<super::feed::Batch>> {
        Ok(self.feed.subscribe(&self.store, &self.signals).await?)
    }

    pub(super) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The instant due-ness and leases are judged at: `None` lets the
    /// database's clock decide (see [`crate::clock::Clock::pinned`]).
    pub(super) fn pinned_ms(&self) -> Option<i64> {
        self.clock.pinned_ms()
    }

    pub async fn load(&self, id: &RouteId) -> Result<Route> {
        let row = self
            .store
            .get_route(id.as_str())
            .await?
            .ok_or(RouteError::NotFound("route"))?;
        Route::from_row(row).map_err(RouteError::Corrupt)
    }

    /// The route, its profile (`None` when the profile is gone) and the
    /// circuits, read together (see
    /// [`crate::store::Store::get_route_for_decision`]), unless `read`
    /// already holds them.
    async fn load_for_decision(
        &self,
        id: &RouteId,
        read: Option<DecisionRows>,
    ) -> Result<(Route, Option<Profile>, Loaded)> {
        let rows = match read {
            Some(rows) => rows,
            None => self
                .store
                .get_route_for_decision(id.as_str())
                .await?
                .ok_or(RouteError::NotFound("route"))?,
        };
        let route = Route::from_row(rows.route).map_err(RouteError::Corrupt)?;
        let circuits = Loaded::from_rows(rows.circuits).map_err(RouteError::Corrupt)?;
        let profile = match rows.profile {
            Some(p) => Some(self.profiles.of_row(p).await),
            None => None,
        };
        Ok((route, profile, circuits))
    }

    pub async fn get(&self, id: &RouteId) -> Result<RouteSnapshot> {
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

    pub async fn attempts(&self, id: &RouteId) -> Result<Vec<Attempt>> {
        self.load(id).await?;
        self.store
            .list_attempts(id.as_str())
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
        change.commit.expected_generation = change.expected.map(Generation::get);
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
        let (store, signals, kind) = (self.store.clone(), self.signals.clone(), kind.to_string());
        // Its own task: once queued, a transition is committed in its batch
        // whether or not this request is still waited for (a client that
        // hung up), and what committed is announced all the same, so no
        // timer sleeps through a schedule nobody told it about.
        tokio::spawn(async move {
            let commit = change.commit;
            let event_id = store.commit(&commit).await?;
            crate::meters::committed(&commit);
            signals.announce(crate::store::Announcement {
                event_id,
                schedule: commit.schedule.as_ref().map(|s| s.deadline),
                dispatch: commit.dispatch.is_some(),
            });
            metrics::counter!(crate::meters::ROUTE_TRANSITIONS, "kind" => kind).increment(1);
            Ok::<_, StoreError>(())
        })
        .await
        .map_err(|e| StoreError::Unavailable(format!("committing a transition stopped: {e}")))??;
        Ok(snapshot)
    }

    /// Opens a route on a usable profile, at its first candidate.
    pub async fn create(&self, req: CreateRoute) -> Result<RouteSnapshot> {
        Ok(self.create_keyed(req, None).await?.0)
    }

    /// [`Routes::create`] with an idempotency key: the route this key
    /// already created for the same request, if there is one, else a new
    /// route with the key stored in the transaction that inserts it. Two
    /// creations with one key at once make one route: the second's key is
    /// taken when it commits, and it answers the first's route.
    pub async fn create_keyed(
        &self,
        req: CreateRoute,
        key: Option<RouteKey>,
    ) -> Result<(RouteSnapshot, Creation)> {
        self.create_opened_by(req, key, None).await
    }

    /// [`Routes::create_keyed`], recording `opened_by` (a token's or a
    /// person's id) as the route's opener in the transaction that inserts
    /// it: reports and claims for the route then need that principal or
    /// `routes:any`. Without one, only `routes:any` may report.
    pub async fn create_opened_by(
        &self,
        req: CreateRoute,
        key: Option<RouteKey>,
        opened_by: Option<&str>,
    ) -> Result<(RouteSnapshot, Creation)> {
        // The key with the request it is sent with, in canonical form.
        let keyed = key.map(|k| (k, idempotency::request_of(&req)));
        if let Some((k, request)) = &keyed {
            if let Some(replay) = self.replay(k, request).await? {
                return Ok((replay, Creation::Replayed));
            }
        }
        let profile = self.profiles.get_usable(req.profile_id.as_str()).await?;
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
        // Shown in page titles and the route list.
        domain::policy::text::check_visible("caller.ref", &req.caller.reference)
            .map_err(|e| RouteError::Invalid(vec![e]))?;
        let now = self.now();
        for _ in 0..CIRCUIT_ATTEMPTS {
            let mut route = Route::open(profile.id.clone(), req.caller.clone(), first, now);
            let mut circuits = self.circuits().await?;
            // The first candidate its circuits let a new route try; when
            // every one is held, the one whose hold ends first, once it
            // ends (or a stop, when that is too far away).
            let mut schedule = None;
            match plan::select(
                route.id.as_str(),
                &profile,
                &mut circuits.set,
                self.settings.max_hold_wait,
                now,
            ) {
                plan::Start::Now(index) => {
                    if index != route.candidate.index {
                        route.move_to(index, &profile.candidates[index]);
                    }
                }
                plan::Start::Held(index, wait) => {
                    let candidate = &profile.candidates[index];
                    route.move_to(index, candidate);
                    route.state = RouteState::Switching;
                    // Nothing failed on this route yet: what the circuit
                    // holding it is open for says what follows.
                    let code = wait
                        .hold
                        .as_ref()
                        .and_then(|h| {
                            circuits.set.get(&CircuitKey {
                                scope: h.scope,
                                resource: h.resource.clone(),
                            })
                        })
                        .map(|c| c.code.clone())
                        .unwrap_or_default();
                    let class = self
                        .catalogue
                        .class_of(&code)
                        .unwrap_or(ErrorClass::Transient);
                    let p = class
                        .policy_class()
                        .map(|pc| *candidate.policy.class(pc))
                        .unwrap_or_default();
                    schedule = Some(wait.apply(&mut route, &p, &code, class, now));
                }
                // Nothing failed on this route yet, so there is no failure
                // to name the hold with: the Circuits page lists them.
                plan::Start::AllHeld(_) => {
                    route.state = RouteState::ActionRequired;
                    route.reason = Some(domain::route::StopReason::AllCandidatesHeld);
                }
            }
            let route_key = keyed.as_ref().map(|(k, request)| RouteKeyRow {
                scope: k.scope.clone(),
                key: k.key.as_str().to_string(),
                route_id: route.id.to_string(),
                request: request.clone(),
                created_at: now.timestamp_millis(),
            });
            let commit = Commit {
                circuits: circuits.writes(route.id.as_str()),
                route_key,
                opened_by: opened_by.map(str::to_string),
                schedule,
                ..Commit::default()
            };
            let change = Change {
                route,
                expected: None,
                from: None,
                commit,
            };
            match (self.apply(change, event_kind::CREATED).await, &keyed) {
                (Err(RouteError::Store(StoreError::StaleCircuit { .. })), _) => continue,
                // Answers come after their batch commits, so the route
                // that took the key is there to be read.
                (Err(RouteError::Store(StoreError::KeyTaken)), Some((k, request))) => {
                    return match self.replay(k, request).await? {
                        Some(replay) => Ok((replay, Creation::Replayed)),
                        // Keys are never deleted: a taken key reads back.
                        None => Err(RouteError::Corrupt(format!(
                            "idempotency key `{}` was taken, yet names no route",
                            k.key.as_str()
                        ))),
                    };
                }
                (other, _) => return other.map(|route| (route, Creation::Created)),
            }
        }
        Err(RouteError::Conflict(
            "shared circuits kept changing; create the route again".into(),
        ))
    }

    /// The route `key` created, now, if it created one; the key reused for
    /// a different request is refused.
    async fn replay(&self, key: &RouteKey, request: &str) -> Result<Option<RouteSnapshot>> {
        let Some(row) = self
            .store
            .get_route_key(&key.scope, key.key.as_str())
            .await?
        else {
            return Ok(None);
        };
        if row.request != request {
            return Err(RouteError::Invalid(vec![idempotency::reused(
                &row.route_id,
            )]));
        }
        self.get(&RouteId(row.route_id)).await.map(Some)
    }

    /// Classifies a failure, runs the gate and the policy, and commits the
    /// resulting transition.
    pub async fn report_failure(
        &self,
        id: &RouteId,
        body: &serde_json::Value,
    ) -> Result<FailureAnswer> {
        self.report_failure_read(id, body, None).await
    }

    /// [`RouteService::report_failure`], deciding first on `read`, the
    /// route as [`Store::get_route_for_decision`] answered it after the
    /// report arrived (the HTTP guard reads it with the caller's token).
    /// A read that is stale by the time it commits is fenced like any
    /// other: the route's generation decides.
    pub async fn report_failure_read(
        &self,
        id: &RouteId,
        body: &serde_json::Value,
        mut read: Option<DecisionRows>,
    ) -> Result<FailureAnswer> {
        let evidence = Evidence::from_json_value(body).map_err(|e| {
            RouteError::Malformed(format!("The evidence envelope could not be read: {e}."))
        })?;
        if let Some(rid) = &evidence.route_id {
            if id != rid.as_str() {
                return Err(RouteError::Invalid(vec![FieldError::new(
                    "route_id",
                    FieldErrorCode::InvalidValue,
                    format!("the envelope names route `{rid}`, not `{id}`"),
                )]));
            }
        }
        let now = self.now();
        let classification = classify_at(self.catalogue, &evidence, now);
        // The log is for growing the catalogue: losing one sighting must not
        // stop a route's recovery, so a failed write is only logged.
        if let Err(e) = self.unknown.record(&classification).await {
            tracing::warn!(error = %e, "recording unknown evidence failed");
        }
        metrics::counter!(crate::meters::FAILURES, "class" => classification.class.as_str())
            .increment(1);
        // A circuit another route changed while we planned: plan again
        // from what is stored now.
        for _ in 0..CIRCUIT_ATTEMPTS {
            if let Some(answer) = self
                .plan_failure(id, read.take(), &evidence, &classification, now)
                .await?
            {
                return Ok(answer);
            }
        }
        Err(RouteError::Conflict(
            "shared circuits kept changing; report the failure again".into(),
        ))
    }

    /// One try at committing a failure; `None` when a circuit moved on.
    async fn plan_failure(
        &self,
        id: &RouteId,
        read: Option<DecisionRows>,
        evidence: &Evidence,
        classification: &Classification,
        now: DateTime<Utc>,
    ) -> Result<Option<FailureAnswer>> {
        let classification = classification.clone();
        let (route, profile, mut circuits) = self.load_for_decision(id, read).await?;
        let gate = EffectGate {
            generation: route.generation.get(),
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
            phase: evidence.phase,
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
            return Ok(Some(stale_answer(classification, &route, now)));
        }
        let decided = plan::decide(
            &route,
            gate,
            &classification,
            profile.as_ref(),
            &mut circuits.set,
            now,
        );
        let plan = plan::failure(FailureFacts {
            route: &route,
            decided,
            circuits: &mut circuits.set,
            classification: &classification,
            http_status: error_status(evidence),
            profile: profile.as_ref(),
            max_hold_wait: self.settings.max_hold_wait,
            resume: evidence.resumable.as_ref().and_then(|r| {
                Some(domain::route::Resume {
                    provider_session_id: r.provider_session_id.clone()?,
                    generation: i64::try_from(r.generation?).ok()?,
                })
            }),
            now,
        });
        let mut commit = plan.commit;
        commit.circuits = circuits.writes(route.id.as_str());
        let reopened: Vec<CircuitKey> = circuits
            .set
            .changes()
            .into_iter()
            .filter(|c| c.kind() == crate::circuits::ChangeKind::Reopened)
            .map(|c| c.after.key)
            .collect();
        let change = Change::after(&route, plan.route, commit);
        match self.apply(change, event_kind::FAILURE).await {
            Ok(snapshot) => {
                metrics::counter!(crate::meters::DECISIONS, "decision" => plan.decision.kind.as_str())
                    .increment(1);
                // The probe failed: its waiters now wait for the new end.
                self.revisit_all(&reopened).await;
                Ok(Some(FailureAnswer {
                    classification,
                    decision: plan.decision,
                    route: snapshot,
                }))
            }
            // Someone else moved the route first: this report is stale now.
            Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {
                let route = self.load(id).await?;
                Ok(Some(stale_answer(classification, &route, now)))
            }
            Err(RouteError::Store(StoreError::StaleCircuit { .. })) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// [`Routes::revisit_waiters`] for each circuit, after the change that
    /// moved them committed; a failure only delays waiters, so it is logged.
    async fn revisit_all(&self, keys: &[CircuitKey]) {
        for key in keys {
            if let Err(e) = self.revisit_waiters(key).await {
                tracing::warn!(circuit = %key, error = %e, "moving a circuit's waiters failed; they look again at their deadline");
            }
        }
    }

    /// The route's candidate as its profile has it now, read only when
    /// some circuit exists (most of the time none does, and a timer firing
    /// should not read the profile for nothing); `cache` keeps it across
    /// re-plans.
    async fn candidate_if_circuits(
        &self,
        route: &Route,
        circuits: &Loaded,
        cache: &mut Option<Option<domain::profile::Candidate>>,
    ) -> Option<domain::profile::Candidate> {
        if circuits.set.is_empty() {
            return None;
        }
        if cache.is_none() {
            let profile = self.profiles.get(route.profile_id.as_str()).await.ok();
            *cache = Some(profile.and_then(|p| {
                p.candidates
                    .into_iter()
                    .find(|c| c.id == route.candidate.id)
            }));
        }
        cache.clone().flatten()
    }

    /// Every circuit for people: `GET /api/v1/circuits`.
    pub async fn circuit_list(&self) -> Result<domain::circuit::CircuitList> {
        let rows = self.store.list_circuits().await?;
        let waiting = self.store.circuit_waiting_counts().await?;
        crate::circuits::view::list(&rows, &waiting, self.now()).map_err(RouteError::Corrupt)
    }

    /// Every circuit as stored, ready to plan with.
    pub async fn circuits(&self) -> Result<Loaded> {
        Loaded::from_rows(self.store.list_circuits().await?).map_err(RouteError::Corrupt)
    }

    /// Records output or tool activity for the current invocation. An
    /// effect of an earlier invocation whose failure was already being
    /// recovered from came out of order: while the successor is not yet
    /// delivered it is withdrawn and the route stops for a person
    /// (`effect_after_failure`); once it was delivered, the route records
    /// that the work may have run twice (an attempt row and an event).
    pub async fn report_effect(&self, id: &RouteId, report: EffectReport) -> Result<RouteSnapshot> {
        if report.kind.trim().is_empty() || report.kind.len() > 64 {
            return Err(RouteError::Invalid(vec![FieldError::out_of_range(
                "kind", "length", 1, 64,
            )]));
        }
        for _ in 0..3 {
            let route = self.load(id).await?;
            let current = report.invocation_id == route.invocation_id
                && report.prompt_generation == route.prompt_generation
                && report.generation == route.generation;
            // Only an effect about another invocation reads the history.
            let (failed, outstanding) = if current {
                (None, false)
            } else {
                let failed = self
                    .store
                    .list_attempts(id.as_str())
                    .await?
                    .into_iter()
                    .filter(|a| a.invocation_id == report.invocation_id)
                    .max_by_key(|a| a.seq);
                let outstanding = failed.is_some() && self.successor_outstanding(&route).await?;
                (failed, outstanding)
            };
            let (next, commit, kind) =
                match plan::effect(&route, &report, failed.as_ref(), outstanding, self.now()) {
                    plan::EffectPlan::Nothing => return Ok(route.snapshot(self.now())),
                    plan::EffectPlan::Counted(next) => {
                        (*next, Commit::default(), event_kind::EFFECT)
                    }
                    plan::EffectPlan::Late {
                        route: next,
                        commit,
                    } => (*next, *commit, event_kind::LATE_EFFECT),
                };
            match self.apply(Change::after(&route, next, commit), kind).await {
                Err(RouteError::Store(StoreError::StaleGeneration { .. })) => continue,
                other => return other,
            }
        }
        Err(RouteError::Conflict(
            "the route kept changing; report the effect again".into(),
        ))
    }

    /// Whether the route's next attempt is scheduled or dispatched but not
    /// yet delivered: a wait is armed, or this generation's dispatch is
    /// pending or claimed (not acknowledged).
    async fn successor_outstanding(&self, route: &Route) -> Result<bool> {
        if route.pending.is_some() {
            return Ok(true);
        }
        if !matches!(route.state, RouteState::Retrying | RouteState::Switching) {
            return Ok(false);
        }
        for d in self.store.list_dispatches(route.id.as_str()).await? {
            let state = super::model::dispatch_state(&d).map_err(RouteError::Corrupt)?;
            if Generation(d.generation) == route.generation
                && matches!(state, DispatchState::Pending | DispatchState::Claimed)
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The current invocation succeeded: the route is active again, a new
    /// cycle begins (exclusions, reset waits and retry budgets reset), and
    /// the next prompt is a new invocation (new id, prompt generation + 1),
    /// which the answer names.
    pub async fn report_success(
        &self,
        id: &RouteId,
        report: InvocationReport,
    ) -> Result<RouteSnapshot> {
        for _ in 0..CIRCUIT_ATTEMPTS {
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
            let next = plan::success(&route, state);
            let mut commit = Commit::default();
            // Success proves the in-flight dispatch was delivered.
            if let Some(d) = self.claimed_dispatch(&route).await? {
                commit.ack_dispatch = Some((d.id, self.now().timestamp_millis()));
            }
            // A probe that succeeded closes its circuits.
            let mut circuits = self.circuits().await?;
            let candidate = self
                .candidate_if_circuits(&route, &circuits, &mut None)
                .await;
            let closed = candidate
                .map(|c| {
                    circuits
                        .set
                        .succeed((&c).into(), route.id.as_str(), self.now())
                })
                .unwrap_or_default();
            commit.circuits = circuits.writes(route.id.as_str());
            match self
                .apply_fenced(&route, next, commit, event_kind::SUCCESS)
                .await
            {
                Err(RouteError::Store(StoreError::StaleCircuit { .. })) => continue,
                Ok(snapshot) => {
                    // Its waiters go now, a few at a time.
                    self.revisit_all(&closed).await;
                    return Ok(snapshot);
                }
                Err(e) => return Err(e),
            }
        }
        Err(RouteError::Conflict(
            "shared circuits kept changing; report the success again".into(),
        ))
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
        match self.apply(Change::after(from, route, commit), kind).await {
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
    pub async fn act(&self, id: &RouteId, req: ActionRequest) -> Result<RouteSnapshot> {
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
        let profile = if plan::action_needs_profile(&route, req.action) {
            Some(self.profiles.get_usable(route.profile_id.as_str()).await?)
        } else {
            None
        };
        let mut circuits = self.circuits().await?;
        let (next, mut commit) = plan::action(
            &route,
            req.action,
            state,
            profile.as_ref(),
            &mut circuits.set,
            self.settings.max_hold_wait,
            now,
        )?;
        commit.circuits = circuits.writes(route.id.as_str());
        self.apply_fenced(&route, next, commit, event_kind::ACTION)
            .await
    }

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
                    event_kind::HELD,
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
        classify::Item::Http(h) => h.status.filter(|s| *s >= 400),
        _ => None,
    })
}
