//! SQLite: the reads every request makes (its token, the route with its
//! profile, the circuits) run right where they are asked for, on
//! synchronous connections of their own.
//!
//! Through sqlx each read is a hop to the connection's thread and back
//! (two thread switches, more for a row stream), which cost more than the
//! read: a point read by primary key in a WAL database takes SQLite a few
//! microseconds and never waits for the writer. So these run inline, on
//! the task's own thread. The SQL is the store's own (`sql/`,
//! `access.rs`); only the row mapping is here.

use super::access::{TokenRow, LIVE_TOKEN};
use super::sql::circuits::CIRCUITS;
use super::sql::routes::{ROUTE_AND_PROFILE, ROUTE_BY_ID};
use super::sqlite_file::{self, Target};
use super::{CircuitRow, DecisionRows, ProfileRow, Result, RouteRow, StoreError};
use rusqlite::{Connection, OptionalExtension, Row};
use std::sync::Mutex;

/// Idle connections kept for reuse; more may be open at a moment of many
/// concurrent reads (each closes when given back to a full set).
const IDLE: usize = 8;

pub(crate) struct Readers {
    target: Target,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    pub(crate) fn new(target: Target) -> Readers {
        Readers {
            target,
            idle: Mutex::new(Vec::with_capacity(IDLE)),
        }
    }

    /// Runs `read` on an idle connection (or a new one); a connection that
    /// saw an error is not kept.
    fn with<T>(&self, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match idle {
            Some(c) => c,
            None => {
                let c = sqlite_file::open(&self.target).map_err(unavailable)?;
                // Reads only, whatever a bug might ask of it.
                c.pragma_update(None, "query_only", "ON")
                    .map_err(unavailable)?;
                c
            }
        };
        let answer = read(&conn).map_err(unavailable)?;
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        // One left inside a transaction would keep an old snapshot (and
        // keep the log from being reset): not kept.
        if idle.len() < IDLE && conn.is_autocommit() {
            idle.push(conn);
        }
        Ok(answer)
    }

    pub(crate) fn route(&self, id: &str) -> Result<Option<RouteRow>> {
        self.with(|c| {
            c.prepare_cached(&ROUTE_BY_ID)?
                .query_row([id], route)
                .optional()
        })
    }

    pub(crate) fn route_and_profile(
        &self,
        id: &str,
    ) -> Result<Option<(RouteRow, Option<ProfileRow>)>> {
        self.with(|c| route_and_profile(c, id))
    }

    pub(crate) fn circuits(&self) -> Result<Vec<CircuitRow>> {
        self.with(circuits)
    }

    /// The route with its profile and every circuit, on one connection in
    /// one read transaction: one snapshot, as PostgreSQL's one statement.
    pub(crate) fn route_for_decision(&self, id: &str) -> Result<Option<DecisionRows>> {
        self.with(|c| {
            let tx = c.unchecked_transaction()?;
            let Some((route, profile)) = route_and_profile(&tx, id)? else {
                return Ok(None);
            };
            let circuits = circuits(&tx)?;
            let opener = tx
                .prepare_cached("SELECT opener FROM route_openers WHERE route_id = ?1")?
                .query_row([id], |r| r.get(0))
                .optional()?;
            tx.commit()?;
            Ok(Some(DecisionRows {
                route,
                profile,
                circuits,
                opener,
            }))
        })
    }

    pub(crate) fn live_token(&self, secret_hash: &str) -> Result<Option<TokenRow>> {
        self.with(|c| {
            c.prepare_cached(&LIVE_TOKEN)?
                .query_row([secret_hash], |r| {
                    Ok(TokenRow {
                        id: r.get(0)?,
                        name: r.get(1)?,
                        secret_hash: r.get(2)?,
                        permissions: r.get(3)?,
                        created_at_ms: r.get(4)?,
                        revoked_at_ms: r.get(5)?,
                    })
                })
                .optional()
        })
    }
}

fn route_and_profile(
    c: &Connection,
    id: &str,
) -> rusqlite::Result<Option<(RouteRow, Option<ProfileRow>)>> {
    c.prepare_cached(&ROUTE_AND_PROFILE)?
        .query_row([id], |r| {
            // The route's 20 columns, then the profile's 6.
            let profile = match r.get::<_, Option<String>>(20)? {
                None => None,
                Some(id) => Some(ProfileRow {
                    id,
                    name: r.get(21)?,
                    revision: r.get(22)?,
                    document: r.get(23)?,
                    created_at_ms: r.get(24)?,
                    updated_at_ms: r.get(25)?,
                }),
            };
            Ok((route(r)?, profile))
        })
        .optional()
}

fn circuits(c: &Connection) -> rusqlite::Result<Vec<CircuitRow>> {
    c.prepare_cached(&CIRCUITS)?
        .query_map([], |r| {
            Ok(CircuitRow {
                scope: r.get(0)?,
                resource: r.get(1)?,
                state: r.get(2)?,
                open_until: r.get(3)?,
                probe_holder: r.get(4)?,
                probe_until: r.get(5)?,
                owner: r.get(6)?,
                openings: r.get(7)?,
                code: r.get(8)?,
                changed_at: r.get(9)?,
                version: r.get(10)?,
                released: r.get(11)?,
            })
        })?
        .collect()
}

/// A route row from its columns in `ROUTE_COLUMNS` order.
fn route(r: &Row<'_>) -> rusqlite::Result<RouteRow> {
    Ok(RouteRow {
        id: r.get(0)?,
        profile_id: r.get(1)?,
        caller_kind: r.get(2)?,
        caller_ref: r.get(3)?,
        state: r.get(4)?,
        generation: r.get(5)?,
        cycle: r.get(6)?,
        candidate_index: r.get(7)?,
        candidate_id: r.get(8)?,
        candidate_label: r.get(9)?,
        invocation_id: r.get(10)?,
        prompt_generation: r.get(11)?,
        effects: r.get(12)?,
        provider_session_id: r.get(13)?,
        memory: r.get(14)?,
        pending: r.get(15)?,
        last_failure: r.get(16)?,
        reason: r.get(17)?,
        created_at: r.get(18)?,
        updated_at: r.get(19)?,
    })
}

fn unavailable(e: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(e.to_string())
}
