//! PostgreSQL: a batch of plain transitions committed as set-based
//! statements, a round trip per table instead of one per row.
//!
//! Member by member (the shared path in `sql.rs`), a batch costs a round
//! trip for every statement of every member and a savepoint between
//! members, and PostgreSQL's backend spends more on those round trips than
//! on the rows (README, "Where decisions go"). Most batches are plain —
//! each member moves a different route on, and none consumes a schedule
//! or a dispatch or changes a circuit — and such a batch can be written a
//! table at a time: every route fenced on its generation in one `UPDATE …
//! FROM UNNEST(…)`, then the sweeps, the new rows and the events.
//!
//! If any route's fence does not hold, or any statement fails, the
//! transaction is rolled back whole — nothing of it was visible — and the
//! batch is committed again member by member, where each member fails or
//! commits alone, exactly as before. So this path never answers a stale or
//! failed member itself: it either commits every member or none.

use super::{Announcement, Commit, Result};
use sqlx::PgConnection;
use std::collections::HashSet;

/// Whether the set-based path can commit `commits`: every member moves an
/// existing route (a different one each) and only adds rows.
pub(crate) fn plain(commits: &[Commit]) -> bool {
    let mut routes = HashSet::with_capacity(commits.len());
    commits.iter().all(|c| {
        c.expected_generation.is_some()
            && c.fire_schedule.is_none()
            && c.ack_dispatch.is_none()
            && c.expire_dispatch.is_none()
            && c.circuits.is_empty()
            && c.route
                .as_ref()
                .is_some_and(|r| routes.insert(r.id.as_str()))
    })
}

/// Takes the event-order lock with the transaction (one round trip): the
/// batch's event ids commit in order, as on the member-by-member path.
pub(crate) const BEGIN: &str = "BEGIN; SELECT pg_advisory_xact_lock(7261001)";

const UPDATE_ROUTES: &str = "UPDATE routes AS r SET profile_id = v.profile_id, \
     caller_kind = v.caller_kind, caller_ref = v.caller_ref, state = v.state, \
     generation = v.generation, cycle = v.cycle, candidate_index = v.candidate_index, \
     candidate_id = v.candidate_id, candidate_label = v.candidate_label, \
     invocation_id = v.invocation_id, prompt_generation = v.prompt_generation, \
     effects = v.effects, provider_session_id = v.provider_session_id, memory = v.memory, \
     pending = v.pending, last_failure = v.last_failure, reason = v.reason, \
     created_at = v.created_at, updated_at = v.updated_at \
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], \
     $7::bigint[], $8::bigint[], $9::text[], $10::text[], $11::text[], $12::bigint[], \
     $13::bigint[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], \
     $19::bigint[], $20::bigint[], $21::bigint[]) \
     AS v(id, profile_id, caller_kind, caller_ref, state, generation, cycle, candidate_index, \
     candidate_id, candidate_label, invocation_id, prompt_generation, effects, \
     provider_session_id, memory, pending, last_failure, reason, created_at, updated_at, \
     expected) \
     WHERE r.id = v.id AND r.generation = v.expected RETURNING r.id";

const VOID_SCHEDULES: &str = "UPDATE schedules AS s SET state = 'void' \
     FROM UNNEST($1::text[], $2::bigint[]) AS v(route_id, generation) \
     WHERE s.route_id = v.route_id AND s.state = 'armed' AND s.generation < v.generation";

const VOID_DISPATCHES: &str = "UPDATE dispatches AS d SET state = 'void' \
     FROM UNNEST($1::text[], $2::bigint[]) AS v(route_id, generation) \
     WHERE d.route_id = v.route_id AND d.state IN ('pending', 'claimed') \
     AND d.generation < v.generation";

const INSERT_ATTEMPTS: &str = "INSERT INTO attempts (route_id, seq, generation, cycle, \
     candidate_index, candidate_id, candidate_label, invocation_id, code, class, \
     catalogue_version, classifier_rule, safe_excerpt, http_status, policy, decision, \
     retry_ordinal, deadline, outcome, created_at, classification) \
     SELECT v.route_id, (SELECT COALESCE(MAX(a.seq), 0) + 1 FROM attempts AS a \
     WHERE a.route_id = v.route_id), v.generation, v.cycle, v.candidate_index, v.candidate_id, \
     v.candidate_label, v.invocation_id, v.code, v.class, v.catalogue_version, \
     v.classifier_rule, v.safe_excerpt, v.http_status, v.policy, v.decision, v.retry_ordinal, \
     v.deadline, v.outcome, v.created_at, v.classification \
     FROM UNNEST($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], \
     $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], \
     $14::text[], $15::text[], $16::bigint[], $17::bigint[], $18::text[], $19::bigint[], \
     $20::text[]) \
     AS v(route_id, generation, cycle, candidate_index, candidate_id, candidate_label, \
     invocation_id, code, class, catalogue_version, classifier_rule, safe_excerpt, \
     http_status, policy, decision, retry_ordinal, deadline, outcome, created_at, \
     classification)";

const INSERT_SCHEDULES: &str = "INSERT INTO schedules (id, route_id, generation, kind, \
     deadline, state, created_at, circuit) \
     SELECT * FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], \
     $6::text[], $7::bigint[], $8::text[])";

const INSERT_DISPATCHES: &str = "INSERT INTO dispatches (id, route_id, generation, \
     invocation_id, prompt_generation, candidate_index, candidate_id, candidate_label, \
     caller_kind, reason, state, lease_until, created_at, claimed_at, acked_at) \
     SELECT * FROM UNNEST($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], \
     $6::bigint[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], \
     $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[])";

/// The events, in member order, and the batch's announcement in the same
/// round trip: `$5` is the announcement's tail (` <deadline|-> <d|->`,
/// see [`Announcement::payload`]), after the last event's id.
const INSERT_EVENTS: &str = "WITH e AS (INSERT INTO events (route_id, kind, payload, created_at) \
     SELECT route_id, kind, payload, created_at \
     FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[]) WITH ORDINALITY \
     AS v(route_id, kind, payload, created_at, n) ORDER BY n RETURNING id, route_id), \
     announced AS (SELECT pg_notify('kandev_recovery_commits', \
     (SELECT MAX(id) FROM e)::text || $5)) \
     SELECT e.id, e.route_id FROM e, announced";

/// Commits a [`plain`] batch inside `conn`'s open transaction (begun with
/// [`BEGIN`]): `Some(event ids)` in member order when every fence held,
/// `None` when one did not (the caller rolls back and goes member by
/// member).
pub(crate) async fn write(conn: &mut PgConnection, commits: &[Commit]) -> Result<Option<Vec<i64>>> {
    let routes: Vec<_> = commits.iter().filter_map(|c| c.route.as_ref()).collect();
    let updated: Vec<String> = {
        let r = |f: fn(&super::RouteRow) -> &str| routes.iter().map(|x| f(x)).collect::<Vec<_>>();
        let i = |f: fn(&super::RouteRow) -> i64| routes.iter().map(|x| f(x)).collect::<Vec<_>>();
        let o = |f: fn(&super::RouteRow) -> Option<&str>| {
            routes.iter().map(|x| f(x)).collect::<Vec<_>>()
        };
        let expected: Vec<i64> = commits
            .iter()
            .map(|c| c.expected_generation.unwrap_or(-1))
            .collect();
        sqlx::query_scalar(UPDATE_ROUTES)
            .bind(r(|x| &x.id))
            .bind(r(|x| &x.profile_id))
            .bind(r(|x| &x.caller_kind))
            .bind(r(|x| &x.caller_ref))
            .bind(r(|x| &x.state))
            .bind(i(|x| x.generation))
            .bind(i(|x| x.cycle))
            .bind(i(|x| x.candidate_index))
            .bind(r(|x| &x.candidate_id))
            .bind(r(|x| &x.candidate_label))
            .bind(r(|x| &x.invocation_id))
            .bind(i(|x| x.prompt_generation))
            .bind(i(|x| x.effects))
            .bind(o(|x| x.provider_session_id.as_deref()))
            .bind(r(|x| &x.memory))
            .bind(o(|x| x.pending.as_deref()))
            .bind(o(|x| x.last_failure.as_deref()))
            .bind(o(|x| x.reason.as_deref()))
            .bind(i(|x| x.created_at))
            .bind(i(|x| x.updated_at))
            .bind(expected)
            .fetch_all(&mut *conn)
            .await?
    };
    if updated.len() != commits.len() {
        return Ok(None);
    }
    let sweep: Vec<_> = routes
        .iter()
        .zip(commits)
        .filter(|(_, c)| c.void_pending)
        .map(|(r, _)| (r.id.as_str(), r.generation))
        .collect();
    if !sweep.is_empty() {
        let (ids, generations): (Vec<&str>, Vec<i64>) = sweep.into_iter().unzip();
        for sql in [VOID_SCHEDULES, VOID_DISPATCHES] {
            sqlx::query(sql)
                .bind(&ids)
                .bind(&generations)
                .execute(&mut *conn)
                .await?;
        }
    }
    let attempts: Vec<_> = commits.iter().filter_map(|c| c.attempt.as_ref()).collect();
    if !attempts.is_empty() {
        let t =
            |f: fn(&super::AttemptRow) -> &str| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
        let i =
            |f: fn(&super::AttemptRow) -> i64| attempts.iter().map(|a| f(a)).collect::<Vec<_>>();
        let oi = |f: fn(&super::AttemptRow) -> Option<i64>| {
            attempts.iter().map(|a| f(a)).collect::<Vec<_>>()
        };
        sqlx::query(INSERT_ATTEMPTS)
            .bind(t(|a| &a.route_id))
            .bind(i(|a| a.generation))
            .bind(i(|a| a.cycle))
            .bind(i(|a| a.candidate_index))
            .bind(t(|a| &a.candidate_id))
            .bind(t(|a| &a.candidate_label))
            .bind(t(|a| &a.invocation_id))
            .bind(t(|a| &a.code))
            .bind(t(|a| &a.class))
            .bind(t(|a| &a.catalogue_version))
            .bind(t(|a| &a.classifier_rule))
            .bind(t(|a| &a.safe_excerpt))
            .bind(oi(|a| a.http_status))
            .bind(t(|a| &a.policy))
            .bind(t(|a| &a.decision))
            .bind(i(|a| a.retry_ordinal))
            .bind(oi(|a| a.deadline))
            .bind(t(|a| &a.outcome))
            .bind(i(|a| a.created_at))
            .bind(
                attempts
                    .iter()
                    .map(|a| a.classification.as_deref())
                    .collect::<Vec<_>>(),
            )
            .execute(&mut *conn)
            .await?;
    }
    let schedules: Vec<_> = commits.iter().filter_map(|c| c.schedule.as_ref()).collect();
    if !schedules.is_empty() {
        let t =
            |f: fn(&super::ScheduleRow) -> &str| schedules.iter().map(|s| f(s)).collect::<Vec<_>>();
        let i =
            |f: fn(&super::ScheduleRow) -> i64| schedules.iter().map(|s| f(s)).collect::<Vec<_>>();
        sqlx::query(INSERT_SCHEDULES)
            .bind(t(|s| &s.id))
            .bind(t(|s| &s.route_id))
            .bind(i(|s| s.generation))
            .bind(t(|s| &s.kind))
            .bind(i(|s| s.deadline))
            .bind(t(|s| &s.state))
            .bind(i(|s| s.created_at))
            .bind(
                schedules
                    .iter()
                    .map(|s| s.circuit.as_deref())
                    .collect::<Vec<_>>(),
            )
            .execute(&mut *conn)
            .await?;
    }
    let dispatches: Vec<_> = commits.iter().filter_map(|c| c.dispatch.as_ref()).collect();
    if !dispatches.is_empty() {
        let t = |f: fn(&super::DispatchRow) -> &str| {
            dispatches.iter().map(|d| f(d)).collect::<Vec<_>>()
        };
        let i =
            |f: fn(&super::DispatchRow) -> i64| dispatches.iter().map(|d| f(d)).collect::<Vec<_>>();
        let oi = |f: fn(&super::DispatchRow) -> Option<i64>| {
            dispatches.iter().map(|d| f(d)).collect::<Vec<_>>()
        };
        sqlx::query(INSERT_DISPATCHES)
            .bind(t(|d| &d.id))
            .bind(t(|d| &d.route_id))
            .bind(i(|d| d.generation))
            .bind(t(|d| &d.invocation_id))
            .bind(i(|d| d.prompt_generation))
            .bind(i(|d| d.candidate_index))
            .bind(t(|d| &d.candidate_id))
            .bind(t(|d| &d.candidate_label))
            .bind(t(|d| &d.caller_kind))
            .bind(t(|d| &d.reason))
            .bind(t(|d| &d.state))
            .bind(oi(|d| d.lease_until))
            .bind(i(|d| d.created_at))
            .bind(oi(|d| d.claimed_at))
            .bind(oi(|d| d.acked_at))
            .execute(&mut *conn)
            .await?;
    }
    let tail = {
        // Every member commits on this path: the announcement covers all.
        let all = Announcement {
            event_id: 0,
            schedule: commits
                .iter()
                .filter_map(|c| c.schedule.as_ref().map(|s| s.deadline))
                .min(),
            dispatch: commits.iter().any(|c| c.dispatch.is_some()),
        };
        let payload = all.payload();
        payload[payload.find(' ').unwrap_or(0)..].to_string()
    };
    let events: Vec<(i64, String)> = sqlx::query_as(INSERT_EVENTS)
        .bind(routes.iter().map(|r| r.id.as_str()).collect::<Vec<_>>())
        .bind(
            commits
                .iter()
                .map(|c| c.event_kind.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(
            commits
                .iter()
                .map(|c| c.event_payload.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(routes.iter().map(|r| r.updated_at).collect::<Vec<_>>())
        .bind(tail)
        .fetch_all(&mut *conn)
        .await?;
    // One event per route (each member's route is its own): answer by it.
    let ids: Option<Vec<i64>> = routes
        .iter()
        .map(|r| events.iter().find(|(_, id)| *id == r.id).map(|(e, _)| *e))
        .collect();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::RouteRow;

    fn moving(id: &str) -> Commit {
        Commit {
            expected_generation: Some(1),
            route: Some(RouteRow {
                id: id.into(),
                profile_id: "p".into(),
                caller_kind: "kanban".into(),
                caller_ref: "c".into(),
                state: "retry_wait".into(),
                generation: 2,
                cycle: 0,
                candidate_index: 0,
                candidate_id: "c".into(),
                candidate_label: "C".into(),
                invocation_id: "i".into(),
                prompt_generation: 1,
                effects: 0,
                provider_session_id: None,
                memory: "{}".into(),
                pending: None,
                last_failure: None,
                reason: None,
                created_at: 1,
                updated_at: 2,
            }),
            ..Commit::default()
        }
    }

    #[test]
    fn only_batches_that_add_rows_to_distinct_existing_routes_are_plain() {
        assert!(plain(&[moving("a"), moving("b")]));
        // Two transitions of one route: the second is fenced on the first.
        assert!(!plain(&[moving("a"), moving("a")]));
        let new = Commit {
            expected_generation: None,
            ..moving("c")
        };
        assert!(!plain(&[moving("a"), new]));
        let fires = Commit {
            fire_schedule: Some("s".into()),
            ..moving("d")
        };
        assert!(!plain(&[fires]));
        assert!(!plain(&[Commit::default()]));
    }

    #[test]
    fn the_announcement_goes_to_the_channel_listened_to() {
        assert!(
            INSERT_EVENTS.contains(&format!("pg_notify('{}',", super::super::postgres::CHANNEL))
        );
    }
}
