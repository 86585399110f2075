//! The timer rows: due schedules, claiming them (so several servers share
//! them, none firing one twice), and when the next may be due.

pub(crate) const SCHEDULE_COLUMNS: &str =
    "id, route_id, generation, kind, deadline, state, created_at, circuit";

/// Expands, in an engine's module, to `mod schedules`: the functions
/// `impl_store!` implements these [`Store`](crate::store::Store) methods
/// with, over `$store`.
macro_rules! schedules_sql {
    ($store:ty, begin = $begin:expr, db_now = $db_now:expr, skip_locked = $skip_locked:expr, orphaned = $orphaned:expr) => {
        /// Schedules and their claims (`store::sql::schedules`).
        mod schedules {
            use super::*;

            pub(super) async fn due_schedules(
                store: &$store,
                now_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                Ok(sqlx::query_as(
                    $crate::store::sql::select(
                        $crate::store::sql::schedules::SCHEDULE_COLUMNS,
                        "FROM schedules WHERE state = 'armed' AND deadline <= $1 ORDER BY deadline, id LIMIT $2",
                    )
                    .as_str(),
                )
                .bind(now_ms)
                .bind(limit)
                .fetch_all(&store.pool)
                .await?)
            }

            pub(super) async fn claim_due_schedules(
                store: &$store,
                at_ms: Option<i64>,
                claim_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                store.health()?;
                // Free: nobody holds it, its claim ran out, or its holder
                // is gone ($orphaned, `{me}` this store's own name).
                let free = |me: &str| {
                    format!(
                        "(s.claimed_until IS NULL OR s.claimed_until <= (SELECT at_ms FROM clock) \
                         OR {})",
                        $orphaned.replace("{me}", me)
                    )
                };
                // Most looks find nothing due: answer those with a read,
                // without a write transaction (SQLite's one write lock; a
                // read-only database still starts and serves reads). In
                // deadline order, so the planner walks the due index from
                // its start (it cannot know the instant, hidden in
                // `clock`, and without the order took a scan of every
                // armed schedule for the cheaper way to one row: 27 ms at
                // 300,000 pending on PostgreSQL, at every look); planned
                // afresh each time (see `next_deadline`).
                let due = format!(
                    "WITH clock AS (SELECT COALESCE($1, {now}) AS at_ms) \
                     SELECT COUNT(*) FROM (SELECT 1 FROM schedules s WHERE s.state = 'armed' \
                     AND s.deadline <= (SELECT at_ms FROM clock) AND {free} \
                     ORDER BY s.deadline LIMIT 1) AS due",
                    now = $db_now,
                    free = free("$2"),
                );
                let any: i64 = sqlx::query_scalar(due.as_str())
                    .bind(at_ms)
                    .bind(store.claimant())
                    .persistent(false)
                    .fetch_one(&store.pool)
                    .await?;
                if any == 0 {
                    return Ok(Vec::new());
                }
                // One instant for the whole statement, from the caller or the database.
                let sql = format!(
                    "WITH clock AS (SELECT COALESCE($1, {now}) AS at_ms) \
                     UPDATE schedules SET claimed_until = (SELECT at_ms FROM clock) + $2, \
                     claimed_by = $4 \
                     WHERE id IN (SELECT s.id FROM schedules s WHERE s.state = 'armed' \
                     AND s.deadline <= (SELECT at_ms FROM clock) AND {free} \
                     ORDER BY s.deadline, s.id LIMIT $3 {skip}) RETURNING {columns}",
                    now = $db_now,
                    free = free("$4"),
                    skip = $skip_locked,
                    columns = $crate::store::sql::schedules::SCHEDULE_COLUMNS
                );
                let _writer = store.writer().await;
                let mut tx = store.pool.begin_with($begin).await?;
                let mut rows: Vec<$crate::store::ScheduleRow> = sqlx::query_as(sql.as_str())
                    .bind(at_ms)
                    .bind(claim_ms)
                    .bind(limit)
                    .bind(store.claimant())
                    .fetch_all(&mut *tx)
                    .await?;
                tx.commit().await?;
                rows.sort_by(|a, b| (a.deadline, &a.id).cmp(&(b.deadline, &b.id)));
                Ok(rows)
            }

            pub(super) async fn next_deadline(store: &$store, at_ms: Option<i64>) -> $crate::store::Result<Option<i64>> {
                // Two index range reads (future deadlines; claims on due
                // rows) rather than one scan of every armed schedule. The
                // instant is written into each condition (one instant all
                // the same: PostgreSQL's `now()` is the transaction's
                // start, SQLite's 'now' one per statement step), not read
                // from a `clock` CTE, so the planner can see how few rows
                // are due: behind the CTE it guessed a third of the table
                // and scanned it all, 20–30 ms at 300,000 pending on
                // PostgreSQL, at every look of the timer loop. Not kept
                // prepared (`persistent(false)`): planned for the table as
                // it is at each look, where a plan PostgreSQL cached while
                // the table was small would go on scanning it as it grew.
                let sql = format!(
                    "SELECT MIN(t) FROM ( \
                     SELECT MIN(deadline) AS t FROM schedules \
                     WHERE state = 'armed' AND deadline > COALESCE($1, {now}) \
                     UNION ALL \
                     SELECT MIN(COALESCE(claimed_until, deadline)) AS t FROM schedules \
                     WHERE state = 'armed' AND deadline <= COALESCE($1, {now})) AS next",
                    now = $db_now
                );
                Ok(sqlx::query_scalar(sql.as_str())
                    .bind(at_ms)
                    .persistent(false)
                    .fetch_one(&store.pool)
                    .await?)
            }

            pub(super) async fn void_schedule(store: &$store, id: &str) -> $crate::store::Result<()> {
                store.health()?;
                let _writer = store.writer().await;
                sqlx::query("UPDATE schedules SET state = 'void' WHERE id = $1 AND state = 'armed'")
                    .bind(id)
                    .execute(&store.pool)
                    .await?;
                Ok(())
            }

            pub(super) async fn count_schedules(store: &$store, state: &str) -> $crate::store::Result<i64> {
                Ok(sqlx::query_scalar("SELECT COUNT(*) FROM schedules WHERE state = $1")
                    .bind(state)
                    .fetch_one(&store.pool)
                    .await?)
            }
        }
    };
}

pub(crate) use schedules_sql;
