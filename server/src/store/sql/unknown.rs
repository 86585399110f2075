//! The unknown-evidence log: a bounded table of the evidence nothing in the
//! catalogue matched, counted by key, the entries seen longest ago evicted
//! when a new one takes it over its bound.

/// The most unknown-evidence entries one report evicts: the log is over
/// its bound by one entry at a time, so this only matters after the
/// capacity was lowered (or concurrent inserts on PostgreSQL overshot it).
pub(crate) const UNKNOWN_EVICT_BATCH: i64 = 16;

/// The route attempts kept per unknown-log entry: the latest ones are
/// enough to open a few examples; the count says how many there were.
pub const MAX_UNKNOWN_SIGHTINGS: i64 = 20;

/// Expands, in an engine's module, to `mod unknown`: the functions
/// `impl_store!` implements these [`Store`](crate::store::Store) methods
/// with, over `$store`.
macro_rules! unknown_sql {
    ($store:ty, begin = $begin:expr) => {
        /// The unknown-evidence log (`store::sql::unknown`).
        mod unknown {
            use super::*;

            pub(super) async fn record_unknown(
                store: &$store,
                u: &$crate::store::UnknownRow,
                capacity: i64,
                attempt: Option<(&str, i64)>,
            ) -> $crate::store::Result<()> {
                store.health()?;
                let _writer = store.writer().await;
                let mut tx = store.pool.begin_with($begin).await?;
                // One statement for the common case (a known entry counts up).
                let count: i64 = sqlx::query_scalar(
                    "INSERT INTO unknown_evidence (key, safe_excerpt, count, first_seen, last_seen, \
                     classifier_rule, provider_id, model_id, catalogue_version, agent, skeleton) \
                     VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $8, $9, $10) \
                     ON CONFLICT (key) DO UPDATE SET count = unknown_evidence.count + 1, \
                     agent = CASE WHEN excluded.skeleton IS NULL THEN unknown_evidence.agent \
                       ELSE excluded.agent END, \
                     skeleton = COALESCE(excluded.skeleton, unknown_evidence.skeleton), \
                     first_seen = CASE WHEN excluded.first_seen < unknown_evidence.first_seen \
                       THEN excluded.first_seen ELSE unknown_evidence.first_seen END, \
                     last_seen = CASE WHEN excluded.last_seen > unknown_evidence.last_seen \
                       THEN excluded.last_seen ELSE unknown_evidence.last_seen END \
                     RETURNING count",
                )
                .bind(&u.key)
                .bind(&u.safe_excerpt)
                .bind(u.first_seen)
                .bind(u.last_seen)
                .bind(&u.classifier_rule)
                .bind(&u.provider_id)
                .bind(&u.model_id)
                .bind(&u.catalogue_version)
                .bind(&u.agent)
                .bind(&u.skeleton)
                .fetch_one(&mut *tx)
                .await?;
                if let Some((route_id, seq)) = attempt {
                    sqlx::query(
                        "INSERT INTO unknown_sightings (key, route_id, attempt_seq, seen_at) \
                         VALUES ($1, $2, $3, $4) ON CONFLICT (key, route_id, attempt_seq) DO NOTHING",
                    )
                    .bind(&u.key)
                    .bind(route_id)
                    .bind(seq)
                    .bind(u.last_seen)
                    .execute(&mut *tx)
                    .await?;
                    // Past its bound, an entry drops its oldest links.
                    if count > $crate::store::sql::unknown::MAX_UNKNOWN_SIGHTINGS {
                        sqlx::query(
                            "DELETE FROM unknown_sightings WHERE key = $1 AND seen_at < \
                             (SELECT seen_at FROM unknown_sightings WHERE key = $2 \
                              ORDER BY seen_at DESC LIMIT 1 OFFSET $3)",
                        )
                        .bind(&u.key)
                        .bind(&u.key)
                        .bind($crate::store::sql::unknown::MAX_UNKNOWN_SIGHTINGS - 1)
                        .execute(&mut *tx)
                        .await?;
                    }
                }
                // Only a new entry can take the log over its bound. Keep the
                // `capacity - 1` others seen most recently (plus the new one)
                // and drop the rest, a bounded batch at a time so one report
                // never pays for a large backlog.
                if count == 1 {
                    let evicted = sqlx::query(
                        "DELETE FROM unknown_evidence WHERE key IN (SELECT key FROM unknown_evidence \
                         WHERE key <> $1 ORDER BY last_seen DESC, key DESC LIMIT $2 OFFSET $3)",
                    )
                    .bind(&u.key)
                    .bind($crate::store::sql::unknown::UNKNOWN_EVICT_BATCH)
                    .bind((capacity - 1).max(0))
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    if evicted > 0 {
                        sqlx::query("UPDATE unknown_evidence_evictions SET evicted = evicted + $1 WHERE id = 1")
                            .bind(evicted as i64)
                            .execute(&mut *tx)
                            .await?;
                        // Bounded: at most MAX_UNKNOWN_SIGHTINGS per entry.
                        sqlx::query(
                            "DELETE FROM unknown_sightings WHERE key NOT IN (SELECT key FROM unknown_evidence)",
                        )
                        .execute(&mut *tx)
                        .await?;
                    }
                }
                tx.commit().await?;
                Ok(())
            }

            pub(super) async fn unknown_evidence(
                store: &$store,
                limit: i64,
            ) -> $crate::store::Result<(Vec<$crate::store::UnknownRow>, i64)> {
                let rows = sqlx::query_as(
                    "SELECT key, safe_excerpt, count, first_seen, last_seen, classifier_rule, provider_id, \
                     model_id, catalogue_version, agent, skeleton FROM unknown_evidence \
                     ORDER BY count DESC, last_seen DESC, key LIMIT $1",
                )
                .bind(limit)
                .fetch_all(&store.pool)
                .await?;
                let evicted: Option<i64> =
                    sqlx::query_scalar("SELECT evicted FROM unknown_evidence_evictions WHERE id = 1")
                        .fetch_optional(&store.pool)
                        .await?;
                Ok((rows, evicted.unwrap_or(0)))
            }

            pub(super) async fn unknown_sightings(
                store: &$store,
            ) -> $crate::store::Result<Vec<$crate::store::UnknownSightingRow>> {
                Ok(sqlx::query_as(
                    "SELECT s.key, s.route_id, s.attempt_seq, s.seen_at FROM unknown_sightings s \
                     WHERE EXISTS (SELECT 1 FROM attempts a WHERE a.route_id = s.route_id \
                       AND a.seq = s.attempt_seq) \
                     ORDER BY s.seen_at DESC, s.route_id, s.attempt_seq DESC",
                )
                .fetch_all(&store.pool)
                .await?)
            }
        }
    };
}

pub(crate) use unknown_sql;
