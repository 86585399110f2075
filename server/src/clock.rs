//! The one source of time. Production reads the system clock; tests and
//! `serve --test-clock` move it forward on demand, so hours of waits run in
//! milliseconds and every absolute deadline stays exact.

use chrono::{DateTime, Duration, Utc};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use tokio::sync::watch;

#[derive(Debug)]
pub struct Clock {
    /// `None`: the system clock. `Some(t)`: a manual clock starting at `t`.
    base: Option<DateTime<Utc>>,
    offset_ms: AtomicI64,
    /// Bumped on every advance, so sleeping timers re-check their deadlines.
    advanced: watch::Sender<u64>,
}

pub type SharedClock = Arc<Clock>;

impl Clock {
    pub fn system() -> SharedClock {
        Arc::new(Clock::new(None))
    }

    /// A clock that stands still at `start` until advanced.
    pub fn manual(start: DateTime<Utc>) -> SharedClock {
        Arc::new(Clock::new(Some(start)))
    }

    fn new(base: Option<DateTime<Utc>>) -> Clock {
        Clock {
            base,
            offset_ms: AtomicI64::new(0),
            advanced: watch::channel(0).0,
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        let offset = Duration::milliseconds(self.offset_ms.load(Ordering::SeqCst));
        self.base.unwrap_or_else(Utc::now) + offset
    }

    pub fn now_ms(&self) -> i64 {
        self.now().timestamp_millis()
    }

    /// The instant time-dependent queries are asked at (which schedules
    /// are due, which dispatch leases ran out): `None` for the system clock
    /// nobody moved, so the database's own clock decides and several
    /// servers on one database agree on it; the clock's instant once it is
    /// a test clock (manual, or advanced through `/test/clock`), so moving
    /// it moves due-ness exactly as before. The test clock is per process:
    /// it is for one server, never for several sharing a database.
    pub fn pinned(&self) -> Option<DateTime<Utc>> {
        let moved = self.base.is_some() || self.offset_ms.load(Ordering::SeqCst) != 0;
        moved.then(|| self.now())
    }

    /// [`Clock::pinned`] in milliseconds since the epoch.
    pub fn pinned_ms(&self) -> Option<i64> {
        self.pinned().map(|t| t.timestamp_millis())
    }

    /// Moves time forward (never backward) and wakes anyone waiting on it.
    pub fn advance(&self, by: Duration) {
        let ms = by.num_milliseconds().max(0);
        self.offset_ms.fetch_add(ms, Ordering::SeqCst);
        self.advanced.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver that changes whenever the clock is advanced.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.advanced.subscribe()
    }
}

/// Milliseconds since the epoch → UTC time (out-of-range values clamp to the epoch).
pub fn from_ms(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let start = DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .unwrap()
            .to_utc();
        let c = Clock::manual(start);
        assert_eq!(c.now(), start);
        let rx = c.subscribe();
        c.advance(Duration::seconds(90));
        assert_eq!(c.now(), start + Duration::seconds(90));
        assert!(rx.has_changed().unwrap());
        c.advance(Duration::seconds(-5));
        assert_eq!(c.now(), start + Duration::seconds(90));
    }

    #[test]
    fn only_a_moved_or_manual_clock_pins_the_instant() {
        let system = Clock::system();
        assert_eq!(system.pinned(), None, "the database's clock decides");
        system.advance(Duration::seconds(60));
        let pinned = system.pinned().expect("an advanced clock is a test clock");
        assert!(pinned >= Utc::now() + Duration::seconds(59));
        let start = DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .unwrap()
            .to_utc();
        assert_eq!(Clock::manual(start).pinned(), Some(start));
    }
}
