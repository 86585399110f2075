//! Wake-ups sent after each commit, and the shutdown token everything
//! waiting on them honours. The route service sends them in-process after
//! its own commits; on PostgreSQL, [`Signals::relay`] also sends them for
//! every commit any server on the database makes (its own included, so a
//! waiter may be woken twice: every waiter looks at the database when
//! woken, so a spare wake-up costs one query, a missed one a poll
//! interval). The scheduler loop, dispatch long polls and event streams
//! listen.

use crate::store::{Announcement, CommitListener, Heard};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, Notify};
use tokio_util::sync::CancellationToken;

/// Wake-ups, sent only after a commit.
pub struct Signals {
    /// A schedule was armed that falls due before the timer loop wakes by
    /// itself ([`TimerWake`]).
    pub schedules: Notify,
    /// When the timer loop needs waking.
    timer: Mutex<TimerWake>,
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
            timer: Mutex::new(TimerWake::Looking {
                earliest_armed: i64::MAX,
            }),
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
        if let Some(deadline) = a.schedule {
            if self.timer().armed(deadline) {
                self.schedules.notify_one();
            }
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

    /// The timer loop is looking at the database: a schedule armed from
    /// now on may be missed by the look (it may read before that schedule
    /// committed), so its deadline is kept for [`Self::timer_sleeps_until`].
    pub fn timer_looking(&self) {
        *self.timer() = TimerWake::Looking {
            earliest_armed: i64::MAX,
        };
    }

    /// The timer loop, done looking, sleeps until `at` (clock ms) unless
    /// woken: only a schedule due before then wakes it — one armed while
    /// it looked at once (it looks again), one armed later when announced.
    pub fn timer_sleeps_until(&self, at: i64) {
        let missed = {
            let mut timer = self.timer();
            let missed =
                matches!(*timer, TimerWake::Looking { earliest_armed } if earliest_armed < at);
            *timer = TimerWake::SleepsUntil(at);
            missed
        };
        if missed {
            self.schedules.notify_one();
        }
    }

    fn timer(&self) -> std::sync::MutexGuard<'_, TimerWake> {
        self.timer.lock().unwrap_or_else(|p| p.into_inner())
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

/// Whether a schedule just armed needs the timer loop woken.
///
/// While the loop looks, under load, schedules are armed all the time;
/// waking it for each would keep it looking back to back (two reads each
/// time, for schedules mostly due hours later). So what is armed while it
/// looks is only noted, and it looks again at once only if one of those
/// falls due before it would wake by itself.
enum TimerWake {
    /// Looking at the database; the earliest deadline armed meanwhile.
    Looking { earliest_armed: i64 },
    /// Asleep until this instant (clock ms) unless woken.
    SleepsUntil(i64),
}

impl TimerWake {
    /// Notes a schedule armed for `deadline`; whether to wake the loop now.
    fn armed(&mut self, deadline: i64) -> bool {
        match self {
            TimerWake::Looking { earliest_armed } => {
                *earliest_armed = (*earliest_armed).min(deadline);
                false
            }
            TimerWake::SleepsUntil(at) => deadline < *at,
        }
    }
}

impl Default for Signals {
    fn default() -> Self {
        Signals::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    fn arming(deadline: i64) -> Announcement {
        Announcement {
            event_id: 1,
            schedule: Some(deadline),
            dispatch: false,
        }
    }

    /// Whether the timer loop, about to wait, would be woken at once.
    fn woken(s: &Signals) -> bool {
        s.schedules.notified().now_or_never().is_some()
    }

    #[test]
    fn a_schedule_armed_while_the_loop_looks_wakes_it_only_if_due_before_its_next_look() {
        let s = Signals::new();
        s.timer_looking();
        s.announce(arming(5_000));
        s.announce(arming(9_000));
        assert!(!woken(&s), "noted while looking, not woken for");
        // Its next look comes before either falls due: no look now.
        s.timer_sleeps_until(4_000);
        assert!(!woken(&s));

        s.timer_looking();
        s.announce(arming(9_000));
        s.announce(arming(3_000));
        // One falls due before the loop would wake: it looks again at once.
        s.timer_sleeps_until(4_000);
        assert!(woken(&s));
    }

    #[test]
    fn a_schedule_armed_while_the_loop_sleeps_wakes_it_only_if_due_before_it_wakes() {
        let s = Signals::new();
        s.timer_looking();
        s.timer_sleeps_until(4_000);
        s.announce(arming(4_000));
        assert!(!woken(&s));
        s.announce(arming(3_999));
        assert!(woken(&s));
        // Announcements may have been missed: every waiter looks.
        s.timer_sleeps_until(4_000);
        s.wake_all();
        assert!(woken(&s));
        s.timer_looking();
        s.wake_all();
        s.timer_sleeps_until(4_000);
        assert!(woken(&s));
    }
}
