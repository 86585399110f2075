//! Wake-ups sent after each commit, and the shutdown token everything
//! waiting on them honours. The route service sends them in-process after
//! its own commits; on PostgreSQL, [`Signals::relay`] also sends them for
//! every commit any server on the database makes (its own included, so a
//! waiter may be woken twice: every waiter looks at the database when
//! woken, so a spare wake-up costs one query, a missed one a poll
//! interval). The scheduler loop, dispatch long polls and event streams
//! listen.

use crate::store::{Announcement, CommitListener, Heard};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{broadcast, Notify};
use tokio_util::sync::CancellationToken;

/// Wake-ups, sent only after a commit.
pub struct Signals {
    /// A schedule was armed that falls due before [`Signals::timer_wakes_at`].
    pub schedules: Notify,
    /// When the timer loop wakes next by itself (clock ms): a schedule
    /// armed for later needs no wake-up, the loop finds it then. `i64::MAX`
    /// while the loop is looking (anything armed meanwhile wakes it).
    timer_wakes_at: AtomicI64,
    /// A dispatch became claimable.
    pub dispatches: Notify,
    /// A committed event's id (0: look, something may have been missed).
    pub events: broadcast::Sender<i64>,
    /// Stops the loop, long polls and event streams.
    pub shutdown: CancellationToken,
}

impl Signals {
    pub fn new() -> Signals {
        Signals {
            schedules: Notify::new(),
            timer_wakes_at: AtomicI64::new(i64::MAX),
            dispatches: Notify::new(),
            events: broadcast::channel(1024).0,
            shutdown: CancellationToken::new(),
        }
    }

    /// Wakes the waiters a commit concerns.
    pub fn announce(&self, a: Announcement) {
        // Most schedules are armed for seconds to hours ahead, past the
        // loop's next look: waking it for each would cost two reads a
        // transition for nothing.
        if a.schedule
            .is_some_and(|d| d < self.timer_wakes_at.load(Ordering::SeqCst))
        {
            self.schedules.notify_one();
        }
        if a.dispatch {
            self.dispatches.notify_waiters();
        }
        let _ = self.events.send(a.event_id);
    }

    /// Wakes every waiter: announcements may have been missed.
    pub fn wake_all(&self) {
        self.announce(Announcement {
            event_id: 0,
            schedule: Some(i64::MIN),
            dispatch: true,
        });
    }

    /// The timer loop is looking at the database: any schedule armed from
    /// now on wakes it (it may have read before that schedule committed).
    pub fn timer_looking(&self) {
        self.timer_wakes_at.store(i64::MAX, Ordering::SeqCst);
    }

    /// The timer loop, done looking, sleeps until `at` (clock ms) unless
    /// woken: only a schedule due before then wakes it.
    pub fn timer_sleeps_until(&self, at: i64) {
        self.timer_wakes_at.store(at, Ordering::SeqCst);
    }

    /// Turns what `listener` hears (every server's commits on a shared
    /// database) into wake-ups here, until shutdown. A schedule armed,
    /// a dispatch made or an event written by another server so reaches
    /// this one's timer loop, long polls and event streams at once.
    pub async fn relay(self: Arc<Self>, mut listener: CommitListener) {
        loop {
            let heard = tokio::select! {
                heard = listener.recv() => heard,
                _ = self.shutdown.cancelled() => return,
            };
            match heard {
                Ok(Heard::Commit(a)) => self.announce(a),
                Ok(Heard::Reconnected) => {
                    tracing::warn!("the commit listener reconnected; waking every waiter");
                    self.wake_all();
                }
                Err(e) => {
                    // Until it is back, waiters fall back to polling; wake
                    // them now and then so nothing waits a whole poll.
                    tracing::warn!(error = %e, "the commit listener failed; retrying in 1 s");
                    self.wake_all();
                    tokio::select! {
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        _ = self.shutdown.cancelled() => return,
                    }
                }
            }
        }
    }
}

impl Default for Signals {
    fn default() -> Self {
        Signals::new()
    }
}
