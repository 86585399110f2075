//! Circuits as read back: every circuit (a hot read), the schedules one
//! holds back, and circuit events. Circuits are written by transitions
//! ([`crate::store::transition`]), and by an administrator's release or
//! probe ([`operate_circuit`](crate::store::Store::operate_circuit)), with
//! the same fence: the version read.

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
    ($store:ty, begin = $begin:expr) => {
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

            pub(super) async fn operate_circuit(
                store: &$store,
                w: &$crate::store::CircuitWrite,
                audit: &$crate::store::AuditRow,
            ) -> $crate::store::Result<()> {
                store.health()?;
                let _w = store.writer().await;
                let r = &w.row;
                let key = format!("{}:{}", r.scope, r.resource);
                let Some(expected) = w.expected_version else {
                    return Err($crate::store::StoreError::StaleCircuit { key });
                };
                let mut tx = store.pool.begin_with($begin).await?;
                let moved = sqlx::query(
                    "UPDATE circuits SET state = $1, open_until = $2, probe_holder = $3, \
                     probe_until = $4, owner = $5, openings = $6, code = $7, changed_at = $8, \
                     version = $9, released = $10 \
                     WHERE scope = $11 AND resource = $12 AND version = $13",
                )
                .bind(&r.state)
                .bind(r.open_until)
                .bind(&r.probe_holder)
                .bind(r.probe_until)
                .bind(&r.owner)
                .bind(r.openings)
                .bind(&r.code)
                .bind(r.changed_at)
                .bind(r.version)
                .bind(r.released)
                .bind(&r.scope)
                .bind(&r.resource)
                .bind(expected)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                if moved != 1 {
                    // Dropped: rolled back, nothing written.
                    return Err($crate::store::StoreError::StaleCircuit { key });
                }
                sqlx::query(
                    "INSERT INTO circuit_events (scope, resource, kind, route_id, payload, created_at) \
                     VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(&r.scope)
                .bind(&r.resource)
                .bind(&w.event_kind)
                .bind(&w.route_id)
                .bind(&w.event_payload)
                .bind(r.changed_at)
                .execute(&mut *tx)
                .await?;
                sqlx::query($crate::store::audit::INSERT_AUDIT)
                    .bind(audit.at_ms)
                    .bind(&audit.actor)
                    .bind(&audit.action)
                    .bind(&audit.subject)
                    .bind(&audit.detail)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }
        }
    };
}

pub(crate) use circuits_sql;
