//! In-process wake-ups the route service sends after each commit, and the
//! shutdown token everything waiting on them honours. The route service
//! owns them (it is the only sender); the scheduler loop, dispatch long
//! polls and event streams listen.

use tokio::sync::{broadcast, Notify};
use tokio_util::sync::CancellationToken;

/// In-process wake-ups, sent only after a commit.
pub struct Signals {
    /// A schedule was armed.
    pub schedules: Notify,
    /// A dispatch became claimable.
    pub dispatches: Notify,
    /// A committed event's id.
    pub events: broadcast::Sender<i64>,
    /// Stops the loop, long polls and event streams.
    pub shutdown: CancellationToken,
}

impl Signals {
    pub fn new() -> Signals {
        Signals {
            schedules: Notify::new(),
            dispatches: Notify::new(),
            events: broadcast::channel(1024).0,
            shutdown: CancellationToken::new(),
        }
    }
}

impl Default for Signals {
    fn default() -> Self {
        Signals::new()
    }
}
