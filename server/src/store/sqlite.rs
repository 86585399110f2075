//! SQLite: the default engine, one file under `./data/`.

use super::{sql::impl_store, Engine, Result, StoreError};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::str::FromStr;
use std::time::Duration;

pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    /// SQLite has one writer at a time. Queueing this process's write
    /// transactions here, instead of in SQLite's busy handler (which sleeps
    /// in growing steps), keeps commits back to back under load.
    writer: tokio::sync::Mutex<()>,
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
            .connect_with(options)
            .await?;
        sqlx::migrate!("../migrations/sqlite").run(&pool).await?;
        Ok(SqliteStore::from_migrated_pool(pool))
    }
}

impl SqliteStore {
    /// The connection settings the store opens a file with (durability
    /// included), so `kandev-recovery bench` measures the raw commit
    /// ceiling under exactly these.
    pub fn connect_options(url: &str) -> Result<SqliteConnectOptions> {
        Ok(SqliteConnectOptions::from_str(url)
            .map_err(|e| StoreError::Unavailable(format!("bad SQLite URL `{url}`: {e}")))?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL with NORMAL is durable across process crashes (only an OS
            // crash can lose the last transactions), and much faster.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(5))
            .foreign_keys(true))
    }

    /// Wraps a pool whose database is already migrated (tests use this to
    /// open a read-only connection to an existing database).
    pub fn from_migrated_pool(pool: SqlitePool) -> SqliteStore {
        SqliteStore {
            pool,
            writer: tokio::sync::Mutex::new(()),
        }
    }

    pub(crate) async fn writer(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        Some(self.writer.lock().await)
    }
}

impl_store!(
    SqliteStore,
    Engine::Sqlite,
    begin = "BEGIN IMMEDIATE",
    order_events = "",
    skip_locked = ""
);
