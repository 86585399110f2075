//! Circuits as read back: every circuit (a hot read), the schedules one
//! holds back, and circuit events. Circuits are written only by
//! transitions ([`crate::store::transition`]).

use super::select;

pub(crate) const CIRCUIT_COLUMNS: &str = "scope, resource, state, open_until, probe_holder, \
     probe_until, owner, openings, code, changed_at, version, released";

/// Every circuit, by scope and resource.
pub(crate) static CIRCUITS: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| select(CIRCUIT_COLUMNS, "FROM circuits ORDER BY scope, resource"));

/// Expands, in an engine's module, to `mod circuits`: the functions
/// `impl_store!` implements these [`Store`](crate::store::Store) methods
/// with, over `$store`.
macro_rules! circuits_sql {
    ($store:ty) => {
        /// Circuits, their waiters and events (`store::sql::circuits`).
        mod circuits {
            use super::*;

            pub(super) async fn list_circuits(store: &$store) -> $crate::store::Result<Vec<$crate::store::CircuitRow>> {
                // Read by every decision: a hot read.
                if let Some(r) = store.readers() {
                    return r.circuits();
                }
                let mut hot = store.hot.take().await?;
                let rows = sqlx::query_as($crate::store::sql::circuits::CIRCUITS.as_str())
                    .fetch_all(&mut *hot)
                    .await?;
                hot.keep();
                Ok(rows)
            }

            pub(super) async fn circuit_waiters(store: &$store, key: &str) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                Ok(sqlx::query_as(
                    $crate::store::sql::select(
                        $crate::store::sql::schedules::SCHEDULE_COLUMNS,
                        "FROM schedules WHERE circuit = $1 AND state = 'armed' ORDER BY created_at, id",
                    )
                    .as_str(),
                )
                .bind(key)
                .fetch_all(&store.pool)
                .await?)
            }

            pub(super) async fn circuit_waiting_counts(store: &$store) -> $crate::store::Result<Vec<(String, i64)>> {
                Ok(sqlx::query_as(
                    "SELECT circuit, COUNT(*) FROM schedules WHERE state = 'armed' AND circuit IS NOT NULL \
                     GROUP BY circuit ORDER BY circuit",
                )
                .fetch_all(&store.pool)
                .await?)
            }

            pub(super) async fn circuit_events_after(
                store: &$store,
                after_id: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::CircuitEventRow>> {
                Ok(sqlx::query_as(
                    "SELECT id, scope, resource, kind, route_id, payload, created_at FROM circuit_events \
                     WHERE id > $1 ORDER BY id LIMIT $2",
                )
                .bind(after_id)
                .bind(limit)
                .fetch_all(&store.pool)
                .await?)
            }
        }
    };
}

pub(crate) use circuits_sql;
