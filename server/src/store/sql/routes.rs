//! Routes and what hangs off each: its idempotency key, who opened it, its
//! attempts and its events, as read back (a transition writes them all at
//! once, see [`crate::store::transition`]); and the statements the hot
//! reads share with SQLite's inline readers (`sqlite_reads.rs`) and
//! PostgreSQL's decision read.

use super::select;

/// Route columns in table order, for `INSERT` and `SELECT`.
pub(crate) const ROUTE_COLUMNS: &str = crate::store::transition::route_columns!();

pub(crate) const ATTEMPT_COLUMNS: &str = "route_id, seq, generation, cycle, candidate_index, candidate_id, \
     candidate_label, invocation_id, code, class, catalogue_version, classifier_rule, safe_excerpt, \
     http_status, policy, decision, retry_ordinal, deadline, outcome, created_at, classification, \
     detail";

pub(crate) fn select_routes(rest: &str) -> String {
    select(ROUTE_COLUMNS, &format!("FROM routes {rest}"))
}

/// A route by id.
pub(crate) static ROUTE_BY_ID: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| select_routes("WHERE id = $1"));

/// A route by id and its profile's columns (`p_…`, null when it is gone).
pub(crate) static ROUTE_AND_PROFILE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "SELECT r.*, p.id AS p_id, p.name AS p_name, p.revision AS p_revision, \
         p.document AS p_document, p.created_at AS p_created_at, \
         p.updated_at AS p_updated_at FROM ({}) AS r \
         LEFT JOIN profiles AS p ON p.id = r.profile_id",
        *ROUTE_BY_ID
    )
});

pub(crate) fn select_attempts(rest: &str) -> String {
    select(ATTEMPT_COLUMNS, &format!("FROM attempts {rest}"))
}

/// Expands, in an engine's module, to `mod routes`: the functions
/// `impl_store!` implements these [`Store`](crate::store::Store) methods
/// with, over `$store`.
macro_rules! routes_sql {
    ($store:ty, $db:ty) => {
        impl $store {
            /// A route and its profile from a row of
            /// [`ROUTE_AND_PROFILE`]($crate::store::sql::routes::ROUTE_AND_PROFILE)
            /// (or a statement that selects it whole).
            fn route_and_profile_of(
                row: &<$db as sqlx::Database>::Row,
            ) -> $crate::store::Result<($crate::store::RouteRow, Option<$crate::store::ProfileRow>)>
            {
                use sqlx::{FromRow, Row};
                let route = $crate::store::RouteRow::from_row(row)?;
                let profile = match row.try_get::<Option<String>, _>("p_id")? {
                    None => None,
                    Some(id) => Some($crate::store::ProfileRow {
                        id,
                        name: row.try_get("p_name")?,
                        revision: row.try_get("p_revision")?,
                        document: row.try_get("p_document")?,
                        created_at_ms: row.try_get("p_created_at")?,
                        updated_at_ms: row.try_get("p_updated_at")?,
                    }),
                };
                Ok((route, profile))
            }
        }

        /// Routes, their keys, openers, attempts and events (`store::sql::routes`).
        mod routes {
            use super::*;

            pub(super) async fn get_route(
                store: &$store,
                id: &str,
            ) -> $crate::store::Result<Option<$crate::store::RouteRow>> {
                if let Some(r) = store.readers() {
                    return r.route(id);
                }
                let mut hot = store.hot.take().await?;
                let row = sqlx::query_as($crate::store::sql::routes::ROUTE_BY_ID.as_str())
                    .bind(id)
                    .fetch_optional(&mut *hot)
                    .await?;
                hot.keep();
                Ok(row)
            }

            pub(super) async fn get_route_key(
                store: &$store,
                scope: &str,
                key: &str,
            ) -> $crate::store::Result<Option<$crate::store::RouteKeyRow>> {
                Ok(sqlx::query_as(
                    "SELECT scope, key, route_id, request, created_at FROM route_keys \
                     WHERE scope = $1 AND key = $2",
                )
                .bind(scope)
                .bind(key)
                .fetch_optional(&store.pool)
                .await?)
            }

            pub(super) async fn get_route_and_profile(
                store: &$store,
                id: &str,
            ) -> $crate::store::Result<
                Option<($crate::store::RouteRow, Option<$crate::store::ProfileRow>)>,
            > {
                if let Some(r) = store.readers() {
                    return r.route_and_profile(id);
                }
                let mut hot = store.hot.take().await?;
                let row = sqlx::query($crate::store::sql::routes::ROUTE_AND_PROFILE.as_str())
                    .bind(id)
                    .fetch_optional(&mut *hot)
                    .await?;
                hot.keep();
                row.as_ref().map(<$store>::route_and_profile_of).transpose()
            }

            pub(super) async fn list_routes(
                store: &$store,
                f: &$crate::store::RouteFilter,
            ) -> $crate::store::Result<Vec<$crate::store::RouteRow>> {
                // Only the filters given are in the statement: with
                // `($1 = '' OR profile_id = $2)` SQLite cannot use the
                // profile index (it plans before the values are bound) and
                // walked every route newest first for a profile with none.
                // An empty value filters nothing, as it always has.
                let given = [
                    ("profile_id", f.profile_id.as_deref()),
                    ("state", f.state.as_deref()),
                    ("caller_kind", f.caller_kind.as_deref()),
                    ("caller_ref", f.caller_ref.as_deref()),
                ]
                .map(|(column, value)| (column, value.filter(|v| !v.is_empty())));
                let mut clause = String::new();
                let mut n = 0;
                let and = |clause: &mut String, n: usize| {
                    clause.push_str(if n == 1 { "WHERE " } else { " AND " });
                };
                for (column, value) in given {
                    if value.is_some() {
                        n += 1;
                        and(&mut clause, n);
                        clause.push_str(&format!("{column} = ${n}"));
                    }
                }
                if f.after.is_some() {
                    n += 1;
                    and(&mut clause, n);
                    clause.push_str(&format!(
                        "(created_at < ${} OR (created_at = ${} AND id < ${}))",
                        n,
                        n + 1,
                        n + 2
                    ));
                    n += 2;
                }
                clause.push_str(&format!(
                    " ORDER BY created_at DESC, id DESC LIMIT ${}",
                    n + 1
                ));
                let sql = $crate::store::sql::routes::select_routes(&clause);
                let mut query = sqlx::query_as(sql.as_str());
                for value in given.iter().filter_map(|(_, v)| *v) {
                    query = query.bind(value);
                }
                if let Some((created, id)) = &f.after {
                    query = query.bind(*created).bind(*created).bind(id.as_str());
                }
                Ok(query.bind(f.limit).fetch_all(&store.pool).await?)
            }

            pub(super) async fn list_attempts(
                store: &$store,
                route_id: &str,
            ) -> $crate::store::Result<Vec<$crate::store::AttemptRow>> {
                Ok(sqlx::query_as(
                    $crate::store::sql::routes::select_attempts(
                        "WHERE route_id = $1 ORDER BY seq DESC",
                    )
                    .as_str(),
                )
                .bind(route_id)
                .fetch_all(&store.pool)
                .await?)
            }

            pub(super) async fn attempts_page(
                store: &$store,
                route_id: &str,
                before_seq: Option<i64>,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::AttemptRow>> {
                Ok(sqlx::query_as(
                    $crate::store::sql::routes::select_attempts(
                        "WHERE route_id = $1 AND seq < $2 ORDER BY seq DESC LIMIT $3",
                    )
                    .as_str(),
                )
                .bind(route_id)
                .bind(before_seq.unwrap_or(i64::MAX))
                .bind(limit)
                .fetch_all(&store.pool)
                .await?)
            }

            pub(super) async fn route_opener(
                store: &$store,
                route_id: &str,
            ) -> $crate::store::Result<Option<String>> {
                Ok(
                    sqlx::query_scalar("SELECT opener FROM route_openers WHERE route_id = $1")
                        .bind(route_id)
                        .fetch_optional(&store.pool)
                        .await?,
                )
            }

            pub(super) async fn events_after(
                store: &$store,
                after_id: i64,
                route_id: Option<&str>,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::EventRow>> {
                let route = route_id.unwrap_or_default();
                Ok(sqlx::query_as(
                    "SELECT id, route_id, kind, payload, created_at, actor FROM events \
                     WHERE id > $1 AND ($2 = '' OR route_id = $3) ORDER BY id LIMIT $4",
                )
                .bind(after_id)
                .bind(route)
                .bind(route)
                .bind(limit)
                .fetch_all(&store.pool)
                .await?)
            }

            pub(super) async fn last_event_id(store: &$store) -> $crate::store::Result<i64> {
                let id: Option<i64> = sqlx::query_scalar("SELECT MAX(id) FROM events")
                    .fetch_one(&store.pool)
                    .await?;
                Ok(id.unwrap_or(0))
            }
        }
    };
}

pub(crate) use routes_sql;
