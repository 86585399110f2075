//! The SQL both engines share. `impl_store!` expands to the [`Store`]
//! implementation for one engine's store type; the body is written once so
//! the two engines can never drift apart. SQL uses `$n` placeholders in
//! ascending order, which SQLite and PostgreSQL both accept.
//!
//! The statements are grouped by the tables they serve, one module each:
//! [`profiles`] (and settings), [`unknown`] (the unknown-evidence log),
//! [`retention`] (pruning ended routes), [`counts`] (the gauges), [`routes`] (with their keys, openers, attempts
//! and events), [`schedules`], [`dispatches`], [`circuits`], and [`batch`]
//! (the transaction a batch of transitions is committed in through sqlx).
//! Each holds its tables' columns and a macro that expands, in the
//! engine's module, to a module of the same name with its statements as
//! functions over the engine's store, given the engine-specific SQL it
//! needs and nothing more. `impl_store!` expands every one of them and
//! implements [`Store`] by calling them: a trait has one `impl` block, and
//! `async_trait` rewrites only the methods written in it, so that block is
//! the table of which method's SQL is where.
//!
//! [`Store`]: super::Store

pub(super) mod batch;
pub(super) mod circuits;
pub(super) mod counts;
pub(super) mod dispatches;
pub(super) mod profiles;
pub(super) mod retention;
pub(super) mod routes;
pub(super) mod schedules;
pub(super) mod unknown;

/// `SELECT <columns> <rest>`: how every module here builds its reads.
pub(crate) fn select(columns: &str, rest: &str) -> String {
    format!("SELECT {columns} {rest}")
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
        $crate::store::sql::profiles::profiles_sql!($store, $db, begin = $begin);
        $crate::store::sql::unknown::unknown_sql!($store, begin = $begin);
        $crate::store::sql::retention::retention_sql!($store, begin = $begin);
        $crate::store::sql::counts::counts_sql!($store, db_now = $db_now);
        $crate::store::sql::routes::routes_sql!($store, $db);
        $crate::store::sql::schedules::schedules_sql!(
            $store,
            begin = $begin,
            db_now = $db_now,
            skip_locked = $skip_locked,
            orphaned = $orphaned
        );
        $crate::store::sql::dispatches::dispatches_sql!(
            $store,
            begin = $begin,
            db_now = $db_now,
            skip_locked = $skip_locked
        );
        $crate::store::sql::circuits::circuits_sql!($store, begin = $begin);
        $crate::store::sql::batch::batch_sql!(
            $store,
            $db,
            begin = $begin,
            order_events = $order_events,
            notify = $notify
        );

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
                profiles::list_profiles(self).await
            }

            async fn get_profile(
                &self,
                id: &str,
            ) -> $crate::store::Result<Option<$crate::store::ProfileRow>> {
                profiles::get_profile(self, id).await
            }

            async fn insert_profile(
                &self,
                row: &$crate::store::ProfileRow,
                actor: &str,
            ) -> $crate::store::Result<$crate::store::ProfileRow> {
                profiles::insert_profile(self, row, actor).await
            }

            async fn update_profile(
                &self,
                id: &str,
                expected_revision: i64,
                name: &str,
                document: &str,
                now_ms: i64,
                actor: &str,
            ) -> $crate::store::Result<$crate::store::ProfileRow> {
                profiles::update_profile(self, id, expected_revision, name, document, now_ms, actor)
                    .await
            }

            async fn normalise_profile_document(
                &self,
                id: &str,
                revision: i64,
                document: &str,
            ) -> $crate::store::Result<()> {
                profiles::normalise_profile_document(self, id, revision, document).await
            }

            async fn delete_profile(
                &self,
                id: &str,
                expected_revision: Option<i64>,
                actor: &str,
                now_ms: i64,
            ) -> $crate::store::Result<()> {
                profiles::delete_profile(self, id, expected_revision, actor, now_ms).await
            }

            async fn get_setting(&self, key: &str) -> $crate::store::Result<Option<String>> {
                profiles::get_setting(self, key).await
            }

            async fn set_setting_once(
                &self,
                key: &str,
                value: &str,
            ) -> $crate::store::Result<bool> {
                profiles::set_setting_once(self, key, value).await
            }

            async fn record_unknown(
                &self,
                u: &$crate::store::UnknownRow,
                capacity: i64,
                attempt: Option<(&str, i64)>,
            ) -> $crate::store::Result<()> {
                unknown::record_unknown(self, u, capacity, attempt).await
            }

            async fn prune_ended(&self, before_ms: i64, limit: i64) -> $crate::store::Result<u64> {
                retention::prune_ended(self, before_ms, limit).await
            }

            async fn prune_audit(&self, before_ms: i64, limit: i64) -> $crate::store::Result<u64> {
                retention::prune_log(self, "audit_log", "at", before_ms, limit).await
            }

            async fn prune_circuit_events(
                &self,
                before_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<u64> {
                retention::prune_log(self, "circuit_events", "created_at", before_ms, limit).await
            }

            async fn unknown_evidence(
                &self,
                limit: i64,
            ) -> $crate::store::Result<(Vec<$crate::store::UnknownRow>, i64)> {
                unknown::unknown_evidence(self, limit).await
            }

            async fn unknown_sightings(
                &self,
            ) -> $crate::store::Result<Vec<$crate::store::UnknownSightingRow>> {
                unknown::unknown_sightings(self).await
            }

            async fn state_counts(
                &self,
                at_ms: Option<i64>,
            ) -> $crate::store::Result<$crate::store::StateCounts> {
                counts::state_counts(self, at_ms).await
            }

            async fn commit(&self, c: &$crate::store::Commit) -> $crate::store::Result<i64> {
                self.commit_queued(c).await
            }

            async fn commit_all(
                &self,
                commits: &[$crate::store::Commit],
            ) -> Vec<$crate::store::Result<i64>> {
                self.commit_together(commits).await
            }

            async fn get_route(
                &self,
                id: &str,
            ) -> $crate::store::Result<Option<$crate::store::RouteRow>> {
                routes::get_route(self, id).await
            }

            async fn get_route_key(
                &self,
                scope: &str,
                key: &str,
            ) -> $crate::store::Result<Option<$crate::store::RouteKeyRow>> {
                routes::get_route_key(self, scope, key).await
            }

            async fn get_route_and_profile(
                &self,
                id: &str,
            ) -> $crate::store::Result<
                Option<($crate::store::RouteRow, Option<$crate::store::ProfileRow>)>,
            > {
                routes::get_route_and_profile(self, id).await
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
                routes::list_routes(self, f).await
            }

            async fn list_attempts(
                &self,
                route_id: &str,
            ) -> $crate::store::Result<Vec<$crate::store::AttemptRow>> {
                routes::list_attempts(self, route_id).await
            }

            async fn attempts_page(
                &self,
                route_id: &str,
                before_seq: Option<i64>,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::AttemptRow>> {
                routes::attempts_page(self, route_id, before_seq, limit).await
            }

            async fn due_schedules(
                &self,
                now_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                schedules::due_schedules(self, now_ms, limit).await
            }

            async fn claim_due_schedules(
                &self,
                at_ms: Option<i64>,
                claim_ms: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                schedules::claim_due_schedules(self, at_ms, claim_ms, limit).await
            }

            async fn next_deadline(
                &self,
                at_ms: Option<i64>,
            ) -> $crate::store::Result<Option<i64>> {
                schedules::next_deadline(self, at_ms).await
            }

            async fn void_schedule(&self, id: &str) -> $crate::store::Result<()> {
                schedules::void_schedule(self, id).await
            }

            async fn count_schedules(&self, state: &str) -> $crate::store::Result<i64> {
                schedules::count_schedules(self, state).await
            }

            async fn claim_dispatches(
                &self,
                f: &$crate::store::ClaimFilter,
                at_ms: Option<i64>,
                lease_ms: i64,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                dispatches::claim_dispatches(self, f, at_ms, lease_ms).await
            }

            async fn route_opener(&self, route_id: &str) -> $crate::store::Result<Option<String>> {
                routes::route_opener(self, route_id).await
            }

            async fn dispatch_opener(
                &self,
                dispatch_id: &str,
            ) -> $crate::store::Result<Option<String>> {
                dispatches::dispatch_opener(self, dispatch_id).await
            }

            async fn get_dispatch(
                &self,
                id: &str,
            ) -> $crate::store::Result<Option<$crate::store::DispatchRow>> {
                dispatches::get_dispatch(self, id).await
            }

            async fn expired_dispatches(
                &self,
                at_ms: Option<i64>,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                dispatches::expired_dispatches(self, at_ms).await
            }

            async fn unclaimed_dispatches(
                &self,
                at_ms: Option<i64>,
                older_than_ms: i64,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                dispatches::unclaimed_dispatches(self, at_ms, older_than_ms).await
            }

            async fn list_dispatches(
                &self,
                route_id: &str,
            ) -> $crate::store::Result<Vec<$crate::store::DispatchRow>> {
                dispatches::list_dispatches(self, route_id).await
            }

            async fn events_after(
                &self,
                after_id: i64,
                route_id: Option<&str>,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::EventRow>> {
                routes::events_after(self, after_id, route_id, limit).await
            }

            async fn last_event_id(&self) -> $crate::store::Result<i64> {
                routes::last_event_id(self).await
            }

            async fn list_circuits(&self) -> $crate::store::Result<Vec<$crate::store::CircuitRow>> {
                circuits::list_circuits(self).await
            }

            async fn circuit_waiters(
                &self,
                key: &str,
            ) -> $crate::store::Result<Vec<$crate::store::ScheduleRow>> {
                circuits::circuit_waiters(self, key).await
            }

            async fn circuit_waiting_counts(&self) -> $crate::store::Result<Vec<(String, i64)>> {
                circuits::circuit_waiting_counts(self).await
            }

            async fn circuit_events_after(
                &self,
                after_id: i64,
                limit: i64,
            ) -> $crate::store::Result<Vec<$crate::store::CircuitEventRow>> {
                circuits::circuit_events_after(self, after_id, limit).await
            }

            async fn operate_circuit(
                &self,
                write: &$crate::store::CircuitWrite,
                audit: &$crate::store::AuditRow,
            ) -> $crate::store::Result<()> {
                circuits::operate_circuit(self, write, audit).await
            }

            async fn commit_listener(
                &self,
            ) -> $crate::store::Result<Option<$crate::store::CommitListener>> {
                self.listener().await
            }
        }
    };
}

pub(crate) use impl_store;
