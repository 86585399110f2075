//! Dispatches: claiming pending ones under a lease (two claimers never get
//! the same one), and reading them back, expired and unclaimed ones
//! included.

use super::select;

pub(crate) const DISPATCH_COLUMNS: &str =
    "id, route_id, generation, invocation_id, prompt_generation, \
     candidate_index, candidate_id, candidate_label, caller_kind, reason, state, lease_until, \
     created_at, claimed_at, acked_at, resume";

pub(crate) fn select_dispatches(rest: &str) -> String {
    select(DISPATCH_COLUMNS, &format!("FROM dispatches {rest}"))
}

/// Expands, in an engine's module, to `mod dispatches`: the functions
/// `impl_store!` implements these [`Store`](crate::store::Store) methods
/// with, over `$store`.
macro_rules! dispatches_sql {
    ($store:ty, begin = $begin:expr, db_now = $db_now:expr, skip_locked = $skip_locked:expr) => {
        /// Dispatches and their claims (`store::sql::dispatches`).
        mod dispatches {
            use super::*;

            pub(super) async fn claim_dispatches(
                store: &$store,
                f: &$crate::store::ClaimFilter,
                at_ms: Option<i64>,
                lease_ms: i64,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                store.health()?;
                let route = f.route_id.clone().unwrap_or_default();
                let caller = f.caller_kind.clone().unwrap_or_default();
                let opener = f.opened_by.clone().unwrap_or_default();
                let sql = format!(
                    "WITH clock AS (SELECT COALESCE($1, {now}) AS at_ms) \
                     UPDATE dispatches SET state = 'claimed', claimed_at = (SELECT at_ms FROM clock), \
                     lease_until = (SELECT at_ms FROM clock) + $2 \
                     WHERE id IN (SELECT id FROM dispatches WHERE state = 'pending' \
                     AND ($3 = '' OR route_id = $4) AND ($5 = '' OR caller_kind = $6) \
                     AND ($8 = '' OR route_id IN (SELECT route_id FROM route_openers \
                     WHERE opener = $9 OR opener = '*')) \
                     ORDER BY created_at, id LIMIT $7 {skip}) RETURNING {columns}",
                    now = $db_now,
                    skip = $skip_locked,
                    columns = $crate::store::sql::dispatches::DISPATCH_COLUMNS
                );
                let _writer = store.writer().await;
                let mut tx = store.pool.begin_with($begin).await?;
                let mut rows: Vec<$crate::store::DispatchRow> = sqlx::query_as(sql.as_str())
                    .bind(at_ms)
                    .bind(lease_ms)
                    .bind(&route)
                    .bind(&route)
                    .bind(&caller)
                    .bind(&caller)
                    .bind(f.limit)
                    .bind(&opener)
                    .bind(&opener)
                    .fetch_all(&mut *tx)
                    .await?;
                tx.commit().await?;
                rows.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
                Ok(rows)
            }

            pub(super) async fn dispatch_opener(store: &$store, dispatch_id: &str) -> $crate::store::Result<Option<String>> {
                Ok(sqlx::query_scalar(
                    "SELECT o.opener FROM dispatches AS d \
                     JOIN route_openers AS o ON o.route_id = d.route_id WHERE d.id = $1",
                )
                .bind(dispatch_id)
                .fetch_optional(&store.pool)
                .await?)
            }

            pub(super) async fn get_dispatch(store: &$store, id: &str) -> $crate::store::Result<Option<$crate::store::DispatchRow>> {
                Ok(sqlx::query_as($crate::store::sql::dispatches::select_dispatches("WHERE id = $1").as_str())
                    .bind(id)
                    .fetch_optional(&store.pool)
                    .await?)
            }

            pub(super) async fn expired_dispatches(
                store: &$store,
                at_ms: Option<i64>,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                let sql = format!(
                    "WITH clock AS (SELECT COALESCE($1, {now}) AS at_ms) {}",
                    $crate::store::sql::dispatches::select_dispatches(
                        "WHERE state = 'claimed' AND lease_until < (SELECT at_ms FROM clock) ORDER BY created_at, id",
                    ),
                    now = $db_now
                );
                Ok(sqlx::query_as(sql.as_str())
                    .bind(at_ms)
                    .fetch_all(&store.pool)
                    .await?)
            }

            pub(super) async fn unclaimed_dispatches(
                store: &$store,
                at_ms: Option<i64>,
                older_than_ms: i64,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                let sql = format!(
                    "WITH clock AS (SELECT COALESCE($1, {now}) AS at_ms) {}",
                    $crate::store::sql::dispatches::select_dispatches(
                        "WHERE state = 'pending' AND created_at < (SELECT at_ms FROM clock) - $2 \
                         ORDER BY created_at, id",
                    ),
                    now = $db_now
                );
                Ok(sqlx::query_as(sql.as_str())
                    .bind(at_ms)
                    .bind(older_than_ms)
                    .fetch_all(&store.pool)
                    .await?)
            }

            pub(super) async fn list_dispatches(store: &$store, route_id: &str) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                Ok(sqlx::query_as($crate::store::sql::dispatches::select_dispatches("WHERE route_id = $1 ORDER BY created_at, id").as_str())
                    .bind(route_id)
                    .fetch_all(&store.pool)
                    .await?)
            }
        }
    };
}

pub(crate) use dispatches_sql;
