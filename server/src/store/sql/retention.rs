//! Retention: ended routes (`completed`, `cancelled`) whose last change is
//! older than the retention time are deleted with everything that hangs
//! off them — attempts, events, schedules, dispatches, their idempotency
//! key and opener — a small batch per transaction, so a prune never holds
//! the write lock for long and route decisions go on between batches. The
//! audit trail and the circuit events are pruned the same way, by age.

/// The tables deleted with a route, by their route column; the route row
/// itself goes last.
pub(crate) const ROUTE_TABLES: [(&str, &str); 6] = [
    ("attempts", "route_id"),
    ("events", "route_id"),
    ("schedules", "route_id"),
    ("dispatches", "route_id"),
    ("route_keys", "route_id"),
    ("route_openers", "route_id"),
];

/// `$1, $2, …, $n`.
pub(crate) fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Expands, in an engine's module, to `mod retention`: the functions
/// `impl_store!` implements these [`Store`](crate::store::Store) methods
/// with, over `$store`.
macro_rules! retention_sql {
    ($store:ty, begin = $begin:expr) => {
        /// Pruning ended routes (`store::sql::retention`).
        mod retention {
            use super::*;

            pub(super) async fn prune_ended(
                store: &$store,
                before_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<u64> {
                store.health()?;
                let _writer = store.writer().await;
                let mut tx = store.pool.begin_with($begin).await?;
                // Ended routes take no transition, so the ids read here
                // stay ended until they are deleted below.
                let ids: Vec<String> = sqlx::query_scalar(
                    "SELECT id FROM routes WHERE state IN ('completed', 'cancelled') \
                     AND updated_at < $1 ORDER BY updated_at, id LIMIT $2",
                )
                .bind(before_ms)
                .bind(limit)
                .fetch_all(&mut *tx)
                .await?;
                if ids.is_empty() {
                    return Ok(0);
                }
                let list = $crate::store::sql::retention::placeholders(ids.len());
                let tables = $crate::store::sql::retention::ROUTE_TABLES
                    .into_iter()
                    .chain([("routes", "id")]);
                let mut pruned = 0;
                for (table, column) in tables {
                    let sql = format!("DELETE FROM {table} WHERE {column} IN ({list})");
                    let mut query = sqlx::query(&sql);
                    for id in &ids {
                        query = query.bind(id);
                    }
                    let done = query.execute(&mut *tx).await?.rows_affected();
                    if table == "routes" {
                        pruned = done;
                    }
                }
                tx.commit().await?;
                Ok(pruned)
            }

            /// Up to `limit` rows of an append-only log (`audit_log`,
            /// `circuit_events`, both with an ascending integer `id`)
            /// whose `time_column` is before `before_ms`, oldest first.
            /// Only the `limit` lowest ids are looked at: rows are written
            /// in time order, so the oldest are there, and a pass with
            /// nothing to prune reads one batch of the primary key, not
            /// the table.
            pub(super) async fn prune_log(
                store: &$store,
                table: &'static str,
                time_column: &'static str,
                before_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<u64> {
                store.health()?;
                let _writer = store.writer().await;
                let sql = format!(
                    "DELETE FROM {table} WHERE {time_column} < $1 AND id IN \
                     (SELECT id FROM {table} ORDER BY id LIMIT $2)"
                );
                Ok(sqlx::query(&sql)
                    .bind(before_ms)
                    .bind(limit)
                    .execute(&store.pool)
                    .await?
                    .rows_affected())
            }
        }
    };
}

pub(crate) use retention_sql;
