//! Liveness and readiness.
//!
//! Ready means the service can do its job, which is mostly writing: a
//! failure report, an action, a timer firing all commit. So `/readyz`
//! answers 200 only when the database answers a read *and* accepts a
//! write, within [`READY_WITHIN`], and (SQLite) its disk has room; each
//! 503 says which of these failed, in plain words. A database that went
//! away, one that only reads (a read-only file or replica), one too slow
//! to answer and a full disk are all "not ready", and it becomes ready
//! again by itself as soon as the cause is gone: every probe looks afresh.

use super::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use std::time::Duration;

/// The longest `/readyz` waits for the database. A probe that hangs is
/// itself the answer (orchestrators give up on a probe after a second or
/// a few): a database slower than this is not ready.
pub const READY_WITHIN: Duration = Duration::from_secs(3);

/// Free space under which an SQLite database's disk counts as full: a
/// commit appends a few pages to the write-ahead log, a checkpoint grows
/// the file.
pub const MIN_FREE_BYTES: u64 = 1024 * 1024;

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", operation_id = "healthz",
    responses((status = 200, description = "`ok`", body = String, content_type = "text/plain")))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// How long one verdict answers every probe. `/readyz` needs no
/// credential and its write probe queues for the database's write lock
/// behind route transitions (on SQLite, the one writer): two clients
/// polling it in a loop once doubled route-creation latency. So the probe
/// runs at most this often, whatever the probe rate, and concurrent probes
/// wait for the one running and share its verdict.
pub const READY_FOR: Duration = Duration::from_secs(2);

/// The last readiness verdict and when it was made.
pub struct ReadyCache {
    period: Duration,
    last: tokio::sync::Mutex<Option<(tokio::time::Instant, Result<(), String>)>>,
}

impl Default for ReadyCache {
    fn default() -> Self {
        ReadyCache::new(READY_FOR)
    }
}

impl ReadyCache {
    /// A verdict answers every probe for `period`.
    pub fn new(period: Duration) -> ReadyCache {
        ReadyCache {
            period,
            last: tokio::sync::Mutex::new(None),
        }
    }

    /// The verdict of the last `probe` if it is younger than the period,
    /// else `probe`'s.
    pub async fn get_or(
        &self,
        probe: impl std::future::Future<Output = Result<(), String>>,
    ) -> Result<(), String> {
        let mut last = self.last.lock().await;
        if let Some((at, verdict)) = &*last {
            if at.elapsed() < self.period {
                return verdict.clone();
            }
        }
        let verdict = probe.await;
        *last = Some((tokio::time::Instant::now(), verdict.clone()));
        verdict
    }
}

/// The process can serve requests: the database answers a read and
/// accepts a write in time, and its disk has room (looked at no more than
/// every [`READY_FOR`]).
#[utoipa::path(get, path = "/readyz", tag = "health", operation_id = "readyz",
    responses((status = 200, description = "`ready`, then the catalogue in force on a line of its own (`catalogue 1.2.0 (embedded)`)", body = String, content_type = "text/plain"),
              (status = 503, description = "Not ready, and why, in words; then the catalogue line", body = String, content_type = "text/plain")))]
pub async fn readyz(State(s): State<AppState>) -> (StatusCode, String) {
    let probe = async {
        match tokio::time::timeout(READY_WITHIN, readiness(&s)).await {
            Ok(verdict) => verdict,
            Err(_) => Err(format!(
                "database unavailable: it did not answer within {} s",
                READY_WITHIN.as_secs()
            )),
        }
    };
    // Which catalogue this instance classifies with, on every answer: a
    // probe of each instance of a deployment shows the version it runs.
    let c = s.catalogue.current().in_force();
    let catalogue = format!("catalogue {} ({})", c.version, c.source);
    match s.ready.get_or(probe).await {
        Ok(()) => (StatusCode::OK, format!("ready\n{catalogue}\n")),
        Err(why) => {
            tracing::warn!(%why, "not ready");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("{why}\n{catalogue}\n"),
            )
        }
    }
}

/// What stops the service from serving, if anything.
async fn readiness(s: &AppState) -> Result<(), String> {
    s.store
        .ping()
        .await
        .map_err(|e| format!("database unavailable: {e}"))?;
    // A write that changes nothing (no profile has this id) but still needs
    // the database's permission to write: SQLite opens a write transaction
    // for it, PostgreSQL refuses it in a read-only transaction.
    s.store
        .normalise_profile_document(WRITE_PROBE_ID, 0, "")
        .await
        .map_err(|e| format!("database read-only: writes are refused ({e})"))?;
    if let Some(dir) = &s.database_dir {
        let free = free_bytes(dir)
            .map_err(|e| format!("cannot tell the free space of {}: {e}", dir.display()))?;
        if free < MIN_FREE_BYTES {
            return Err(format!(
                "disk full: {free} bytes free where the database is ({}); writes would fail",
                dir.display()
            ));
        }
    }
    Ok(())
}

/// No profile id looks like this (they are `p_` and a UUID).
const WRITE_PROBE_ID: &str = "readyz write probe";

/// Bytes an unprivileged writer may still use on `dir`'s filesystem.
fn free_bytes(dir: &std::path::Path) -> nix::Result<u64> {
    let st = nix::sys::statvfs::statvfs(dir)?;
    Ok(st.blocks_available() as u64 * st.fragment_size() as u64)
}

#[cfg(test)]
mod tests {
    use super::ReadyCache;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[tokio::test]
    async fn probes_run_at_most_once_per_period_however_often_asked() {
        let period = Duration::from_millis(1500);
        let cache = Arc::new(ReadyCache::new(period));
        let probes = Arc::new(AtomicUsize::new(0));
        let ask = || {
            let (cache, probes) = (cache.clone(), probes.clone());
            async move {
                cache
                    .get_or(async {
                        probes.fetch_add(1, Ordering::SeqCst);
                        // A probe takes a while: others arrive meanwhile.
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        Ok(())
                    })
                    .await
            }
        };
        let all: Vec<_> = (0..100).map(|_| tokio::spawn(ask())).collect();
        for a in all {
            assert_eq!(a.await.unwrap(), Ok(()));
        }
        assert_eq!(probes.load(Ordering::SeqCst), 1);
        ask().await.unwrap();
        assert_eq!(probes.load(Ordering::SeqCst), 1);
        tokio::time::sleep(period).await;
        ask().await.unwrap();
        assert_eq!(probes.load(Ordering::SeqCst), 2);
    }
}
