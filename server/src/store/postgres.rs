//! PostgreSQL: for shared deployments (`DATABASE_URL=postgres://…`).

use super::{sql::impl_store, Engine, Result};
use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use std::time::Duration;

pub struct PgStore {
    pub(crate) pool: PgPool,
}

impl PgStore {
    /// Connects and runs the PostgreSQL migrations.
    pub async fn connect(url: &str) -> Result<PgStore> {
        let pool = Self::pool_options().connect(url).await?;
        sqlx::migrate!("../migrations/postgres").run(&pool).await?;
        Ok(PgStore { pool })
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
        PgStore { pool }
    }

    /// PostgreSQL handles concurrent writers itself (row locks).
    pub(crate) async fn writer(&self) -> Option<()> {
        None
    }
}

impl_store!(
    PgStore,
    Engine::Postgres,
    begin = "BEGIN",
    // One transaction-scoped lock serialises event inserts so ids commit
    // in order; the stream never skips an id that commits late.
    order_events = "SELECT pg_advisory_xact_lock(7261001)",
    skip_locked = "FOR UPDATE SKIP LOCKED"
);
