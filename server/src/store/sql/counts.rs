//! Rows by state across the tables, and the ages operators alert on, in one
//! round trip: what the metrics gauges read.

/// Expands, in an engine's module, to `mod counts`: the functions
/// `impl_store!` implements these [`Store`](crate::store::Store) methods
/// with, over `$store`.
macro_rules! counts_sql {
    ($store:ty, db_now = $db_now:expr) => {
        /// Rows by state, for the gauges (`store::sql::counts`).
        mod counts {
            use super::*;

            pub(super) async fn state_counts(store: &$store, at_ms: Option<i64>) -> $crate::store::Result<$crate::store::StateCounts> {
                // The two ages come last, as `age` rows (-1: none): the
                // oldest pending dispatch, and the oldest acknowledged one
                // whose route is still at its generation (no report yet).
                let sql = format!(
                    "WITH clock AS (SELECT COALESCE($1, {now}) AS at_ms) \
                     SELECT 'routes', state, COUNT(*) FROM routes GROUP BY state \
                     UNION ALL SELECT 'circuits', state, COUNT(*) FROM circuits GROUP BY state \
                     UNION ALL SELECT 'schedules', state, COUNT(*) FROM schedules \
                       WHERE state = 'armed' GROUP BY state \
                     UNION ALL SELECT 'dispatches', state, COUNT(*) FROM dispatches \
                       WHERE state IN ('pending', 'claimed') GROUP BY state \
                     UNION ALL SELECT 'age', 'unclaimed', COALESCE((SELECT at_ms FROM clock) \
                       - (SELECT MIN(created_at) FROM dispatches WHERE state = 'pending'), -1) \
                     UNION ALL SELECT 'age', 'unreported', COALESCE((SELECT at_ms FROM clock) \
                       - (SELECT MIN(d.acked_at) FROM routes AS r JOIN dispatches AS d \
                          ON d.route_id = r.id AND d.state = 'acked' AND d.generation = r.generation \
                          WHERE r.state IN ('retrying', 'active')), -1)",
                    now = $db_now
                );
                let rows: Vec<(String, String, i64)> = sqlx::query_as(sql.as_str())
                    .bind(at_ms)
                    .fetch_all(&store.pool)
                    .await?;
                let mut counts = $crate::store::StateCounts::default();
                for (table, state, n) in rows {
                    let into = match table.as_str() {
                        "routes" => &mut counts.routes,
                        "circuits" => &mut counts.circuits,
                        "schedules" => &mut counts.schedules,
                        "age" => {
                            let age = (n >= 0).then_some(n.max(0));
                            match state.as_str() {
                                "unclaimed" => counts.oldest_unclaimed_ms = age,
                                _ => counts.oldest_unreported_ms = age,
                            }
                            continue;
                        }
                        _ => &mut counts.dispatches,
                    };
                    into.push((state, n));
                }
                Ok(counts)
            }
        }
    };
}

pub(crate) use counts_sql;
