//! SQLite: the default engine, one file under `./data/`, for one server.
//!
//! SQLite is the single-instance embedded engine: the timer loop, dispatch
//! long polls and event streams of a server are woken in-process, so a
//! second server on the same file would miss the first one's wake-ups
//! and race it for every schedule. [`ServerLock`] refuses that second
//! server at start (several instances share one PostgreSQL database
//! instead). The lock is an advisory `flock` on a file beside the
//! database, not SQLite's exclusive locking mode: short-lived commands
//! that open the database while a server runs keep working.

use super::sqlite_file::{Synchronous, Target};
use super::sqlite_writer;
use super::{group::GroupCommit, sql::impl_store, Commit, Engine, Result, StoreError};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    /// SQLite has one writer at a time. Queueing this process's write
    /// transactions here, instead of in SQLite's busy handler (which sleeps
    /// in growing steps), keeps commits back to back under load. Shared
    /// with the group-commit writer, which holds it for each batch.
    writer: Arc<tokio::sync::Mutex<()>>,
    /// Route transitions, committed in batches (see [`super::group`]).
    pub(crate) group: GroupCommit,
    /// Connections for the hot reads (see [`super::hot`]).
    pub(crate) hot: super::hot::Hot<sqlx::Sqlite>,
    /// The file the batches are committed to by the writer thread
    /// ([`sqlite_writer`]); `None` for a store made from a pool (an
    /// in-memory database, a test's read-only view), whose batches go
    /// through sqlx.
    target: Option<Target>,
    /// The hot reads, inline on connections of their own (see
    /// [`super::sqlite_reads`]); `None` with no file, as `target`.
    readers: Option<super::sqlite_reads::Readers>,
    /// This store's name for itself, under which it claims schedules:
    /// one server per file, so a claim under another name was left by a
    /// process that has ended, and is taken over at once.
    claimant: String,
}

impl SqliteStore {
    /// Opens the file a `sqlite://` URL names (creating it and its directory
    /// if needed) and runs the SQLite migrations.
    pub async fn connect(url: &str) -> Result<SqliteStore> {
        let options = Self::connect_options(url)?;
        if let Some(dir) = options.get_filename().parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| {
                    StoreError::Unavailable(format!("cannot create {}: {e}", dir.display()))
                })?;
            }
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            // A COMMIT that fails for a full disk makes SQLite roll the
            // transaction back itself; sqlx's own ROLLBACK then fails and
            // its count of open transactions stays at one, so every later
            // BEGIN on that connection would fail, long after the disk has
            // room again. Such a connection is closed instead of reused.
            .after_release(|conn, _| {
                Box::pin(async move {
                    use sqlx::{Connection, TransactionManager};
                    let depth = |conn: &mut sqlx::SqliteConnection| {
                        <sqlx::Sqlite as sqlx::Database>::TransactionManager::get_transaction_depth(
                            conn,
                        )
                    };
                    // Nothing opened a transaction (every read): nothing
                    // can be pending, and no hop to the connection's
                    // thread is spent finding that out.
                    if depth(conn) == 0 {
                        return Ok(true);
                    }
                    // Runs the rollback sqlx queued when the transaction
                    // was dropped, so the count below is final.
                    conn.ping().await?;
                    Ok(depth(conn) == 0)
                })
            })
            // A file on this machine: a connection does not go stale
            // between uses, and a ping before each would be one more hop
            // to its thread per statement.
            .test_before_acquire(false)
            .connect_with(options.clone())
            .await?;
        sqlx::migrate!("../migrations/sqlite").run(&pool).await?;
        let mut store = SqliteStore::from_migrated_pool(pool);
        // The writer thread and the inline readers open the file by its
        // name alone: an in-memory database, no name, or settings only the
        // pool's connections would carry (another VFS, an immutable or
        // shared-cache file) keep every read and write on sqlx.
        let by_name = !options.get_filename().as_os_str().is_empty()
            && ![
                ":memory:",
                "mode=memory",
                "vfs=",
                "immutable=",
                "cache=shared",
            ]
            .iter()
            .any(|p| url.contains(p));
        if by_name {
            let target = Target {
                log: Arc::new(super::sqlite_log::Log::beside(options.get_filename())),
                path: options.get_filename().to_path_buf(),
                synchronous: Synchronous::take_from(url)?.1,
                read_only: url.contains("mode=ro"),
                lock: store.writer.clone(),
            };
            store.readers = Some(super::sqlite_reads::Readers::new(target.clone()));
            store.target = Some(target);
        }
        Ok(store)
    }
}

impl SqliteStore {
    /// The connection settings the store opens a file with (durability
    /// included), so `kandev-recovery bench` measures the raw commit
    /// ceiling under exactly these.
    pub fn connect_options(url: &str) -> Result<SqliteConnectOptions> {
        let (rest, synchronous) = Synchronous::take_from(url)?;
        Ok(SqliteConnectOptions::from_str(&rest)
            .map_err(|e| StoreError::Unavailable(format!("bad SQLite URL `{url}`: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(match synchronous {
                Synchronous::Full => SqliteSynchronous::Full,
                Synchronous::Normal => SqliteSynchronous::Normal,
            })
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true))
    }

    /// Wraps a pool whose database is already migrated (tests use this to
    /// open a read-only connection to an existing database).
    pub fn from_migrated_pool(pool: SqlitePool) -> SqliteStore {
        SqliteStore {
            hot: super::hot::Hot::of(&pool),
            pool,
            writer: Arc::default(),
            group: GroupCommit::default(),
            target: None,
            readers: None,
            claimant: uuid::Uuid::new_v4().simple().to_string(),
        }
    }

    /// The name this store claims schedules under (see `claimant`).
    pub(crate) fn claimant(&self) -> Option<&str> {
        Some(&self.claimant)
    }

    pub(crate) fn readers(&self) -> Option<&super::sqlite_reads::Readers> {
        self.readers.as_ref()
    }

    /// Whether the store can still be trusted with writes: not once a
    /// flush of its log has failed (see [`super::sqlite_log`]).
    pub(crate) fn health(&self) -> Result<()> {
        match self.target.as_ref().and_then(|t| t.log.failure()) {
            Some(why) => Err(StoreError::Unavailable(why)),
            None => Ok(()),
        }
    }

    /// [`super::Store::get_route_for_decision`]: inline on a file, else
    /// (a store without one) the two reads through sqlx.
    async fn read_for_decision(&self, id: &str) -> Result<Option<super::DecisionRows>> {
        use super::Store;
        if let Some(r) = self.readers() {
            return r.route_for_decision(id);
        }
        let Some((route, profile)) = self.get_route_and_profile(id).await? else {
            return Ok(None);
        };
        let opener = self.route_opener(id).await?;
        Ok(Some(super::DecisionRows {
            route,
            profile,
            circuits: self.list_circuits().await?,
            opener,
        }))
    }

    /// [`super::Store::get_route_for_decision_and_token`]: the two reads
    /// apart (inline on a file, so no hop saved by joining them).
    async fn read_for_decision_and_token(
        &self,
        id: &str,
        token_digest: &str,
    ) -> Result<(Option<super::DecisionRows>, Option<super::TokenRow>)> {
        use super::AccessStore;
        let token = self.live_token(token_digest).await?;
        Ok((self.read_for_decision(id).await?, token))
    }

    /// Starts a group-commit writer task for a store without a file: each
    /// batch through sqlx, member by member, behind the store's write lock.
    fn sqlx_writer(
        &self,
    ) -> impl FnOnce(tokio::sync::mpsc::UnboundedReceiver<super::group::Member>) {
        let (pool, writer) = (self.pool.clone(), self.writer.clone());
        move |queue| {
            tokio::spawn(super::group::run(queue, move |commits| {
                let (pool, writer) = (pool.clone(), writer.clone());
                async move { Self::commit_batch(&pool, Some(&writer), &commits).await }
            }));
        }
    }

    /// Queues a transition for the store's writer (see [`super::group`]):
    /// the writer thread when the store has a file, else a task through sqlx.
    pub(crate) async fn commit_queued(&self, c: &Commit) -> Result<i64> {
        match &self.target {
            Some(t) => self.group.commit(c, sqlite_writer::start(t.clone())).await,
            None => self.group.commit(c, self.sqlx_writer()).await,
        }
    }

    /// Commits these together, now (see [`super::Store::commit_all`]), as
    /// the writer would.
    pub(crate) async fn commit_together(&self, commits: &[Commit]) -> Vec<Result<i64>> {
        match self.target.clone() {
            Some(t) => {
                let commits = commits.to_vec();
                let n = commits.len();
                tokio::task::spawn_blocking(move || sqlite_writer::commit_once(t, &commits))
                    .await
                    .unwrap_or_else(|e| {
                        super::group::failed_batch(
                            n,
                            &StoreError::Unavailable(format!("the batch stopped: {e}")),
                        )
                    })
            }
            None => Self::commit_batch(&self.pool, Some(&self.writer), commits).await,
        }
    }

    pub(crate) async fn writer(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        Some(self.writer.lock().await)
    }

    /// One server per file, so its own in-process wake-ups are all there is.
    pub(crate) async fn listener(&self) -> Result<Option<super::CommitListener>> {
        Ok(None)
    }
}

/// Held by a running server for as long as it serves an SQLite file; the
/// operating system releases it when the process ends, however it ends
/// (kill -9 included), so a crash never leaves a stale lock behind.
#[derive(Debug)]
pub struct ServerLock {
    _lock: nix::fcntl::Flock<std::fs::File>,
    pub path: std::path::PathBuf,
}

/// Why a server may not serve an SQLite file.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another kandev-recovery server is already serving the SQLite database {} (it holds {}). \
         SQLite is the single-instance embedded engine: one server per file. To run several \
         instances, point all of them at one PostgreSQL database (DATABASE_URL=postgres://…); \
         see \"Running several instances\" in docs/operations.md",
        db.display(),
        lock.display()
    )]
    Held {
        db: std::path::PathBuf,
        lock: std::path::PathBuf,
    },
    #[error("cannot take the server lock {}: {error}", path.display())]
    Io {
        path: std::path::PathBuf,
        error: std::io::Error,
    },
    #[error("bad SQLite URL `{0}`")]
    BadUrl(String),
}

impl ServerLock {
    /// Takes the server lock of the SQLite file `url` names (creating the
    /// lock file and its directory if needed); `None` for an in-memory
    /// database. A second server on the same file is refused with an error
    /// that says why and what to use instead.
    pub fn acquire(url: &str) -> Result<Option<ServerLock>, LockError> {
        let options =
            SqliteStore::connect_options(url).map_err(|_| LockError::BadUrl(url.to_string()))?;
        let db = options.get_filename();
        if db.as_os_str().is_empty() || db.as_os_str() == ":memory:" {
            return Ok(None);
        }
        let mut name = db.as_os_str().to_owned();
        name.push(".lock");
        let path = std::path::PathBuf::from(name);
        let io = |error| LockError::Io {
            path: path.clone(),
            error,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io)?;
        match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
            Ok(lock) => Ok(Some(ServerLock { _lock: lock, path })),
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => Err(LockError::Held {
                db: db.to_path_buf(),
                lock: path,
            }),
            Err((_, errno)) => Err(io(std::io::Error::from(errno))),
        }
    }
}

impl_store!(
    SqliteStore,
    sqlx::Sqlite,
    Engine::Sqlite,
    begin = "BEGIN IMMEDIATE",
    order_events = "",
    // One writer at a time already: nothing to skip.
    skip_locked = "",
    // One server per file ([`ServerLock`]): a claim not this store's own
    // was left by a process that has ended.
    orphaned = "s.claimed_by IS NOT {me}",
    // 'now' is fixed for the duration of one statement.
    db_now = "CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER)",
    notify = ""
);

#[cfg(test)]
mod tests {
    use super::*;

    /// After a failed flush of the log, the writes that go through the
    /// pool (SQLite flushing them itself) are refused as route transitions
    /// are, and write nothing; reads still answer.
    #[tokio::test]
    async fn after_a_failed_flush_every_write_is_refused_and_reads_answer() {
        use crate::store::{AccessStore, ClaimFilter, Store, TokenRow};
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("x.db").display());
        let store = SqliteStore::connect(&url).await.unwrap();
        let profile = |id: &str| crate::store::ProfileRow {
            id: id.into(),
            name: id.into(),
            revision: 1,
            document: "[]".into(),
            created_at_ms: 1,
            updated_at_ms: 1,
        };
        store
            .insert_profile(&profile("before"), r#"{"kind":"timer"}"#)
            .await
            .unwrap();
        let target = store.target.clone().expect("a file by name");
        target.log.fail_with(&std::io::Error::other("EIO"));

        let refused = |r: Result<()>, what: &str| match r {
            Err(StoreError::Unavailable(why)) => assert!(why.contains("EIO"), "{what}: {why}"),
            other => panic!("{what} answered {other:?}"),
        };
        refused(
            store
                .insert_profile(&profile("after"), r#"{"kind":"timer"}"#)
                .await
                .map(drop),
            "insert_profile",
        );
        refused(
            store
                .update_profile("before", 1, "b", "[]", 2, r#"{"kind":"timer"}"#)
                .await
                .map(drop),
            "update_profile",
        );
        refused(
            store
                .delete_profile("before", None, r#"{"kind":"timer"}"#, 0)
                .await,
            "delete_profile",
        );
        refused(
            store.set_setting_once("k", "v").await.map(drop),
            "set_setting_once",
        );
        refused(
            store.claim_due_schedules(Some(0), 1, 1).await.map(drop),
            "claim_due_schedules",
        );
        refused(store.void_schedule("s").await, "void_schedule");
        let filter = ClaimFilter {
            limit: 1,
            ..ClaimFilter::default()
        };
        refused(
            store.claim_dispatches(&filter, Some(0), 1).await.map(drop),
            "claim_dispatches",
        );
        let token = TokenRow {
            id: "t".into(),
            name: "t".into(),
            secret_hash: "h".into(),
            permissions: "".into(),
            created_at_ms: 1,
            revoked_at_ms: None,
        };
        refused(store.insert_token(&token).await, "insert_token");
        refused(store.revoke_token("t", 2).await.map(drop), "revoke_token");
        refused(store.delete_session("h").await, "delete_session");

        let names: Vec<String> = store
            .list_profiles()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.id)
            .collect();
        assert_eq!(names, ["before"], "nothing was written, and reads answer");
        assert_eq!(store.get_setting("k").await.unwrap(), None);
    }

    #[tokio::test]
    async fn every_connection_to_the_file_commits_as_the_url_says() {
        let dir = tempfile::tempdir().unwrap();
        for (query, pragma) in [
            ("", 2),
            ("?synchronous=normal", 1),
            ("?synchronous=full", 2),
        ] {
            let path = dir.path().join(format!("s{pragma}{}.db", query.len()));
            let url = format!("sqlite://{}{query}", path.display());
            let store = SqliteStore::connect(&url).await.unwrap();
            let pooled: i64 = sqlx::query_scalar("PRAGMA synchronous")
                .fetch_one(&store.pool)
                .await
                .unwrap();
            assert_eq!(pooled, pragma, "{url}: the pool's connections");
            let target = store.target.clone().expect("a file by name");
            let own = super::super::sqlite_file::open(&target).unwrap();
            let written: i64 = own
                .query_row("PRAGMA synchronous", [], |r| r.get(0))
                .unwrap();
            assert_eq!(
                written, pragma,
                "{url}: the writer's and readers' connections"
            );
        }
    }
}
