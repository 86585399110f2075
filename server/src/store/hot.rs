//! Connections for the reads every request makes (its token, the route and
//! its profile, the circuits), kept outside the pool.
//!
//! sqlx's pool pings a connection when it is taken and again when it is
//! given back, so one read through it is three trips to the connection —
//! on PostgreSQL three round trips, on SQLite three hops to the
//! connection's thread — where the read itself is one. These connections
//! are taken and given back without a ping. One that saw an error is not
//! given back (it may be broken: a restarted server, a lost socket), so a
//! stale connection costs one failed read, as the pool's would cost one
//! failed ping.

use sqlx::{ConnectOptions, Connection, Database};
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};
use tokio::sync::{Semaphore, SemaphorePermit};

/// How many hot connections a store holds at most (each also counts
/// against PostgreSQL's `max_connections`, beside the pool's).
pub(crate) const SIZE: usize = 8;

/// The longest a read waits for a connection (the pool's own wait).
const TAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

pub(crate) struct Hot<DB: Database> {
    options: Arc<<DB::Connection as Connection>::Options>,
    idle: Mutex<Vec<DB::Connection>>,
    permits: Semaphore,
}

impl<DB: Database> Hot<DB> {
    /// Connections opened as `pool` opens its own, when first needed.
    pub(crate) fn of(pool: &sqlx::Pool<DB>) -> Hot<DB> {
        Hot {
            options: pool.connect_options(),
            idle: Mutex::new(Vec::with_capacity(SIZE)),
            permits: Semaphore::new(SIZE),
        }
    }

    /// A connection of the set: an idle one, or a new one while fewer than
    /// [`SIZE`] are out. Given back only after [`Taken::keep`].
    pub(crate) async fn take(&self) -> Result<Taken<'_, DB>, sqlx::Error> {
        // As long as the pool waits for a connection (`PgStore::pool_options`):
        // a database that stopped answering fails the read, it does not hang it.
        tokio::time::timeout(TAKE_TIMEOUT, self.take_now())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)?
    }

    async fn take_now(&self) -> Result<Taken<'_, DB>, sqlx::Error> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match idle {
            Some(c) => c,
            None => self.options.connect().await?,
        };
        Ok(Taken {
            hot: self,
            conn: Some(conn),
            keep: false,
            _permit: permit,
        })
    }
}

/// A taken connection; dropped without [`Taken::keep`], it is closed.
pub(crate) struct Taken<'a, DB: Database> {
    hot: &'a Hot<DB>,
    conn: Option<DB::Connection>,
    keep: bool,
    _permit: SemaphorePermit<'a>,
}

impl<DB: Database> Taken<'_, DB> {
    /// The read succeeded: give the connection back when dropped.
    pub(crate) fn keep(mut self) {
        self.keep = true;
    }
}

impl<DB: Database> Deref for Taken<'_, DB> {
    type Target = DB::Connection;
    fn deref(&self) -> &DB::Connection {
        self.conn.as_ref().expect("present until dropped")
    }
}

impl<DB: Database> DerefMut for Taken<'_, DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        self.conn.as_mut().expect("present until dropped")
    }
}

impl<DB: Database> Drop for Taken<'_, DB> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            if self.keep {
                self.hot
                    .idle
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(conn);
            }
            // Otherwise dropped: sqlx closes it without a goodbye, as the
            // pool does with a connection whose ping failed.
        }
    }
}
