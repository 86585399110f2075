//! The SQL both engines share. `impl_store!` expands to the [`Store`]
//! implementation for one engine's store type; the body is written once so
//! the two engines can never drift apart. SQL uses `$n` placeholders in
//! ascending order, which SQLite and PostgreSQL both accept.
//!
//! [`Store`]: super::Store

/// Route columns in table order, for `INSERT` and `SELECT`.
pub(crate) const ROUTE_COLUMNS: &str = super::transition::route_columns!();

pub(crate) const ATTEMPT_COLUMNS: &str = "route_id, seq, generation, cycle, candidate_index, candidate_id, \
     candidate_label, invocation_id, code, class, catalogue_version, classifier_rule, safe_excerpt, \
     http_status, policy, decision, retry_ordinal, deadline, outcome, created_at, classification, \
     detail";

pub(crate) const DISPATCH_COLUMNS: &str =
    "id, route_id, generation, invocation_id, prompt_generation, \
     candidate_index, candidate_id, candidate_label, caller_kind, reason, state, lease_until, \
     created_at, claimed_at, acked_at, resume";

pub(crate) const SCHEDULE_COLUMNS: &str =
    "id, route_id, generation, kind, deadline, state, created_at, circuit";

pub(crate) const CIRCUIT_COLUMNS: &str = "scope, resource, state, open_until, probe_holder, \
     probe_until, owner, openings, code, changed_at, version";

/// The most unknown-evidence entries one report evicts: the log is over
/// its bound by one entry at a time, so this only matters after the
/// capacity was lowered (or concurrent inserts on PostgreSQL overshot it).
pub(crate) const UNKNOWN_EVICT_BATCH: i64 = 16;

/// `SELECT <ROUTE_COLUMNS> FROM routes` and friends, built once.
pub(crate) fn select(columns: &str, rest: &str) -> String {
    format!("SELECT {columns} {rest}")
}

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

/// Every circuit, by scope and resource.
pub(crate) static CIRCUITS: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| select(CIRCUIT_COLUMNS, "FROM circuits ORDER BY scope, resource"));

pub(crate) fn select_attempts(rest: &str) -> String {
    select(ATTEMPT_COLUMNS, &format!("FROM attempts {rest}"))
}

pub(crate) fn select_dispatches(rest: &str) -> String {
    select(DISPATCH_COLUMNS, &format!("FROM dispatches {rest}"))
}

/// The store for one engine. `$begin` opens a write transaction (SQLite
/// takes the write lock up front so concurrent transitions queue instead of
/// failing on a lock upgrade); `$order_events` runs before an event insert
/// so event ids commit in id order (PostgreSQL sequences do not otherwise
/// guarantee that, and the event stream resumes by id); `$skip_locked`
/// ends the schedule- and dispatch-claim subqueries; `$db_now` is the
/// database's clock in UTC ms (what decides due-ness when no instant is
/// pinned); `$notify`, when not empty, announces a commit to every server
/// on the database, inside the transaction (bound to the
/// [`Announcement`](super::Announcement) payload).
///
/// Every write begins with `self.health()?`: once SQLite's log has failed
/// a flush, a write through the pool, which SQLite flushes itself, could
/// commit after a hole in the log (see `sqlite_log`), so it is refused
/// like a route transition. PostgreSQL's store is always healthy here.
macro_rules! impl_store {
    ($store:ty, $db:ty, $engine:expr, begin = $begin:expr, order_events = $order_events:expr, skip_locked = $skip_locked:expr, orphaned = $orphaned:expr, db_now = $db_now:expr, notify = $notify:expr) => {
        impl $store {
            /// A route and its profile from a row of
            /// [`ROUTE_AND_PROFILE`]($crate::store::sql::ROUTE_AND_PROFILE)
            /// (or a statement that selects it whole).
            fn route_and_profile_of(
                row: &<$db as sqlx::Database>::Row,
            ) -> $crate::store::Result<($crate::store::RouteRow, Option<$crate::store::ProfileRow>)> {
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

        #[async_trait::async_trait]
        impl $crate::store::Store for $store {
            fn engine(&self) -> $crate::store::Engine {
                $engine
            }

            async fn ping(&self) -> $crate::store::Result<()> {
                self.health()?;
                sqlx::query("SELECT 1").execute(&self.pool).await?;
                Ok(())
            }

            async fn list_profiles(&self) -> $crate::store::Result<Vec<$crate::store::ProfileRow>> {
                let rows = sqlx::query_as::<_, (String, String, i64, String, i64, i64)>(
                    "SELECT id, name, revision, document, created_at, updated_at
                     FROM profiles ORDER BY created_at, id",
                )
                .fetch_all(&self.pool)
                .await?;
                Ok(rows.into_iter().map($crate::store::sql::profile_row).collect())
            }

            async fn get_profile(
                &self,
                id: &str,
            ) -> $crate::store::Result<Option<$crate::store::ProfileRow>> {
                let row = sqlx::query_as::<_, (String, String, i64, String, i64, i64)>(
                    "SELECT id, name, revision, document, created_at, updated_at
                     FROM profiles WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
                Ok(row.map($crate::store::sql::profile_row))
            }

            async fn insert_profile(
                &self,
                row: &$crate::store::ProfileRow,
            ) -> $crate::store::Result<$crate::store::ProfileRow> {
                self.health()?;
                sqlx::query(
                    "INSERT INTO profiles (id, name, revision, document, created_at, updated_at)
                     VALUES ($1, $2, 1, $3, $4, $5)",
                )
                .bind(&row.id)
                .bind(&row.name)
                .bind(&row.document)
                .bind(row.created_at_ms)
                .bind(row.updated_at_ms)
                .execute(&self.pool)
                .await?;
                Ok($crate::store::ProfileRow {
                    revision: 1,
                    ..row.clone()
                })
            }

            async fn update_profile(
                &self,
                id: &str,
                expected_revision: i64,
                name: &str,
                document: &str,
                now_ms: i64,
            ) -> $crate::store::Result<$crate::store::ProfileRow> {
                self.health()?;
                let _writer = self.writer().await;
                let mut tx = self.pool.begin_with($begin).await?;
                let updated = sqlx::query(
                    "UPDATE profiles SET name = $1, document = $2, updated_at = $3,
                            revision = revision + 1
                     WHERE id = $4 AND revision = $5",
                )
                .bind(name)
                .bind(document)
                .bind(now_ms)
                .bind(id)
                .bind(expected_revision)
                .execute(&mut *tx)
                .await?
                .rows_affected();
                let row = sqlx::query_as::<_, (String, String, i64, String, i64, i64)>(
                    "SELECT id, name, revision, document, created_at, updated_at
                     FROM profiles WHERE id = $1",
                )
                .bind(id)
                .fetch_optional(&mut *tx)
                .await?
                .map($crate::store::sql::profile_row);
                match (updated, row) {
                    (1, Some(row)) => {
                        tx.commit().await?;
                        Ok(row)
                    }
                    (_, Some(row)) => Err($crate::store::StoreError::StaleRevision {
                        current: row.revision,
                    }),
                    (_, None) => Err($crate::store::StoreError::NotFound),
                }
            }

            async fn normalise_profile_document(
                &self,
                id: &str,
                revision: i64,
                document: &str,
            ) -> $crate::store::Result<()> {
                self.health()?;
                sqlx::query("UPDATE profiles SET document = $1 WHERE id = $2 AND revision = $3")
                    .bind(document)
                    .bind(id)
                    .bind(revision)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn delete_profile(
                &self,
                id: &str,
                expected_revision: Option<i64>,
            ) -> $crate::store::Result<()> {
                self.health()?;
                let _writer = self.writer().await;
                let mut tx = self.pool.begin_with($begin).await?;
                let current: Option<i64> =
                    sqlx::query_scalar("SELECT revision FROM profiles WHERE id = $1")
                        .bind(id)
                        .fetch_optional(&mut *tx)
                        .await?;
                match (current, expected_revision) {
                    (None, _) => return Err($crate::store::StoreError::NotFound),
                    (Some(current), Some(expected)) if current != expected => {
                        return Err($crate::store::StoreError::StaleRevision { current })
                    }
                    _ => {}
                }
                sqlx::query("DELETE FROM profiles WHERE id = $1")
                    .bind(id)
                    .execute(&mut *tx)
                    .await?;
                tx.commit().await?;
                Ok(())
            }

            async fn get_setting(&self, key: &str) -> $crate::store::Result<Option<String>> {
                Ok(sqlx::query_scalar("SELECT value FROM settings WHERE key = $1")
                    .bind(key)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn set_setting_once(&self, key: &str, value: &str) -> $crate::store::Result<bool> {
                self.health()?;
                let inserted = sqlx::query(
                    "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING",
                )
                .bind(key)
                .bind(value)
                .execute(&self.pool)
                .await?
                .rows_affected();
                Ok(inserted == 1)
            }

            async fn record_unknown(
                &self,
                u: &$crate::store::UnknownRow,
                capacity: i64,
            ) -> $crate::store::Result<()> {
                self.health()?;
                let _writer = self.writer().await;
                let mut tx = self.pool.begin_with($begin).await?;
                // One statement for the common case (a known entry counts up).
                let count: i64 = sqlx::query_scalar(
                    "INSERT INTO unknown_evidence (key, safe_excerpt, count, first_seen, last_seen, \
                     classifier_rule, provider_id, model_id, catalogue_version) \
                     VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $8) \
                     ON CONFLICT (key) DO UPDATE SET count = unknown_evidence.count + 1, \
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
                .fetch_one(&mut *tx)
                .await?;
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
                    .bind($crate::store::sql::UNKNOWN_EVICT_BATCH)
                    .bind((capacity - 1).max(0))
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
                    if evicted > 0 {
                        sqlx::query("UPDATE unknown_evidence_evictions SET evicted = evicted + $1 WHERE id = 1")
                            .bind(evicted as i64)
                            .execute(&mut *tx)
                            .await?;
                    }
                }
                tx.commit().await?;
                Ok(())
            }

            async fn unknown_evidence(
                &self,
                limit: i64,
            ) -> $crate::store::Result<(Vec<$crate::store::UnknownRow>, i64)> {
                let rows = sqlx::query_as(
                    "SELECT key, safe_excerpt, count, first_seen, last_seen, classifier_rule, provider_id, \
                     model_id, catalogue_version FROM unknown_evidence \
                     ORDER BY count DESC, last_seen DESC, key LIMIT $1",
                )
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
                let evicted: Option<i64> =
                    sqlx::query_scalar("SELECT evicted FROM unknown_evidence_evictions WHERE id = 1")
                        .fetch_optional(&self.pool)
                        .await?;
                Ok((rows, evicted.unwrap_or(0)))
            }

            async fn state_counts(&self, at_ms: Option<i64>) -> $crate::store::Result<$crate::store::StateCounts> {
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
                    .fetch_all(&self.pool)
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

            async fn commit(&self, c: &$crate::store::Commit) -> $crate::store::Result<i64> {
                self.commit_queued(c).await
            }

            async fn commit_all(&self, commits: &[$crate::store::Commit]) -> Vec<$crate::store::Result<i64>> {
                self.commit_together(commits).await
            }

            async fn get_route(&self, id: &str) -> $crate::store::Result<Option<$crate::store::RouteRow>> {
                if let Some(r) = self.readers() {
                    return r.route(id);
                }
                let mut hot = self.hot.take().await?;
                let row = sqlx::query_as($crate::store::sql::ROUTE_BY_ID.as_str())
                    .bind(id)
                    .fetch_optional(&mut *hot)
                    .await?;
                hot.keep();
                Ok(row)
            }

            async fn get_route_key(
                &self,
                scope: &str,
                key: &str,
            ) -> $crate::store::Result<Option<$crate::store::RouteKeyRow>> {
                Ok(sqlx::query_as(
                    "SELECT scope, key, route_id, request, created_at FROM route_keys \
                     WHERE scope = $1 AND key = $2",
                )
                .bind(scope)
                .bind(key)
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn get_route_and_profile(
                &self,
                id: &str,
            ) -> $crate::store::Result<Option<($crate::store::RouteRow, Option<$crate::store::ProfileRow>)>> {
                if let Some(r) = self.readers() {
                    return r.route_and_profile(id);
                }
                let mut hot = self.hot.take().await?;
                let row = sqlx::query($crate::store::sql::ROUTE_AND_PROFILE.as_str())
                    .bind(id)
                    .fetch_optional(&mut *hot)
                    .await?;
                hot.keep();
                row.as_ref().map(Self::route_and_profile_of).transpose()
            }

            async fn get_route_for_decision(
                &self,
                id: &str,
            ) -> $crate::store::Result<Option<$crate::store::DecisionRows>> {
                self.read_for_decision(id).await
            }

            async fn get_route_for_decision_and_token(
                &self,
                id: &str,
                token_digest: &str,
            ) -> $crate::store::Result<(
                Option<$crate::store::DecisionRows>,
                Option<$crate::store::TokenRow>,
            )> {
                self.read_for_decision_and_token(id, token_digest).await
            }

            async fn list_routes(
                &self,
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
                ]
                .map(|(column, value)| (column, value.filter(|v| !v.is_empty())));
                let mut clause = String::new();
                let mut n = 0;
                for (column, value) in given {
                    if value.is_some() {
                        n += 1;
                        clause.push_str(if n == 1 { "WHERE " } else { " AND " });
                        clause.push_str(&format!("{column} = ${n}"));
                    }
                }
                clause.push_str(&format!(" ORDER BY updated_at DESC, id LIMIT ${}", n + 1));
                let sql = $crate::store::sql::select_routes(&clause);
                let mut query = sqlx::query_as(sql.as_str());
                for value in given.iter().filter_map(|(_, v)| *v) {
                    query = query.bind(value);
                }
                Ok(query.bind(f.limit).fetch_all(&self.pool).await?)
            }

            async fn list_attempts(&self, route_id: &str) -> $crate::store::Result<Vec<$crate::store::AttemptRow>> {
                Ok(sqlx::query_as($crate::store::sql::select_attempts("WHERE route_id = $1 ORDER BY seq DESC").as_str())
                    .bind(route_id)
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn due_schedules(
                &self,
                now_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                Ok(sqlx::query_as(
                    $crate::store::sql::select(
                        $crate::store::sql::SCHEDULE_COLUMNS,
                        "FROM schedules WHERE state = 'armed' AND deadline <= $1 ORDER BY deadline, id LIMIT $2",
                    )
                    .as_str(),
                )
                .bind(now_ms)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn claim_due_schedules(
                &self,
                at_ms: Option<i64>,
                claim_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                self.health()?;
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
                    .bind(self.claimant())
                    .persistent(false)
                    .fetch_one(&self.pool)
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
                    columns = $crate::store::sql::SCHEDULE_COLUMNS
                );
                let _writer = self.writer().await;
                let mut tx = self.pool.begin_with($begin).await?;
                let mut rows: Vec<$crate::store::ScheduleRow> = sqlx::query_as(sql.as_str())
                    .bind(at_ms)
                    .bind(claim_ms)
                    .bind(limit)
                    .bind(self.claimant())
                    .fetch_all(&mut *tx)
                    .await?;
                tx.commit().await?;
                rows.sort_by(|a, b| (a.deadline, &a.id).cmp(&(b.deadline, &b.id)));
                Ok(rows)
            }

            async fn next_deadline(&self, at_ms: Option<i64>) -> $crate::store::Result<Option<i64>> {
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
                    .fetch_one(&self.pool)
                    .await?)
            }

            async fn void_schedule(&self, id: &str) -> $crate::store::Result<()> {
                self.health()?;
                let _writer = self.writer().await;
                sqlx::query("UPDATE schedules SET state = 'void' WHERE id = $1 AND state = 'armed'")
                    .bind(id)
                    .execute(&self.pool)
                    .await?;
                Ok(())
            }

            async fn count_schedules(&self, state: &str) -> $crate::store::Result<i64> {
                Ok(sqlx::query_scalar("SELECT COUNT(*) FROM schedules WHERE state = $1")
                    .bind(state)
                    .fetch_one(&self.pool)
                    .await?)
            }

            async fn claim_dispatches(
                &self,
                f: &$crate::store::ClaimFilter,
                at_ms: Option<i64>,
                lease_ms: i64,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                self.health()?;
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
                    columns = $crate::store::sql::DISPATCH_COLUMNS
                );
                let _writer = self.writer().await;
                let mut tx = self.pool.begin_with($begin).await?;
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

            async fn route_opener(&self, route_id: &str) -> $crate::store::Result<Option<String>> {
                Ok(sqlx::query_scalar("SELECT opener FROM route_openers WHERE route_id = $1")
                    .bind(route_id)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn dispatch_opener(&self, dispatch_id: &str) -> $crate::store::Result<Option<String>> {
                Ok(sqlx::query_scalar(
                    "SELECT o.opener FROM dispatches AS d \
                     JOIN route_openers AS o ON o.route_id = d.route_id WHERE d.id = $1",
                )
                .bind(dispatch_id)
                .fetch_optional(&self.pool)
                .await?)
            }

            async fn get_dispatch(&self, id: &str) -> $crate::store::Result<Option<$crate::store::DispatchRow>> {
                Ok(sqlx::query_as($crate::store::sql::select_dispatches("WHERE id = $1").as_str())
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await?)
            }

            async fn expired_dispatches(
                &self,
                at_ms: Option<i64>,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                let sql = format!(
                    "WITH clock AS (SELECT COALESCE($1, {now}) AS at_ms) {}",
                    $crate::store::sql::select_dispatches(
                        "WHERE state = 'claimed' AND lease_until < (SELECT at_ms FROM clock) ORDER BY created_at, id",
                    ),
                    now = $db_now
                );
                Ok(sqlx::query_as(sql.as_str())
                    .bind(at_ms)
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn unclaimed_dispatches(
                &self,
                at_ms: Option<i64>,
                older_than_ms: i64,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                let sql = format!(
                    "WITH clock AS (SELECT COALESCE($1, {now}) AS at_ms) {}",
                    $crate::store::sql::select_dispatches(
                        "WHERE state = 'pending' AND created_at < (SELECT at_ms FROM clock) - $2 \
                         ORDER BY created_at, id",
                    ),
                    now = $db_now
                );
                Ok(sqlx::query_as(sql.as_str())
                    .bind(at_ms)
                    .bind(older_than_ms)
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn list_dispatches(&self, route_id: &str) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                Ok(sqlx::query_as($crate::store::sql::select_dispatches("WHERE route_id = $1 ORDER BY created_at, id").as_str())
                    .bind(route_id)
                    .fetch_all(&self.pool)
                    .await?)
            }

            async fn events_after(
                &self,
                after_id: i64,
                route_id: Option<&str>,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::EventRow>> {
                let route = route_id.unwrap_or_default();
                Ok(sqlx::query_as(
                    "SELECT id, route_id, kind, payload, created_at FROM events \
                     WHERE id > $1 AND ($2 = '' OR route_id = $3) ORDER BY id LIMIT $4",
                )
                .bind(after_id)
                .bind(route)
                .bind(route)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn last_event_id(&self) -> $crate::store::Result<i64> {
                let id: Option<i64> = sqlx::query_scalar("SELECT MAX(id) FROM events").fetch_one(&self.pool).await?;
                Ok(id.unwrap_or(0))
            }

            async fn list_circuits(&self) -> $crate::store::Result<Vec<$crate::store::CircuitRow>> {
                // Read by every decision: a hot read.
                if let Some(r) = self.readers() {
                    return r.circuits();
                }
                let mut hot = self.hot.take().await?;
                let rows = sqlx::query_as($crate::store::sql::CIRCUITS.as_str())
                    .fetch_all(&mut *hot)
                    .await?;
                hot.keep();
                Ok(rows)
            }

            async fn circuit_waiters(&self, key: &str) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                Ok(sqlx::query_as(
                    $crate::store::sql::select(
                        $crate::store::sql::SCHEDULE_COLUMNS,
                        "FROM schedules WHERE circuit = $1 AND state = 'armed' ORDER BY created_at, id",
                    )
                    .as_str(),
                )
                .bind(key)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn circuit_waiting_counts(&self) -> $crate::store::Result<Vec<(String, i64)>> {
                Ok(sqlx::query_as(
                    "SELECT circuit, COUNT(*) FROM schedules WHERE state = 'armed' AND circuit IS NOT NULL \
                     GROUP BY circuit ORDER BY circuit",
                )
                .fetch_all(&self.pool)
                .await?)
            }

            async fn circuit_events_after(
                &self,
                after_id: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::CircuitEventRow>> {
                Ok(sqlx::query_as(
                    "SELECT id, scope, resource, kind, route_id, payload, created_at FROM circuit_events \
                     WHERE id > $1 ORDER BY id LIMIT $2",
                )
                .bind(after_id)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?)
            }

            async fn commit_listener(&self) -> $crate::store::Result<Option<$crate::store::CommitListener>> {
                self.listener().await
            }
        }

        impl $store {
            /// Commits `commits` in one transaction, each under its own
            /// savepoint (see [`group`]): one answer per member, in order.
            ///
            /// [`group`]: $crate::store::group
            async fn commit_batch(
                pool: &sqlx::Pool<$db>,
                writer: Option<&tokio::sync::Mutex<()>>,
                commits: &[$crate::store::Commit],
            ) -> Vec<$crate::store::Result<i64>> {
                let _writer = match writer {
                    Some(w) => Some(w.lock().await),
                    None => None,
                };
                // Bounded like the set-based batch (see `group::BATCH_TIMEOUT`);
                // an abandoned transaction is rolled back when sqlx next
                // uses (or closes) its connection.
                let limit = $crate::store::group::BATCH_TIMEOUT;
                let batch = tokio::time::timeout(limit, Self::try_batch(pool, commits))
                    .await
                    .unwrap_or_else(|_| {
                        Err($crate::store::StoreError::Unavailable(format!(
                            "the database did not finish a batch within {} s; it may still commit",
                            limit.as_secs()
                        )))
                    });
                match batch {
                    Ok(answers) => answers,
                    Err(e) => {
                        tracing::warn!(error = %e, members = commits.len(), "a batch of route transitions failed");
                        $crate::store::group::failed_batch(commits.len(), &e)
                    }
                }
            }

            /// The batch's transaction; an error here fails every member.
            async fn try_batch(
                pool: &sqlx::Pool<$db>,
                commits: &[$crate::store::Commit],
            ) -> $crate::store::Result<Vec<$crate::store::Result<i64>>> {
                use $crate::store::group::{after_member, SAVEPOINT};
                let mut tx = pool.begin_with($begin).await?;
                // Taken once, outside every savepoint (rolling one back
                // would release it), and held to the COMMIT: the batch's
                // event ids commit in order.
                let order_events: &str = $order_events;
                if !order_events.is_empty() {
                    sqlx::query(order_events).execute(&mut *tx).await?;
                }
                // Statement hops are what a batch costs, so savepoints are
                // chained: a member that committed releases its savepoint
                // and opens the next one in one hop; one that failed rolls
                // back to its savepoint, which then stands as the next
                // member's (it marks the same state again). COMMIT takes
                // the last one along.
                let mut answers = Vec::with_capacity(commits.len());
                sqlx::Executor::execute(&mut *tx, sqlx::raw_sql(SAVEPOINT)).await?;
                for (i, c) in commits.iter().enumerate() {
                    let answer = Self::apply_commit(&mut *tx, c).await;
                    if let Some(sql) = after_member(answer.is_ok(), i + 1 == commits.len()) {
                        sqlx::Executor::execute(&mut *tx, sqlx::raw_sql(sql)).await?;
                    }
                    answers.push(answer);
                }
                let notify: &str = $notify;
                if !notify.is_empty() {
                    if let Some(a) = $crate::store::group::announcement(commits.iter().zip(&answers)) {
                        sqlx::query(notify).bind(a.payload()).execute(&mut *tx).await?;
                    }
                }
                tx.commit().await?;
                Ok(answers)
            }

            /// One member of a batch: everything [`Commit`] says (the
            /// statements [`transition::statements`] lists), inside the
            /// member's savepoint (the caller rolls back to it on an
            /// error); answers the new event's id.
            ///
            /// [`Commit`]: $crate::store::Commit
            /// [`transition::statements`]: $crate::store::transition::statements
            async fn apply_commit(
                conn: &mut <$db as sqlx::Database>::Connection,
                c: &$crate::store::Commit,
            ) -> $crate::store::Result<i64> {
                use $crate::store::transition::{statements, Check, Param, GENERATION};
                macro_rules! bound {
                    ($q:expr, $params:expr) => {{
                        let mut q = $q;
                        for p in $params {
                            q = match *p {
                                Param::Text(v) => q.bind(v),
                                Param::OptText(v) => q.bind(v),
                                Param::Int(v) => q.bind(v),
                                Param::OptInt(v) => q.bind(v),
                            };
                        }
                        q
                    }};
                }
                let route_id = c.route.as_ref().map(|r| r.id.as_str()).unwrap_or_default();
                for s in statements(c)? {
                    match s.check {
                        Check::EventId => {
                            return Ok(bound!(sqlx::query_scalar::<_, i64>(s.sql), &s.params)
                                .fetch_one(&mut *conn)
                                .await?);
                        }
                        Check::Any => {
                            bound!(sqlx::query(s.sql), &s.params).execute(&mut *conn).await?;
                        }
                        Check::One(miss) => {
                            let n = bound!(sqlx::query(s.sql), &s.params)
                                .execute(&mut *conn)
                                .await?
                                .rows_affected();
                            if n != 1 {
                                let current = match miss {
                                    $crate::store::transition::Miss::Route => {
                                        sqlx::query_scalar(GENERATION)
                                            .bind(route_id)
                                            .fetch_optional(&mut *conn)
                                            .await?
                                    }
                                    _ => None,
                                };
                                return Err(miss.error(current));
                            }
                        }
                    }
                }
                Err($crate::store::StoreError::Unavailable("a transition without an event".into()))
            }
        }
    };
}

pub(crate) use impl_store;

pub(crate) fn profile_row(
    (id, name, revision, document, created_at_ms, updated_at_ms): (
        String,
        String,
        i64,
        String,
        i64,
        i64,
    ),
) -> super::ProfileRow {
    super::ProfileRow {
        id,
        name,
        revision,
        document,
        created_at_ms,
        updated_at_ms,
    }
}
