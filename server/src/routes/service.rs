//! The route service: the thin shell around the pure parts. Every
//! operation loads the route, decides with pure code (the state table in
//! [`machine`], [`crate::recovery::evaluate`], the failure planner in
//! [`super::plan`]) and commits one [`Commit`] — the route row with a
//! compare-and-swap on its generation, plus the attempt, schedule,
//! dispatch and event it implies — in one transaction. Only after the
//! commit are timers woken, dispatch waiters told and events broadcast; a
//! failed write schedules nothing. Losing a race answers with the
//! authoritative snapshot.
//!
//! Here: [`Routes`] itself, its settings, loading and reading routes, and
//! committing a change ([`Routes::apply`]). The operations are in modules
//! of their own, each an `impl Routes` block: opening routes
//! ([`super::create`]), what an adapter reports — failures, effects,
//! success ([`super::reports`]), a person's actions ([`super::actions`]),
//! timers and circuit waiters ([`super::firing`]), and dispatches
//! ([`super::dispatch`]).

use super::error::{Result, RouteError};
use super::model::{attempt_to_wire, Route};
use super::signals::Signals;
use crate::catalogue::Catalogues;
use crate::circuits::row::Loaded;
use crate::clock::SharedClock;
use crate::profiles::Profiles;
use crate::store::{Commit, DecisionRows, DynStore, RouteFilter, StoreError};
use crate::unknown::UnknownLog;
use chrono::{DateTime, Utc};
use domain::ids::{Generation, RouteId};
use domain::profile::Profile;
use domain::route::{Attempt, EventKind, RouteSnapshot, RouteState};
use std::sync::Arc;

/// How often a change is planned again when a shared circuit moved under
/// it (each time, another route's change committed: progress was made).
pub(super) const CIRCUIT_ATTEMPTS: usize = 8;

/// How long a server holds the due schedules it claimed to fire. Firing a
/// batch takes milliseconds; the claim only has to outlast a slow batch,
/// and it is how long a claim whose holder cannot be seen to be gone
/// (see the store's `claimant`) waits before another server takes it.
pub const SCHEDULE_CLAIM: std::time::Duration = std::time::Duration::from_secs(10);

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
    pub(super) clock: SharedClock,
    pub(super) profiles: Profiles,
    pub(super) catalogue: Catalogues,
    pub(super) unknown: UnknownLog,
    pub(super) signals: Arc<Signals>,
    /// The committed event tail every event stream reads.
    pub(super) feed: Arc<super::feed::Feed>,
    /// One firing pass at a time in this process: the test clock's
    /// "fire everything due before answering" waits for a pass the timer
    /// loop has under way instead of answering while its claims are still
    /// being fired.
    pub(super) firing: Arc<tokio::sync::Mutex<()>>,
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
        catalogue: Catalogues,
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
    pub(super) async fn load_for_decision(
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

    /// The list's cursor for `after`: the creation time and id of the
    /// route it names (a route that is gone — pruned, or never there —
    /// answers `None`).
    pub async fn cursor(&self, after: &RouteId) -> Result<Option<(i64, String)>> {
        Ok(self
            .store
            .get_route(after.as_str())
            .await?
            .map(|r| (r.created_at, r.id)))
    }

    /// A page of the route's attempts, newest first: those before attempt
    /// `before_seq`, at most `limit`.
    pub async fn attempts(
        &self,
        id: &RouteId,
        before_seq: Option<i64>,
        limit: i64,
    ) -> Result<Vec<Attempt>> {
        self.load(id).await?;
        self.store
            .attempts_page(id.as_str(), before_seq, limit)
            .await?
            .iter()
            .map(|a| attempt_to_wire(a).map_err(RouteError::Corrupt))
            .collect()
    }

    /// A page of the route's events, oldest first: those after event
    /// `after`, at most `limit`. A route's events are committed one
    /// transition at a time, so their ids grow in commit order and the
    /// cursor misses none.
    pub async fn events(
        &self,
        id: &RouteId,
        after: i64,
        limit: i64,
    ) -> Result<Vec<domain::route::RouteEvent>> {
        self.load(id).await?;
        self.store
            .events_after(after, Some(id.as_str()), limit)
            .await?
            .into_iter()
            .map(|e| {
                let kind = e.kind.parse().map_err(|_| {
                    RouteError::Corrupt(format!("stored event kind `{}` is unknown", e.kind))
                })?;
                let route = serde_json::from_str(&e.payload)
                    .map_err(|err| RouteError::Corrupt(format!("stored event {}: {err}", e.id)))?;
                let actor = match e.actor.as_deref() {
                    Some(a) => Some(crate::audit::actor_of_json(a)?),
                    None => None,
                };
                Ok(domain::route::RouteEvent {
                    id: e.id,
                    kind,
                    route,
                    actor,
                })
            })
            .collect()
    }

    /// Commits a change and, only then, wakes timers, dispatch waiters and
    /// event listeners.
    pub(super) async fn apply(&self, mut change: Change, kind: EventKind) -> Result<RouteSnapshot> {
        let now = self.now();
        change.route.updated_at = now;
        let snapshot = change.route.snapshot(now);
        change.commit.expected_generation = change.expected.map(Generation::get);
        // Only these states can leave an armed schedule or an open dispatch
        // behind; skipping the sweep elsewhere saves two statements. An
        // ended route sweeps whatever it left, wherever it came from.
        change.commit.void_pending = change.route.state.is_terminal()
            || change.from.is_some_and(|s| {
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
        let actor = crate::audit::event_actor(kind, crate::audit::current());
        change.commit.event_actor = Some(crate::audit::actor_json(&actor));
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

    /// The route's candidate as its profile has it now, read only when
    /// some circuit exists (most of the time none does, and a timer firing
    /// should not read the profile for nothing); `cache` keeps it across
    /// re-plans.
    pub(super) async fn candidate_if_circuits(
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

    /// Commits a fenced change; losing the race answers 409 with the route now.
    pub(super) async fn apply_fenced(
        &self,
        from: &Route,
        route: Route,
        commit: Commit,
        kind: EventKind,
    ) -> Result<RouteSnapshot> {
        let id = route.id.clone();
        match self.apply(Change::after(from, route, commit), kind).await {
            Err(RouteError::Store(StoreError::StaleGeneration { .. })) => {
                Err(RouteError::Stale(Box::new(self.get(&id).await?)))
            }
            other => other,
        }
    }

    pub(super) fn invalid(&self, what: &str, route: &Route) -> RouteError {
        RouteError::InvalidAction {
            message: format!("{what} while the route is {}", route.state),
            route: Box::new(route.snapshot(self.now())),
        }
    }
}
