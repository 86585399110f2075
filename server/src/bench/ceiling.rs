//! The engine's raw ceiling: single-row durable commits per second, one
//! autocommitted INSERT each, with the store's durability settings, on the
//! cheapest path to the engine this process has — what the disk and the
//! engine allow, not what a client library's pool allows:
//!
//! - SQLite: each client a thread with its own synchronous connection
//!   (WAL and the URL's `synchronous`, FULL by default, as the store's
//!   writer opens it), writers
//!   taking turns on an in-process lock as the store's do;
//! - PostgreSQL: each client a connection of its own (no pool, so no
//!   pings between commits), the server's own `synchronous_commit`.
//!
//! Every decision figure is also read as a share of this.

use super::raw::Raw;
use crate::store::sqlite_file;
use sqlx::{ConnectOptions, Connection};
use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Commits per second at each client count, and the durability settings
/// they were made under.
pub async fn measure(
    url: &str,
    clients: &[usize],
    each: Duration,
) -> anyhow::Result<(BTreeMap<usize, f64>, String)> {
    let raw = Raw::open(url).await?;
    raw.execute("CREATE TABLE bench_ceiling (id BIGINT NOT NULL, v BIGINT NOT NULL)")
        .await?;
    let durability = match &raw {
        Raw::Sqlite(_) => format!(
            "journal_mode={}, synchronous={}",
            raw.text("PRAGMA journal_mode").await?,
            match raw.integers("PRAGMA synchronous").await?.first() {
                Some(0) => "OFF",
                Some(1) => "NORMAL",
                Some(2) => "FULL",
                Some(3) => "EXTRA",
                _ => "?",
            }
        ),
        Raw::Pg(_) => format!(
            "synchronous_commit={}, fsync={}",
            raw.text("SHOW synchronous_commit").await?,
            raw.text("SHOW fsync").await?
        ),
    };
    let mut out = BTreeMap::new();
    for &c in clients {
        let rate = match &raw {
            Raw::Sqlite(_) => sqlite(url, c, each).await?,
            Raw::Pg(_) => postgres(url, c, each).await?,
        };
        super::progress(format_args!(
            "  ceiling, {c} client(s): {rate:.0} commits/s"
        ));
        out.insert(c, rate);
    }
    raw.execute("DROP TABLE bench_ceiling").await?;
    raw.close().await;
    Ok((out, durability))
}

/// `clients` threads, each on its own synchronous connection, taking
/// turns (SQLite has one writer) for `each`.
async fn sqlite(url: &str, clients: usize, each: Duration) -> anyhow::Result<f64> {
    let options = crate::store::SqliteStore::connect_options(url)?;
    let target = sqlite_file::Target {
        // Unused: each connection here flushes itself (SQLite's own FULL).
        log: Arc::new(crate::store::sqlite_log::Log::beside(
            options.get_filename(),
        )),
        path: options.get_filename().to_path_buf(),
        synchronous: crate::store::Synchronous::take_from(url)?.1,
        read_only: false,
        lock: Arc::default(),
    };
    let turn = Arc::new(std::sync::Mutex::new(()));
    let done = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let until = started + each;
    let threads: Vec<_> = (0..clients)
        .map(|client| {
            let (target, turn, done) = (target.clone(), turn.clone(), done.clone());
            tokio::task::spawn_blocking(move || -> anyhow::Result<()> {
                let conn = sqlite_file::open(&target)?;
                let mut insert =
                    conn.prepare("INSERT INTO bench_ceiling (id, v) VALUES (?1, 1)")?;
                while Instant::now() < until {
                    let _turn = turn.lock().unwrap_or_else(|p| p.into_inner());
                    insert.execute([client as i64])?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                Ok(())
            })
        })
        .collect();
    for t in threads {
        t.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

/// `clients` tasks, each on a connection of its own, for `each`.
async fn postgres(url: &str, clients: usize, each: Duration) -> anyhow::Result<f64> {
    let options = sqlx::postgres::PgConnectOptions::from_str(url)?;
    let done = Arc::new(AtomicU64::new(0));
    let mut conns = Vec::with_capacity(clients);
    for _ in 0..clients {
        conns.push(options.connect().await?);
    }
    let started = Instant::now();
    let until = started + each;
    let tasks: Vec<_> = conns
        .into_iter()
        .enumerate()
        .map(|(client, mut conn)| {
            let done = done.clone();
            tokio::spawn(async move {
                while Instant::now() < until {
                    sqlx::query("INSERT INTO bench_ceiling (id, v) VALUES ($1, 1)")
                        .bind(client as i64)
                        .execute(&mut conn)
                        .await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                conn.close().await?;
                anyhow::Ok(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    Ok(done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}
