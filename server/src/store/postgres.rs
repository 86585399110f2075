//! PostgreSQL: for shared deployments (`DATABASE_URL=postgres://…`),
//! where several servers may share one database. Claims skip rows another
//! server's transaction holds (`FOR UPDATE SKIP LOCKED`), the database's
//! `now()` decides due-ness, and each commit `NOTIFY`s the
//! [`CHANNEL`] so every server's [`CommitListener`] hears it.

use super::group::Member;
use super::{
    group::GroupCommit, pg_batch, pg_batch::SetBased, sql::impl_store, Announcement, Engine, Result,
};
use sqlx::postgres::{PgListener, PgPoolOptions};
use sqlx::{ConnectOptions, Connection, PgConnection, PgPool};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The `LISTEN`/`NOTIFY` channel commits are announced on.
pub const CHANNEL: &str = "kandev_recovery_commits";

pub struct PgStore {
    pub(crate) pool: PgPool,
    /// Route transitions, committed in batches (see [`super::group`]).
    pub(crate) group: GroupCommit,
    /// Connections for the hot reads (see [`super::hot`]).
    pub(crate) hot: super::hot::Hot<sqlx::Postgres>,
    /// The `application_name` every connection of this store carries, so
    /// unique to it, under which it claims schedules: a claim whose name
    /// no connection to the server carries any more was left by a server
    /// that is gone, and is taken over at once instead of when it runs
    /// out. `None` for a pool the store did not name (tests' views):
    /// its claims are held until they run out.
    claimant: Option<String>,
}

impl PgStore {
    /// Connects and runs the PostgreSQL migrations.
    pub async fn connect(url: &str) -> Result<PgStore> {
        use std::str::FromStr;
        let options = sqlx::postgres::PgConnectOptions::from_str(url)?;
        let claimant = claimant_name(options.get_application_name());
        let options = options.application_name(&claimant);
        let pool = Self::pool_options().connect_with(options).await?;
        sqlx::migrate!("../migrations/postgres").run(&pool).await?;
        let mut store = PgStore::from_migrated_pool(pool);
        store.claimant = Some(claimant);
        Ok(store)
    }
}

impl PgStore {
    /// The pool the store connects with (durability is the server's own
    /// `synchronous_commit`), so `kandev-recovery bench` measures the raw
    /// commit ceiling through the same one.
    pub fn pool_options() -> PgPoolOptions {
        PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(Duration::from_secs(10))
    }

    /// Wraps a pool whose database is already migrated (tests use this to
    /// open a read-only connection to an existing database).
    pub fn from_migrated_pool(pool: PgPool) -> PgStore {
        PgStore {
            hot: super::hot::Hot::of(&pool),
            pool,
            group: GroupCommit::default(),
            claimant: None,
        }
    }

    /// The name this store claims schedules under (see `claimant`).
    pub(crate) fn claimant(&self) -> Option<&str> {
        self.claimant.as_deref()
    }

    /// Queues a transition for the store's writer task (see [`super::group`]).
    pub(crate) async fn commit_queued(&self, c: &super::Commit) -> Result<i64> {
        self.group.commit(c, self.batch_writer_task()).await
    }

    /// Starts the writer task, with a connection of its own kept from one
    /// set-based batch to the next: through the pool, each batch would
    /// also cost the pool's pings on taking and giving back a connection,
    /// two round trips beside the batch's three.
    fn batch_writer_task(&self) -> impl FnOnce(mpsc::UnboundedReceiver<Member>) {
        let pool = self.pool.clone();
        move |queue| {
            let own = Arc::new(tokio::sync::Mutex::new(None));
            tokio::spawn(super::group::run(queue, move |commits| {
                let (pool, own) = (pool.clone(), own.clone());
                async move { Self::write_batch(&pool, Some(&own), &commits).await }
            }));
        }
    }

    /// Commits these together, now (see [`super::Store::commit_all`]).
    pub(crate) async fn commit_together(&self, commits: &[super::Commit]) -> Vec<Result<i64>> {
        Self::write_batch(&self.pool, None, commits).await
    }

    /// One batch: set-based when it is plain ([`pg_batch`]), else (or when
    /// a fence did not hold there, or PostgreSQL refused the batch)
    /// member by member. `own` is the writer task's connection
    /// (`None`: one from the pool).
    async fn write_batch(
        pool: &PgPool,
        own: Option<&OwnConnection>,
        commits: &[super::Commit],
    ) -> Vec<Result<i64>> {
        if pg_batch::plain(commits) {
            let outcome = match own {
                Some(own) => Self::set_based_on_own(pool, own, commits).await,
                None => match pool.acquire().await {
                    Ok(mut conn) => pg_batch::write(&mut conn, commits).await,
                    // The pool waited its 10 s: member by member would
                    // only wait as long again.
                    Err(e) => SetBased::Unreachable(e.into()),
                },
            };
            match outcome {
                SetBased::Committed(ids) => return ids.into_iter().map(Ok).collect(),
                SetBased::Missed => {}
                // Member by member, the one at fault fails alone (or, if
                // the database is gone, every member says so).
                SetBased::Failed(e) => {
                    tracing::debug!(error = %e, "a set-based batch failed; committing it member by member")
                }
                // The batch was sent and its answer lost: it may have
                // committed, so it must not run again (every member
                // would then answer stale for what it did itself). Every
                // member is unavailable, as a failed COMMIT always was.
                SetBased::Unknown(e) | SetBased::Unreachable(e) => {
                    return super::group::failed_batch(commits.len(), &e)
                }
            }
        }
        Self::commit_batch(pool, None, commits).await
    }

    /// [`pg_batch::write`] on the writer task's own connection, opened
    /// when there is none. A connection kept from an earlier batch may have
    /// been closed meanwhile (the database restarted): one idle for more
    /// than [`IDLE_BEFORE_PING`] is pinged first and replaced when it does
    /// not answer, and if the batch could not even be sent on it, nothing
    /// was written, so it is tried once more on a new one. Only a
    /// connection whose batch ended with an answer from the server (not a
    /// `FATAL`) is kept.
    async fn set_based_on_own(
        pool: &PgPool,
        own: &OwnConnection,
        commits: &[super::Commit],
    ) -> SetBased {
        let mut slot = own.lock().await;
        // A batch sent on a connection the server has closed usually fails
        // only when its answer is awaited, and then whether it committed
        // is not known; so a connection idle for a while (long enough for
        // a restart) is asked first, at one round trip, and replaced when
        // it does not answer. Batches back to back skip the question.
        if let Some((conn, last)) = slot.as_mut() {
            if last.elapsed() > IDLE_BEFORE_PING {
                let pinged = tokio::time::timeout(Duration::from_secs(10), conn.ping()).await;
                if !matches!(pinged, Ok(Ok(()))) {
                    *slot = None;
                }
            }
        }
        let mut tries = if slot.is_some() { 2 } else { 1 };
        loop {
            tries -= 1;
            let mut conn = match slot.take() {
                Some((c, _)) => c,
                None => {
                    // As long as the pool waits for a connection. The
                    // server gives a statement up before the writer gives
                    // the batch up (`BATCH_TIMEOUT`), so a batch stuck on
                    // a lock does not keep its locks once abandoned; and
                    // plans the batch once, by key (`WRITER_PLANS`).
                    let options = (*pool.connect_options())
                        .clone()
                        .options([("statement_timeout", STATEMENT_TIMEOUT_MS)])
                        .options(WRITER_PLANS);
                    let opened =
                        tokio::time::timeout(Duration::from_secs(10), options.connect()).await;
                    match opened {
                        Ok(Ok(c)) => c,
                        Ok(Err(e)) => return SetBased::Unreachable(e.into()),
                        Err(_) => return SetBased::Unreachable(sqlx::Error::PoolTimedOut.into()),
                    }
                }
            };
            // A database host that vanished without closing the socket
            // would hold the writer until the OS gave up on the
            // connection (many minutes): the batch is given up first.
            // Whether it committed is not known then, so every member
            // answers unavailable, and the connection is not kept.
            let outcome = tokio::time::timeout(
                super::group::BATCH_TIMEOUT,
                pg_batch::write(&mut conn, commits),
            )
            .await
            .unwrap_or_else(|_| {
                SetBased::Unknown(super::StoreError::Unavailable(format!(
                    "the database did not finish a batch within {} s",
                    super::group::BATCH_TIMEOUT.as_secs()
                )))
            });
            match outcome {
                SetBased::Committed(_) | SetBased::Missed | SetBased::Failed(_) => {
                    *slot = Some((conn, std::time::Instant::now()))
                }
                SetBased::Unreachable(_) if tries > 0 => continue,
                _ => {}
            }
            return outcome;
        }
    }

    /// PostgreSQL keeps its own log: nothing of the store's to report.
    pub(crate) fn health(&self) -> Result<()> {
        Ok(())
    }

    /// [`super::Store::get_route_for_decision`] in one statement
    /// ([`ROUTE_FOR_DECISION`]) on a hot connection.
    async fn read_for_decision(&self, id: &str) -> Result<Option<super::DecisionRows>> {
        let mut hot = self.hot.take().await?;
        let row = sqlx::query(ROUTE_FOR_DECISION.as_str())
            .bind(id)
            .fetch_optional(&mut *hot)
            .await?;
        hot.keep();
        row.map(|row| Self::decision_rows_of(&row)).transpose()
    }

    /// [`super::Store::get_route_for_decision_and_token`] in one statement
    /// ([`ROUTE_FOR_DECISION_AND_TOKEN`]) on a hot connection.
    async fn read_for_decision_and_token(
        &self,
        id: &str,
        token_digest: &str,
    ) -> Result<(Option<super::DecisionRows>, Option<super::TokenRow>)> {
        use sqlx::Row;
        let mut hot = self.hot.take().await?;
        let row = sqlx::query(ROUTE_FOR_DECISION_AND_TOKEN.as_str())
            .bind(id)
            .bind(token_digest)
            .fetch_one(&mut *hot)
            .await?;
        hot.keep();
        let token = match row.try_get::<Option<String>, _>("t_id")? {
            None => None,
            Some(id) => Some(super::TokenRow {
                id,
                name: row.try_get("t_name")?,
                secret_hash: row.try_get("t_secret_hash")?,
                permissions: row.try_get("t_permissions")?,
                created_at_ms: row.try_get("t_created_at")?,
                revoked_at_ms: row.try_get("t_revoked_at")?,
            }),
        };
        // The route's columns are null when there is no such route (a
        // route's id never is).
        let route = match row.try_get::<Option<String>, _>("id")? {
            None => None,
            Some(_) => Some(Self::decision_rows_of(&row)?),
        };
        Ok((route, token))
    }

    /// The route, profile and circuits of a row that selects
    /// [`ROUTE_FOR_DECISION`] whole.
    fn decision_rows_of(row: &sqlx::postgres::PgRow) -> Result<super::DecisionRows> {
        use sqlx::Row;
        let (route, profile) = Self::route_and_profile_of(row)?;
        let circuits: String = row.try_get("circuits")?;
        let circuits = serde_json::from_str(&circuits).map_err(|e| {
            sqlx::Error::Decode(format!("the circuits read with a route: {e}").into())
        })?;
        Ok(super::DecisionRows {
            route,
            profile,
            circuits,
            opener: row.try_get("opener")?,
        })
    }

    /// No inline reads: every read is a round trip to the server.
    pub(crate) fn readers(&self) -> Option<&super::sqlite_reads::Readers> {
        None
    }

    /// PostgreSQL handles concurrent writers itself (row locks).
    pub(crate) async fn writer(&self) -> Option<()> {
        None
    }

    /// A listener on [`CHANNEL`], on a connection of its own from the pool.
    pub(crate) async fn listener(&self) -> Result<Option<CommitListener>> {
        let mut listener = PgListener::connect_with(&self.pool).await?;
        listener.listen(CHANNEL).await?;
        Ok(Some(CommitListener { listener }))
    }
}

/// A name for one store's connections: the `application_name` the URL
/// gave (kept as a prefix, so what an operator sees in `pg_stat_activity`
/// still says whose they are), or `kandev-recovery`, then a random suffix
/// that makes it this store's alone. Printable ASCII only and well under
/// PostgreSQL's 63 bytes, so the server shows it exactly as given (it
/// escapes other bytes, and cuts longer names, and a name it altered
/// would never match the claims).
fn claimant_name(given: Option<&str>) -> String {
    let prefix: String = given
        .unwrap_or("kandev-recovery")
        .chars()
        .filter(|c| c.is_ascii_graphic() || *c == ' ')
        .take(40)
        .collect();
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}/{}", &id[..12])
}

/// A route with its profile ([`ROUTE_AND_PROFILE`](super::sql::routes::ROUTE_AND_PROFILE))
/// and every circuit as one JSON array in a `circuits` column: one
/// statement, so one round trip and one snapshot. JSON numbers carry the
/// circuits' `BIGINT`s exactly (serde_json reads integers as integers).
static ROUTE_FOR_DECISION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let fields: Vec<String> = super::sql::circuits::CIRCUIT_COLUMNS
        .split(',')
        .map(str::trim)
        .map(|c| format!("'{c}', c.{c}"))
        .collect();
    format!(
        "SELECT q.*, (SELECT COALESCE(json_agg(json_build_object({})), '[]'::json)::text \
         FROM circuits AS c) AS circuits, \
         (SELECT o.opener FROM route_openers AS o WHERE o.route_id = q.id) AS opener \
         FROM ({}) AS q",
        fields.join(", "),
        *super::sql::routes::ROUTE_AND_PROFILE
    )
});

/// [`ROUTE_FOR_DECISION`] (route id `$1`) beside the live token whose
/// digest is `$2` ([`LIVE_TOKEN`](super::access::LIVE_TOKEN), its columns
/// as `t_…`): always one row, each side null when it has nothing.
static ROUTE_FOR_DECISION_AND_TOKEN: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let token: Vec<String> = super::access::TOKEN_COLUMNS
        .split(',')
        .map(str::trim)
        .map(|c| format!("t.{c} AS t_{c}"))
        .collect();
    // LIVE_TOKEN's one parameter is this statement's second.
    let live = super::access::LIVE_TOKEN.replace("$1", "$2");
    format!(
        "SELECT {}, d.* FROM (SELECT 1) AS one \
             LEFT JOIN ({live}) AS t ON true \
             LEFT JOIN ({}) AS d ON true",
        token.join(", "),
        *ROUTE_FOR_DECISION
    )
});

/// What a batch committed member by member runs first, in one statement:
/// the transaction-scoped lock that serialises event inserts, so ids
/// commit in order (the stream never skips an id that commits late), and
/// for the rest of the transaction (`set_config(…, true)` is `SET LOCAL`)
/// the writer's `statement_timeout`, so a batch the writer gives up
/// ([`super::group::BATCH_TIMEOUT`]) is cancelled by PostgreSQL first and
/// its locks go with it, instead of holding the event-order lock for every
/// batch after it. Likewise `idle_in_transaction_session_timeout`: a
/// server whose host stopped mid-batch (frozen, or cut off without its
/// socket closing) would leave the transaction open, holding that lock for
/// every server on the database until TCP gave up on it (hours); PostgreSQL
/// ends such a session after 25 s idle instead. The pool's connections
/// have no timeouts of their own (a long read is not a stuck one).
const ORDER_EVENTS: &str = "SELECT set_config('statement_timeout', '25000', true), \
     set_config('idle_in_transaction_session_timeout', '25000', true), \
     pg_advisory_xact_lock(7261001)";

/// `statement_timeout` on the writer's own connection, in ms: shorter
/// than [`super::group::BATCH_TIMEOUT`], so PostgreSQL cancels a statement the writer
/// is about to abandon.
const STATEMENT_TIMEOUT_MS: &str = "25000";

/// How the writer's connection plans its one prepared statement, the
/// set-based batch: once, by key. Every table the batch touches is reached
/// by an index on the batch's keys (routes by id, schedules and dispatches
/// by route, attempts by route and seq), and for at most [`MAX_BATCH`]
/// members a nested loop of index probes is the right plan however large
/// the tables are. PostgreSQL left to choose would pick by the tables'
/// sizes when it plans: its generic plan (used after five executions, kept
/// until the table is analysed again) made while `routes` was small moves
/// the batch's routes by a sequential scan and a hash join — seen in
/// `bench` at 21,800 routes, 6–12 ms a batch with the event-order lock
/// held; and planning afresh for every batch instead costs ≈ 1 ms of the
/// writer's time a batch (the statement is large), half a decision's
/// PostgreSQL time at one client. So the connection keeps one generic plan
/// and rules out the plans that read whole tables.
///
/// [`MAX_BATCH`]: super::group::MAX_BATCH
const WRITER_PLANS: [(&str, &str); 4] = [
    ("plan_cache_mode", "force_generic_plan"),
    ("enable_seqscan", "off"),
    ("enable_hashjoin", "off"),
    ("enable_mergejoin", "off"),
];

/// The writer task's connection for set-based batches, between batches,
/// with when its last batch ended.
type OwnConnection = tokio::sync::Mutex<Option<(PgConnection, std::time::Instant)>>;

/// How long the writer's connection may sit idle before a batch is sent
/// on it unasked (see [`PgStore::set_based_on_own`]).
const IDLE_BEFORE_PING: Duration = Duration::from_secs(1);

/// What a [`CommitListener`] heard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Heard {
    /// A server (this one or another) committed a transition.
    Commit(Announcement),
    /// The connection was lost and is back: announcements made meanwhile
    /// are gone, so whoever waits should look at the database again.
    Reconnected,
}

/// Commits announced on the database by every server sharing it.
pub struct CommitListener {
    listener: PgListener,
}

impl CommitListener {
    /// The next announcement. A lost connection is re-established before
    /// this answers [`Heard::Reconnected`]; an error means it could not be
    /// yet (the next call tries again).
    pub async fn recv(&mut self) -> Result<Heard> {
        loop {
            match self.listener.try_recv().await? {
                None => return Ok(Heard::Reconnected),
                Some(n) => match Announcement::parse(n.payload()) {
                    Some(a) => return Ok(Heard::Commit(a)),
                    // Not ours (another tool on the channel): nothing to wake.
                    None => tracing::debug!(payload = n.payload(), "ignored a notification"),
                },
            }
        }
    }
}

impl_store!(
    PgStore,
    sqlx::Postgres,
    Engine::Postgres,
    begin = "BEGIN",
    order_events = ORDER_EVENTS,
    skip_locked = "FOR UPDATE SKIP LOCKED",
    // Held by a server with no connection left: it is gone (killed, cut
    // off); its connections' name is what it claims under (`claimant`).
    orphaned = "(s.claimed_by <> {me} AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a \
                WHERE a.application_name = s.claimed_by))",
    // `now()` is the transaction's start: one instant per statement here.
    db_now = "(FLOOR(EXTRACT(EPOCH FROM now()) * 1000))::BIGINT",
    // Names CHANNEL (a macro argument must be a literal; a test checks it).
    notify = "SELECT pg_notify('kandev_recovery_commits', $1)"
);

#[cfg(test)]
mod tests {
    #[test]
    fn a_batch_member_by_member_carries_the_writers_statement_timeout() {
        let setting = format!(
            "set_config('statement_timeout', '{}', true)",
            super::STATEMENT_TIMEOUT_MS
        );
        assert!(super::ORDER_EVENTS.starts_with(&format!("SELECT {setting}")));
        let idle = format!(
            "set_config('idle_in_transaction_session_timeout', '{}', true)",
            super::STATEMENT_TIMEOUT_MS
        );
        assert!(super::ORDER_EVENTS.contains(&idle));
    }

    #[test]
    fn commits_are_announced_on_the_channel_listened_to() {
        let source = include_str!("postgres.rs");
        let quoted = format!("pg_notify('{}', $1)", super::CHANNEL);
        assert!(
            source.contains(&quoted),
            "the notify statement names {}",
            super::CHANNEL
        );
    }
}
