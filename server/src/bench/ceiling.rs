//! The engine's raw ceiling: single-row durable commits per second, one
//! autocommitted INSERT each, on the store's connection settings (SQLite:
//! WAL, `synchronous=NORMAL`, its pool, writers queued in-process as the
//! store queues them; PostgreSQL: the store's pool, the server's own
//! `synchronous_commit`). Every decision figure is also read as a share of
//! this: what the disk and the engine allow in the same run.

use super::raw::Raw;
use std::collections::BTreeMap;
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
    let raw = Arc::new(Raw::open(url).await?);
    raw.execute("CREATE TABLE bench_ceiling (id BIGINT NOT NULL, v BIGINT NOT NULL)")
        .await?;
    let durability = match &*raw {
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
    // SQLite has one writer: the store queues its writers on a mutex
    // rather than in SQLite's busy handler, and so does this.
    let writer = Arc::new(tokio::sync::Mutex::new(()));
    let serialise = matches!(&*raw, Raw::Sqlite(_));
    let mut out = BTreeMap::new();
    for &c in clients {
        let done = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        let until = started + each;
        let mut tasks = Vec::new();
        for client in 0..c {
            let (raw, done, writer) = (raw.clone(), done.clone(), writer.clone());
            tasks.push(tokio::spawn(async move {
                let sql = format!("INSERT INTO bench_ceiling (id, v) VALUES ({client}, 1)");
                while Instant::now() < until {
                    let _turn = if serialise {
                        Some(writer.lock().await)
                    } else {
                        None
                    };
                    raw.execute(&sql).await?;
                    done.fetch_add(1, Ordering::Relaxed);
                }
                anyhow::Ok(())
            }));
        }
        for t in tasks {
            t.await??;
        }
        let rate = done.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64();
        super::progress(format_args!(
            "  ceiling, {c} client(s): {rate:.0} commits/s"
        ));
        out.insert(c, rate);
    }
    raw.execute("DROP TABLE bench_ceiling").await?;
    raw.close().await;
    Ok((out, durability))
}
