//! Where the bench writes: databases of its own, never the user's.
//!
//! SQLite (the default): a temporary folder holding one file per database,
//! removed at the end. PostgreSQL: scratch databases named `bench_…`,
//! created on the server a `--database-url` names (through the database it
//! names, which is only connected to) and dropped at the end, even when a
//! measurement fails.

use anyhow::Context;
use sqlx::Connection;
use std::path::PathBuf;

/// Which engine, for the report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    pub fn name(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Postgres => "postgres",
        }
    }
}

pub struct Scratch {
    pub engine: Engine,
    /// SQLite: the temporary folder.
    dir: Option<PathBuf>,
    /// PostgreSQL: the URL connected to for CREATE and DROP DATABASE.
    admin: Option<String>,
    /// The databases created so far (PostgreSQL names).
    created: Vec<String>,
    tag: String,
    /// SQLite: how durable the files' commits are.
    synchronous: crate::store::Synchronous,
}

impl Scratch {
    /// Checks the URL (only PostgreSQL is accepted: an SQLite URL would be
    /// a file of the user's) and, for SQLite, makes the temporary folder.
    pub async fn new(
        database_url: Option<&str>,
        synchronous: crate::store::Synchronous,
    ) -> anyhow::Result<Scratch> {
        let tag = format!(
            "{}_{}",
            std::process::id(),
            &uuid::Uuid::new_v4().simple().to_string()[..8]
        );
        match database_url {
            None => {
                let dir = std::env::temp_dir().join(format!("kandev-bench-{tag}"));
                std::fs::create_dir_all(&dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                Ok(Scratch {
                    engine: Engine::Sqlite,
                    dir: Some(dir),
                    admin: None,
                    created: Vec::new(),
                    tag,
                    synchronous,
                })
            }
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                let parsed = reqwest::Url::parse(url)
                    .map_err(|e| anyhow::anyhow!("--database-url is not a URL: {e}"))?;
                // Fail now, before any measurement, if the server is not there.
                let c = sqlx::PgConnection::connect(parsed.as_str())
                    .await
                    .with_context(|| {
                        format!(
                            "cannot connect to {}",
                            crate::http::redact_url(parsed.as_str())
                        )
                    })?;
                c.close().await.ok();
                Ok(Scratch {
                    engine: Engine::Postgres,
                    dir: None,
                    admin: Some(parsed.to_string()),
                    created: Vec::new(),
                    tag,
                    synchronous,
                })
            }
            Some(_) => Err(anyhow::anyhow!(
                "--database-url takes a postgres:// URL (without it the bench uses a temporary SQLite file of its own)"
            )),
        }
    }

    /// A new, empty database for one group of measurements.
    pub async fn database(&mut self, purpose: &str) -> anyhow::Result<String> {
        match (&self.dir, &self.admin) {
            (Some(dir), _) => Ok(format!(
                "sqlite://{}?{}",
                dir.join(format!("{purpose}.db")).display(),
                self.synchronous.query()
            )),
            (None, Some(admin)) => {
                let name = format!("bench_{}_{purpose}", self.tag);
                let mut c = sqlx::PgConnection::connect(admin).await?;
                // The name is ours (digits, hex and a fixed word): no quoting needed.
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&mut c)
                    .await
                    .with_context(|| format!("cannot create the scratch database {name}"))?;
                c.close().await.ok();
                self.created.push(name.clone());
                let mut url = reqwest::Url::parse(admin)?;
                url.set_path(&format!("/{name}"));
                Ok(url.to_string())
            }
            (None, None) => unreachable!("a scratch has a folder or a server"),
        }
    }

    /// Removes everything this scratch created.
    pub async fn remove(self) -> anyhow::Result<()> {
        if let Some(dir) = &self.dir {
            std::fs::remove_dir_all(dir)
                .with_context(|| format!("cannot remove {}", dir.display()))?;
        }
        if let Some(admin) = &self.admin {
            let mut c = sqlx::PgConnection::connect(admin).await?;
            for name in &self.created {
                sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .execute(&mut c)
                    .await
                    .with_context(|| format!("cannot drop the scratch database {name}"))?;
            }
        }
        Ok(())
    }
}
