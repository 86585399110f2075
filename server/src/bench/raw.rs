//! Plain SQL beside the store, on the store's own connection settings: the
//! raw commit ceiling, filling pending schedules in bulk, and reading
//! lateness back. Only ever on the bench's scratch databases.

use crate::store::{PgStore, SqliteStore};
use sqlx::sqlite::SqlitePoolOptions;
use sqlx::{PgPool, SqlitePool};

pub enum Raw {
    Sqlite(SqlitePool),
    Pg(PgPool),
}

impl Raw {
    pub async fn open(url: &str) -> anyhow::Result<Raw> {
        if url.starts_with("sqlite:") {
            let options = SqliteStore::connect_options(url)?;
            // The store's pool size too.
            let pool = SqlitePoolOptions::new()
                .max_connections(8)
                .connect_with(options)
                .await?;
            Ok(Raw::Sqlite(pool))
        } else {
            Ok(Raw::Pg(PgStore::pool_options().connect(url).await?))
        }
    }

    pub async fn execute(&self, sql: &str) -> anyhow::Result<u64> {
        Ok(match self {
            Raw::Sqlite(p) => sqlx::query(sql).execute(p).await?.rows_affected(),
            Raw::Pg(p) => sqlx::query(sql).execute(p).await?.rows_affected(),
        })
    }

    /// The first column of every row, as integers.
    pub async fn integers(&self, sql: &str) -> anyhow::Result<Vec<i64>> {
        Ok(match self {
            Raw::Sqlite(p) => sqlx::query_scalar::<_, i64>(sql).fetch_all(p).await?,
            Raw::Pg(p) => sqlx::query_scalar::<_, i64>(sql).fetch_all(p).await?,
        })
    }

    /// One text value (a setting), for the report.
    pub async fn text(&self, sql: &str) -> anyhow::Result<String> {
        Ok(match self {
            Raw::Sqlite(p) => sqlx::query_scalar::<_, String>(sql).fetch_one(p).await?,
            Raw::Pg(p) => sqlx::query_scalar::<_, String>(sql).fetch_one(p).await?,
        })
    }

    pub async fn close(&self) {
        match self {
            Raw::Sqlite(p) => p.close().await,
            Raw::Pg(p) => p.close().await,
        }
    }
}
