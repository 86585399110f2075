//! The committed event tail, read once for every event stream.
//!
//! Before, each `GET /api/v1/events` stream read the events table itself
//! on every wake-up, so one commit cost a query per subscriber: with 1,000
//! streams open, 1,000 queries per event, and delivery waited behind them.
//! Now one task per process reads what was committed after its cursor
//! when a commit is announced (or every few seconds, should an
//! announcement be lost) and broadcasts the batch; streams only filter it.
//!
//! No stream misses or repeats an event: a stream subscribes to the
//! broadcast *before* it reads its backlog from the store, so whatever the
//! tail reads after that reaches it, and whatever the tail read before was
//! committed before, so the backlog read returns it. Events at or before
//! the stream's last id are skipped. A stream too slow for the broadcast
//! (it lagged) reads the store from its last id again, as on a reconnect.

use crate::routes::Signals;
use crate::store::{DynStore, EventRow};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, OnceCell};

/// Events read at a time, by the tail and by a stream catching up.
pub const PAGE: i64 = 200;

/// Batches kept for streams that have not taken them yet. A stream
/// further behind than this reads the store instead. Small on purpose: a
/// client that stopped reading pins what its stream has not taken, up to
/// this many batches, until its connection goes.
const KEPT_BATCHES: usize = 64;

/// How long the tail waits without an announcement before it looks
/// anyway (announcements are only ever a hint).
const FALLBACK: Duration = Duration::from_secs(5);

/// A batch of committed events, oldest first, shared by every stream.
pub type Batch = Arc<[EventRow]>;

pub struct Feed {
    sender: broadcast::Sender<Batch>,
    started: OnceCell<()>,
}

impl Feed {
    pub fn new() -> Feed {
        Feed {
            sender: broadcast::channel(KEPT_BATCHES).0,
            started: OnceCell::new(),
        }
    }

    /// Batches committed from now on. The first subscriber starts the
    /// tail (it needs a running runtime), which runs until shutdown. The
    /// tail's cursor is read before this returns, so a subscriber's
    /// backlog read, which comes after, reaches at least as far.
    pub async fn subscribe(
        &self,
        store: &DynStore,
        signals: &Arc<Signals>,
    ) -> crate::store::Result<broadcast::Receiver<Batch>> {
        let receiver = self.sender.subscribe();
        self.started
            .get_or_try_init(|| async {
                let last = store.last_event_id().await?;
                tokio::spawn(tail(
                    self.sender.clone(),
                    store.clone(),
                    signals.clone(),
                    last,
                ));
                Ok::<_, crate::store::StoreError>(())
            })
            .await?;
        Ok(receiver)
    }
}

impl Default for Feed {
    fn default() -> Self {
        Feed::new()
    }
}

/// Reads what was committed after `last` on every announcement and sends
/// it on, until shutdown.
async fn tail(
    sender: broadcast::Sender<Batch>,
    store: DynStore,
    signals: Arc<Signals>,
    mut last: i64,
) {
    let mut wake = signals.events.subscribe();
    loop {
        match store.events_after(last, None, PAGE).await {
            Ok(rows) => {
                let full = rows.len() as i64 == PAGE;
                if let Some(e) = rows.last() {
                    last = e.id;
                    // No subscriber is no error: the next one reads the store.
                    let _ = sender.send(rows.into());
                }
                if full {
                    continue;
                }
            }
            // The cursor stays: the next look reads the same events again.
            Err(e) => {
                tracing::warn!(error = %e, "the event tail's read failed; looking again at the next commit")
            }
        }
        tokio::select! {
            r = wake.recv() => {
                if let Err(broadcast::error::RecvError::Closed) = r { return; }
            }
            _ = signals.shutdown.cancelled() => return,
            _ = tokio::time::sleep(FALLBACK) => {}
        }
    }
}
