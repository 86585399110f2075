//! Persistence behind one trait, with an SQLite and a PostgreSQL
//! implementation generated from the same SQL (see [`sql`]), so every query
//! is exercised by one behavioural suite on both engines.
//!
//! The store knows rows, not rules: it never validates a policy. What it
//! guarantees is atomicity (each method is one transaction) and fencing
//! (`revision` compare-and-swap on profiles).
//!
//! Several servers may share one PostgreSQL database (SQLite has one
//! server per file, see [`ServerLock`]). For them the store also owns what
//! must be decided in the database rather than in a process: due schedules
//! and pending dispatches are claimed in one statement that skips rows
//! another transaction holds (`FOR UPDATE SKIP LOCKED`), so no two servers
//! take the same one; due-ness and lease expiry are judged by the
//! database's clock unless the caller pins an instant (the test clock, see
//! [`crate::clock::Clock::pinned`]); and every commit announces itself
//! (`NOTIFY`, read back through [`CommitListener`]) so waiters on every
//! server wake at once instead of at their next poll.

pub(crate) mod access;
pub(crate) mod audit;
pub(crate) mod group;
mod hot;
mod pg_batch;
mod postgres;
mod rows;
mod sql;
mod sqlite;
pub(crate) mod sqlite_file;
pub(crate) mod sqlite_log;
mod sqlite_reads;
pub(crate) mod sqlite_writer;
pub(crate) mod transition;
pub(crate) mod webhooks;

pub use access::{AccessStore, PersonRow, TokenRow, UserRow};
pub use audit::{AuditRow, AuditStore, ProfileRevisionRow};
pub use postgres::{CommitListener, Heard, PgStore};
pub use rows::{
    Announcement, AttemptRow, CircuitEventRow, CircuitRow, CircuitWrite, ClaimFilter, Commit,
    DispatchRow, EventRow, RouteFilter, RouteKeyRow, RouteRow, ScheduleRow, StateCounts,
    UnknownRow, UnknownSightingRow,
};
pub use sqlite::{LockError, ServerLock, SqliteStore};
pub use sqlite_file::Synchronous;
pub use webhooks::{Attempted, DeliveryRow, WebhookGauges, WebhookRow, WebhookStore};

use async_trait::async_trait;
use std::sync::Arc;

/// What went wrong in the store, in terms callers act on.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("not found")]
    NotFound,
    /// The row moved on: `current` is the revision now stored.
    #[error("stale revision: the stored revision is {current}")]
    StaleRevision { current: i64 },
    /// A route moved on: `current` is its generation now.
    #[error("stale generation: the route is at generation {current}")]
    StaleGeneration { current: i64 },
    /// A circuit moved on (another route changed it first): nothing was
    /// written; load it again and re-plan.
    #[error("stale circuit: {key} changed")]
    StaleCircuit { key: String },
    #[error("already exists")]
    AlreadyExists,
    /// A new route's idempotency key is already another route's: nothing
    /// was written; that route is the answer.
    #[error("the idempotency key is taken")]
    KeyTaken,
    /// The database cannot be reached or written (read-only, disk full,
    /// connection lost). Nothing was changed.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
}

impl From<sqlx::Error> for StoreError {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            sqlx::Error::RowNotFound => StoreError::NotFound,
            sqlx::Error::Database(db) if db.is_unique_violation() => StoreError::AlreadyExists,
            _ => StoreError::Unavailable(e.to_string()),
        }
    }
}

impl From<sqlx::migrate::MigrateError> for StoreError {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        StoreError::Unavailable(format!("migration failed: {e}"))
    }
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// A profile row: the candidate list is an opaque JSON document here; the
/// profiles service parses and validates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileRow {
    pub id: String,
    pub name: String,
    pub revision: i64,
    pub document: String,
    pub created_at_ms: i64,
    pub updated_at_ms: i64,
}

/// What deciding on a failure reads ([`Store::get_route_for_decision`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRows {
    pub route: RouteRow,
    /// `None` when the route's profile is gone.
    pub profile: Option<ProfileRow>,
    /// Every circuit, by scope and resource.
    pub circuits: Vec<CircuitRow>,
    /// Who opened the route (`route_openers`), read with it so checking a
    /// report's caller costs no round trip of its own.
    pub opener: Option<String>,
}

/// Which engine a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// Every store also holds the access tables ([`AccessStore`]) and the
/// audit trail ([`AuditStore`]) and webhooks ([`WebhookStore`]).
#[async_trait]
pub trait Store: AccessStore + AuditStore + WebhookStore + Send + Sync + 'static {
    fn engine(&self) -> Engine;

    /// A cheap round trip, for `/readyz`; also fails once the store can no
    /// longer be trusted with writes (SQLite: a flush of its log failed).
    async fn ping(&self) -> Result<()>;

    async fn list_profiles(&self) -> Result<Vec<ProfileRow>>;

    async fn get_profile(&self, id: &str) -> Result<Option<ProfileRow>>;

    /// Inserts a new profile at revision 1, with that revision kept
    /// (`profile_revisions`) and audited as `actor`'s (JSON of a
    /// `domain::audit::Actor`), in one transaction.
    async fn insert_profile(&self, row: &ProfileRow, actor: &str) -> Result<ProfileRow>;

    /// Replaces name and document if the stored revision is
    /// `expected_revision`; the new revision is one more, kept and audited
    /// as `actor`'s with it.
    async fn update_profile(
        &self,
        id: &str,
        expected_revision: i64,
        name: &str,
        document: &str,
        now_ms: i64,
        actor: &str,
    ) -> Result<ProfileRow>;

    /// Rewrites a document without changing its meaning or revision: the
    /// one-time normalisation of a legacy document on first load. Fenced by
    /// the revision so it never overwrites a concurrent edit.
    async fn normalise_profile_document(
        &self,
        id: &str,
        revision: i64,
        document: &str,
    ) -> Result<()>;

    /// Deletes a profile; with `expected_revision`, only at that revision.
    /// Audited as `actor`'s, at `now_ms`, with it; its kept revisions stay.
    async fn delete_profile(
        &self,
        id: &str,
        expected_revision: Option<i64>,
        actor: &str,
        now_ms: i64,
    ) -> Result<()>;

    async fn get_setting(&self, key: &str) -> Result<Option<String>>;

    /// Sets `key` only if it is not set yet; answers whether it was set now.
    async fn set_setting_once(&self, key: &str, value: &str) -> Result<bool>;

    /// Counts one sighting of unrecognised evidence: a new key is inserted
    /// with count 1, a known one counts up and widens its first/last seen.
    /// When a new key takes the log over `capacity`, the entries seen
    /// longest ago (never the new one) are deleted, at most a few per call,
    /// and counted as evicted, with their sightings. A sighting in a route
    /// attempt (`attempt`: route id and attempt seq) is linked to the
    /// entry; an entry keeps the latest `MAX_UNKNOWN_SIGHTINGS` links.
    async fn record_unknown(
        &self,
        row: &UnknownRow,
        capacity: i64,
        attempt: Option<(&str, i64)>,
    ) -> Result<()>;

    /// Deletes up to `limit` ended routes (`completed`, `cancelled`) last
    /// changed before `before_ms`, oldest first, with their attempts,
    /// events, schedules, dispatches, key and opener, in one transaction;
    /// answers how many routes went.
    async fn prune_ended(&self, before_ms: i64, limit: i64) -> Result<u64>;

    /// Deletes up to `limit` audit entries written before `before_ms`,
    /// oldest first; answers how many went.
    async fn prune_audit(&self, before_ms: i64, limit: i64) -> Result<u64>;

    /// Deletes up to `limit` circuit events written before `before_ms`,
    /// oldest first; answers how many went.
    async fn prune_circuit_events(&self, before_ms: i64, limit: i64) -> Result<u64>;

    /// Up to `limit` entries of the unknown-evidence log (most frequent,
    /// then most recent, first) and how many were ever evicted.
    async fn unknown_evidence(&self, limit: i64) -> Result<(Vec<UnknownRow>, i64)>;

    /// The route attempts the unknown-log entries were seen in, newest
    /// first, leaving out attempts no longer stored (pruned routes).
    async fn unknown_sightings(&self) -> Result<Vec<UnknownSightingRow>>;

    /// Row counts by state, for the metrics gauges (one round trip).
    /// Rows by state, and the ages operators alert on, judged at `at_ms`
    /// (`None`: the database's clock).
    async fn state_counts(&self, at_ms: Option<i64>) -> Result<StateCounts>;

    /// Applies one route transition atomically (see [`Commit`]); answers the
    /// new event's id once it is durable. A moved-on route answers
    /// `StaleGeneration` and nothing is written. Concurrent transitions
    /// are committed together by the store's writer (its `group` module), each
    /// still all-or-nothing and answering alone.
    async fn commit(&self, commit: &Commit) -> Result<i64>;

    /// Commits `commits` together, in this order, in one transaction, each
    /// under its own savepoint: what the writer does with the transitions
    /// queued at once. One answer per member, each as [`Store::commit`]
    /// would give it; when the transaction itself fails, every member
    /// fails and nothing is written.
    async fn commit_all(&self, commits: &[Commit]) -> Vec<Result<i64>>;

    async fn get_route(&self, id: &str) -> Result<Option<RouteRow>>;

    /// The route `scope` created with idempotency key `key`, if any.
    async fn get_route_key(&self, scope: &str, key: &str) -> Result<Option<RouteKeyRow>>;

    /// A route and its profile (`None` when the profile is gone), read
    /// together: what deciding on a failure needs, in one round trip.
    async fn get_route_and_profile(
        &self,
        id: &str,
    ) -> Result<Option<(RouteRow, Option<ProfileRow>)>>;

    /// A route, its profile and every circuit, read together in one
    /// snapshot: everything deciding on a failure reads. On PostgreSQL one
    /// round trip, where the route and the circuits apart were two — a
    /// third of a decision's reads.
    async fn get_route_for_decision(&self, id: &str) -> Result<Option<DecisionRows>>;

    /// [`Store::get_route_for_decision`] and the live token whose secret
    /// has this digest ([`AccessStore::live_token`]), read together: a
    /// failure reported with a token needs both, and on PostgreSQL they
    /// are one round trip instead of two. Each answer is exactly what its
    /// read apart would give; the route is read whether or not the token
    /// is live (the caller decides, and discards it when it is not).
    async fn get_route_for_decision_and_token(
        &self,
        id: &str,
        token_digest: &str,
    ) -> Result<(Option<DecisionRows>, Option<TokenRow>)>;

    async fn list_routes(&self, filter: &RouteFilter) -> Result<Vec<RouteRow>>;

    /// A route's attempts, newest first.
    async fn list_attempts(&self, route_id: &str) -> Result<Vec<AttemptRow>>;

    /// A page of a route's attempts, newest first: at most `limit`, those
    /// before attempt `before_seq` (a cursor: attempts are only appended).
    async fn attempts_page(
        &self,
        route_id: &str,
        before_seq: Option<i64>,
        limit: i64,
    ) -> Result<Vec<AttemptRow>>;

    /// Armed schedules due at `now_ms`, earliest first, whoever holds them.
    async fn due_schedules(&self, now_ms: i64, limit: i64) -> Result<Vec<ScheduleRow>>;

    /// Claims up to `limit` armed schedules due at `at_ms` (`None`: by the
    /// database's own clock) that nobody holds, for `claim_ms`, earliest
    /// first, in one statement; rows another transaction is claiming are
    /// skipped (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so several servers
    /// never fire one schedule at once. A claim that runs out (its holder
    /// crashed) makes the schedule claimable again.
    async fn claim_due_schedules(
        &self,
        at_ms: Option<i64>,
        claim_ms: i64,
        limit: i64,
    ) -> Result<Vec<ScheduleRow>>;

    /// When something may next be ready to fire, seen at `at_ms` (`None`:
    /// the database's clock): the earliest future deadline, or the end of
    /// the earliest claim on a schedule already due (another server is
    /// firing it; if that server died, its claim runs out then).
    async fn next_deadline(&self, at_ms: Option<i64>) -> Result<Option<i64>>;

    /// Voids an armed schedule whose route moved on.
    async fn void_schedule(&self, id: &str) -> Result<()>;

    async fn count_schedules(&self, state: &str) -> Result<i64>;

    /// Claims pending dispatches (oldest first) with a lease of `lease_ms`
    /// from `at_ms` (`None`: the database's clock), atomically: two
    /// claimers, in this process or another, never get the same dispatch.
    async fn claim_dispatches(
        &self,
        filter: &ClaimFilter,
        at_ms: Option<i64>,
        lease_ms: i64,
    ) -> Result<Vec<DispatchRow>>;

    async fn get_dispatch(&self, id: &str) -> Result<Option<DispatchRow>>;

    /// Who opened route `route_id` (`route_openers`); `None` when the
    /// route has no recorded opener or does not exist.
    async fn route_opener(&self, route_id: &str) -> Result<Option<String>>;

    /// Who opened the route of dispatch `dispatch_id`; `None` as for
    /// [`Store::route_opener`], or when there is no such dispatch.
    async fn dispatch_opener(&self, dispatch_id: &str) -> Result<Option<String>>;

    /// Claimed, unacknowledged dispatches whose lease ended before `at_ms`
    /// (`None`: the database's clock), oldest first.
    async fn expired_dispatches(&self, at_ms: Option<i64>) -> Result<Vec<DispatchRow>>;

    /// Pending dispatches nobody claimed within `older_than_ms` of their
    /// creation, judged at `at_ms` (`None`: the database's clock), oldest
    /// first.
    async fn unclaimed_dispatches(
        &self,
        at_ms: Option<i64>,
        older_than_ms: i64,
    ) -> Result<Vec<DispatchRow>>;

    async fn list_dispatches(&self, route_id: &str) -> Result<Vec<DispatchRow>>;

    /// Events after `after_id`, oldest first, optionally for one route.
    async fn events_after(
        &self,
        after_id: i64,
        route_id: Option<&str>,
        limit: i64,
    ) -> Result<Vec<EventRow>>;

    async fn last_event_id(&self) -> Result<i64>;

    /// Every circuit, by scope and resource.
    async fn list_circuits(&self) -> Result<Vec<CircuitRow>>;

    /// Armed schedules held back by the circuit `key` names, oldest first.
    async fn circuit_waiters(&self, key: &str) -> Result<Vec<ScheduleRow>>;

    /// How many armed schedules each circuit holds back.
    async fn circuit_waiting_counts(&self) -> Result<Vec<(String, i64)>>;

    /// Circuit events after `after_id`, oldest first.
    async fn circuit_events_after(&self, after_id: i64, limit: i64)
        -> Result<Vec<CircuitEventRow>>;

    /// An administrator's change to one circuit (a release, a probe now):
    /// the circuit fenced by its version (a circuit that moved on answers
    /// `StaleCircuit` and nothing is written), its event and the audit
    /// entry, in one transaction.
    async fn operate_circuit(&self, write: &CircuitWrite, audit: &AuditRow) -> Result<()>;

    /// What every process on this database commits, as it commits
    /// (PostgreSQL: `LISTEN`); `None` on SQLite, whose one server wakes its
    /// waiters in-process.
    async fn commit_listener(&self) -> Result<Option<CommitListener>>;
}

pub type DynStore = Arc<dyn Store>;

/// What a server holds while it serves the database `url` names: on
/// SQLite, the file's [`ServerLock`] (a second server is refused); on
/// PostgreSQL nothing, since any number of servers may share one database.
pub fn server_lock(url: &str) -> Result<Option<ServerLock>, LockError> {
    if url.starts_with("sqlite:") {
        ServerLock::acquire(url)
    } else {
        Ok(None)
    }
}

/// Opens (creating an SQLite file and its directory when needed) and
/// migrates the database a URL names.
pub async fn connect(url: &str) -> Result<DynStore> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(PgStore::connect(url).await?))
    } else if url.starts_with("sqlite:") {
        Ok(Arc::new(SqliteStore::connect(url).await?))
    } else {
        Err(StoreError::Unavailable(format!(
            "unsupported database URL `{url}`: use sqlite://path/to/file.db or postgres://…"
        )))
    }
}
