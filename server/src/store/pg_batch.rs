//! PostgreSQL: a batch of plain transitions committed as set-based
//! statements, a round trip per table instead of one per row.
//!
//! Member by member (the shared path in `sql/batch.rs`), a batch costs a round
//! trip for every statement of every member and a savepoint between
//! members, and PostgreSQL's backend spends more on those round trips than
//! on the rows (docs/architecture.md, "How a transition is stored"). Most batches are plain —
//! each member moves a different route on, and none consumes a schedule
//! or a dispatch or changes a circuit — and such a batch can be written a
//! table at a time: every route fenced on its generation in one `UPDATE …
//! FROM UNNEST(…)`, then the sweeps, the new rows and the events — all
//! one statement, committed on its own: one round trip a batch.
//!
//! If any route's fence does not hold, or the statement fails, nothing of
//! it commits — nothing of it was visible — and the batch is committed
//! again member by member, where each member fails or commits alone,
//! exactly as before. So this path never answers a stale or failed member
//! itself: it either commits every member or none.

use super::{Announcement, Commit, StoreError};
use sqlx::PgConnection;
use std::collections::HashSet;

/// Whether the set-based path can commit `commits`: every member moves an
/// existing route (a different one each) and only adds rows. A manual
/// action's audit entry is not among the set-based statements: such
/// actions are rare, and member by member writes the entry with its
/// transition.
pub(crate) fn plain(commits: &[Commit]) -> bool {
    let mut routes = HashSet::with_capacity(commits.len());
    commits.iter().all(|c| {
        c.expected_generation.is_some()
            && c.fire_schedule.is_none()
            && c.ack_dispatch.is_none()
            && c.expire_dispatch.is_none()
            && c.withdraw_unclaimed.is_none()
            && c.circuits.is_empty()
            && c.opened_by.is_none()
            && c.audit.is_none()
            && c.route
                .as_ref()
                .is_some_and(|r| routes.insert(r.id.as_str()))
    })
}

/// The SQLSTATE the batch raises when a route's fence did not hold
/// (`kandev_recovery_fences_held`, migration `20261203000000_batch_fence`).
pub(crate) const FENCE_MISSED: &str = "KR409";

/// The whole batch in one statement, committed on its own: PostgreSQL
/// runs a statement sent outside `BEGIN` in a transaction of its own and
/// commits it when the statement ends, so a batch is one round trip (with
/// `BEGIN` and `COMMIT` it was three, and the event-order lock was held
/// across all three).
///
/// `ordered` takes the event-order lock, as every writer does, before
/// anything else: `u` reads it as a one-time filter (an uncorrelated
/// subquery), so PostgreSQL evaluates it before `u` returns its first row
/// and so before any route's row is locked (no lock-order deadlock), and
/// `e` draws its event ids only after `u` (it reads `held`, which reads
/// `u`), so the batch's ids commit in order. `u` moves every route on,
/// fenced on its generation; `held` says whether every fence held and,
/// when one did not, raises [`FENCE_MISSED`], which fails the statement:
/// nothing of it commits, and the caller goes member by member. Every
/// other part also writes only if `held` (all parts see one snapshot).
/// The sweeps find each route's rows in a subquery of its own (`OFFSET 0`
/// keeps PostgreSQL from folding it into a join), so the one plan the
/// writer keeps ([`super::postgres`]'s `WRITER_PLANS`) probes the route's
/// index for them: as a join, a plan made while a table was small reads
/// every armed schedule (or open dispatch) for every batch that sweeps.
/// The state is asked again of the row updated, as a concurrent change of
/// it must be seen — as `IS TRUE`, which no index answers, so the plan
/// finds the rows by their ids (an index on the state would be a way to
/// every open row).
/// The events come back with their routes, in member order; `$71` is the
/// announcement's tail (` <deadline|-> <d|->`, see
/// [`Announcement::payload`]), after the last event's id.
const BATCH: &str = "WITH ordered AS MATERIALIZED (SELECT pg_advisory_xact_lock(7261001)), \
     u AS (UPDATE routes AS r SET profile_id = v.profile_id, \
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
     WHERE (SELECT TRUE FROM ordered) AND r.id = v.id AND r.generation = v.expected \
     RETURNING r.id), \
     held AS (SELECT kandev_recovery_fences_held(COUNT(*) = CARDINALITY($1::text[])) AS ok \
     FROM u), \
     void_schedules AS (UPDATE schedules AS s SET state = 'void' \
     WHERE (SELECT ok FROM held) AND (s.state = 'armed') IS TRUE AND s.id = ANY (ARRAY( \
     SELECT x.id FROM UNNEST($22::text[], $23::bigint[]) AS v(route_id, generation), \
     LATERAL (SELECT id FROM schedules AS y WHERE y.route_id = v.route_id \
     AND y.state = 'armed' AND y.generation < v.generation OFFSET 0) AS x))), \
     void_dispatches AS (UPDATE dispatches AS d SET state = 'void' \
     WHERE (SELECT ok FROM held) AND (d.state IN ('pending', 'claimed')) IS TRUE \
     AND d.id = ANY (ARRAY( \
     SELECT x.id FROM UNNEST($22::text[], $23::bigint[]) AS v(route_id, generation), \
     LATERAL (SELECT id FROM dispatches AS y WHERE y.route_id = v.route_id \
     AND y.state IN ('pending', 'claimed') AND y.generation < v.generation OFFSET 0) AS x))), \
     attempts_added AS (INSERT INTO attempts (route_id, seq, generation, cycle, \
     candidate_index, candidate_id, candidate_label, invocation_id, code, class, \
     catalogue_version, classifier_rule, safe_excerpt, http_status, policy, decision, \
     retry_ordinal, deadline, outcome, created_at, classification, detail) \
     SELECT v.route_id, (SELECT COALESCE(MAX(a.seq), 0) + 1 FROM attempts AS a \
     WHERE a.route_id = v.route_id), v.generation, v.cycle, v.candidate_index, v.candidate_id, \
     v.candidate_label, v.invocation_id, v.code, v.class, v.catalogue_version, \
     v.classifier_rule, v.safe_excerpt, v.http_status, v.policy, v.decision, v.retry_ordinal, \
     v.deadline, v.outcome, v.created_at, v.classification, v.detail \
     FROM UNNEST($24::text[], $25::bigint[], $26::bigint[], $27::bigint[], $28::text[], \
     $29::text[], $30::text[], $31::text[], $32::text[], $33::text[], $34::text[], \
     $35::text[], $36::bigint[], $37::text[], $38::text[], $39::bigint[], $40::bigint[], \
     $41::text[], $42::bigint[], $43::text[], $72::text[]) \
     AS v(route_id, generation, cycle, candidate_index, candidate_id, candidate_label, \
     invocation_id, code, class, catalogue_version, classifier_rule, safe_excerpt, \
     http_status, policy, decision, retry_ordinal, deadline, outcome, created_at, \
     classification, detail) WHERE (SELECT ok FROM held)), \
     schedules_added AS (INSERT INTO schedules (id, route_id, generation, kind, deadline, \
     state, created_at, circuit) \
     SELECT * FROM UNNEST($44::text[], $45::text[], $46::bigint[], $47::text[], \
     $48::bigint[], $49::text[], $50::bigint[], $51::text[]) WHERE (SELECT ok FROM held)), \
     dispatches_added AS (INSERT INTO dispatches (id, route_id, generation, invocation_id, \
     prompt_generation, candidate_index, candidate_id, candidate_label, caller_kind, reason, \
     state, lease_until, created_at, claimed_at, acked_at, resume) \
     SELECT * FROM UNNEST($52::text[], $53::text[], $54::bigint[], $55::text[], \
     $56::bigint[], $57::bigint[], $58::text[], $59::text[], $60::text[], $61::text[], \
     $62::text[], $63::bigint[], $64::bigint[], $65::bigint[], $66::bigint[], $73::text[]) \
     WHERE (SELECT ok FROM held)), \
     e AS (INSERT INTO events (route_id, kind, payload, created_at, actor) \
     SELECT route_id, kind, payload, created_at, actor \
     FROM UNNEST($67::text[], $68::text[], $69::text[], $70::bigint[], $74::text[]) \
     WITH ORDINALITY AS v(route_id, kind, payload, created_at, actor, n) \
     WHERE (SELECT ok FROM held) \
     ORDER BY n RETURNING id, route_id), \
     announced AS (SELECT pg_notify('kandev_recovery_commits', \
     (SELECT MAX(id) FROM e)::text || $71) WHERE (SELECT ok FROM held)) \
     SELECT e.id, e.route_id FROM e, announced";

/// How a set-based batch ended.
pub(crate) enum SetBased {
    /// Every member committed; their event ids, in member order.
    Committed(Vec<i64>),
    /// A route's fence did not hold ([`FENCE_MISSED`]): nothing written.
    Missed,
    /// PostgreSQL refused the batch (or its commit): nothing written.
    Failed(StoreError),
    /// The answer was lost: it may or may not have committed.
    Unknown(StoreError),
    /// The batch could not be sent (no connection, or a closed one:
    /// writing to it failed, `EPIPE`): nothing written, and a new
    /// connection may succeed.
    Unreachable(StoreError),
}

/// Commits a [`plain`] batch in one statement ([`BATCH`]) on `conn`,
/// which must not be inside a transaction: the statement is its own.
pub(crate) async fn write(conn: &mut PgConnection, commits: &[Commit]) -> SetBased {
    let routes: Vec<_> = commits.iter().filter_map(|c| c.route.as_ref()).collect();
    let sweep: Vec<_> = routes
        .iter()
        .zip(commits)
        .filter(|(_, c)| c.void_pending)
        .map(|(r, _)| (r.id.as_str(), r.generation))
        .collect();
    let (swept, swept_generations): (Vec<&str>, Vec<i64>) = sweep.into_iter().unzip();
    let attempts: Vec<_> = commits.iter().filter_map(|c| c.attempt.as_ref()).collect();
    let schedules: Vec<_> = commits.iter().filter_map(|c| c.schedule.as_ref()).collect();
    let dispatches: Vec<_> = commits.iter().filter_map(|c| c.dispatch.as_ref()).collect();
    let tail = {
        // Every member commits on this path: the announcement covers all.
        let all = Announcement {
            event_id: 0,
            schedule: schedules.iter().map(|s| s.deadline).min(),
            dispatch: !dispatches.is_empty(),
        };
        let payload = all.payload();
        payload[payload.find(' ').unwrap_or(0)..].to_string()
    };
    // One column of `rows` as an array parameter.
    macro_rules! column {
        ($rows:expr, |$x:ident| $value:expr) => {
            $rows.iter().map(|$x| $value).collect::<Vec<_>>()
        };
    }
    let q = sqlx::query_as::<_, (i64, String)>(BATCH)
        // Routes ($1–$21).
        .bind(column!(routes, |x| x.id.as_str()))
        .bind(column!(routes, |x| x.profile_id.as_str()))
        .bind(column!(routes, |x| x.caller_kind.as_str()))
        .bind(column!(routes, |x| x.caller_ref.as_str()))
        .bind(column!(routes, |x| x.state.as_str()))
        .bind(column!(routes, |x| x.generation))
        .bind(column!(routes, |x| x.cycle))
        .bind(column!(routes, |x| x.candidate_index))
        .bind(column!(routes, |x| x.candidate_id.as_str()))
        .bind(column!(routes, |x| x.candidate_label.as_str()))
        .bind(column!(routes, |x| x.invocation_id.as_str()))
        .bind(column!(routes, |x| x.prompt_generation))
        .bind(column!(routes, |x| x.effects))
        .bind(column!(routes, |x| x.provider_session_id.as_deref()))
        .bind(column!(routes, |x| x.memory.as_str()))
        .bind(column!(routes, |x| x.pending.as_deref()))
        .bind(column!(routes, |x| x.last_failure.as_deref()))
        .bind(column!(routes, |x| x.reason.as_deref()))
        .bind(column!(routes, |x| x.created_at))
        .bind(column!(routes, |x| x.updated_at))
        .bind(column!(commits, |c| c.expected_generation.unwrap_or(-1)))
        // The sweeps ($22–$23).
        .bind(swept)
        .bind(swept_generations)
        // Attempts ($24–$43).
        .bind(column!(attempts, |a| a.route_id.as_str()))
        .bind(column!(attempts, |a| a.generation))
        .bind(column!(attempts, |a| a.cycle))
        .bind(column!(attempts, |a| a.candidate_index))
        .bind(column!(attempts, |a| a.candidate_id.as_str()))
        .bind(column!(attempts, |a| a.candidate_label.as_str()))
        .bind(column!(attempts, |a| a.invocation_id.as_str()))
        .bind(column!(attempts, |a| a.code.as_str()))
        .bind(column!(attempts, |a| a.class.as_str()))
        .bind(column!(attempts, |a| a.catalogue_version.as_str()))
        .bind(column!(attempts, |a| a.classifier_rule.as_str()))
        .bind(column!(attempts, |a| a.safe_excerpt.as_str()))
        .bind(column!(attempts, |a| a.http_status))
        .bind(column!(attempts, |a| a.policy.as_str()))
        .bind(column!(attempts, |a| a.decision.as_str()))
        .bind(column!(attempts, |a| a.retry_ordinal))
        .bind(column!(attempts, |a| a.deadline))
        .bind(column!(attempts, |a| a.outcome.as_str()))
        .bind(column!(attempts, |a| a.created_at))
        .bind(column!(attempts, |a| a.classification.as_deref()))
        // Schedules ($44–$51).
        .bind(column!(schedules, |s| s.id.as_str()))
        .bind(column!(schedules, |s| s.route_id.as_str()))
        .bind(column!(schedules, |s| s.generation))
        .bind(column!(schedules, |s| s.kind.as_str()))
        .bind(column!(schedules, |s| s.deadline))
        .bind(column!(schedules, |s| s.state.as_str()))
        .bind(column!(schedules, |s| s.created_at))
        .bind(column!(schedules, |s| s.circuit.as_deref()))
        // Dispatches ($52–$66).
        .bind(column!(dispatches, |d| d.id.as_str()))
        .bind(column!(dispatches, |d| d.route_id.as_str()))
        .bind(column!(dispatches, |d| d.generation))
        .bind(column!(dispatches, |d| d.invocation_id.as_str()))
        .bind(column!(dispatches, |d| d.prompt_generation))
        .bind(column!(dispatches, |d| d.candidate_index))
        .bind(column!(dispatches, |d| d.candidate_id.as_str()))
        .bind(column!(dispatches, |d| d.candidate_label.as_str()))
        .bind(column!(dispatches, |d| d.caller_kind.as_str()))
        .bind(column!(dispatches, |d| d.reason.as_str()))
        .bind(column!(dispatches, |d| d.state.as_str()))
        .bind(column!(dispatches, |d| d.lease_until))
        .bind(column!(dispatches, |d| d.created_at))
        .bind(column!(dispatches, |d| d.claimed_at))
        .bind(column!(dispatches, |d| d.acked_at))
        // Events ($67–$70) and the announcement's tail ($71).
        .bind(column!(routes, |r| r.id.as_str()))
        .bind(column!(commits, |c| c.event_kind.as_str()))
        .bind(column!(commits, |c| c.event_payload.as_str()))
        .bind(column!(routes, |r| r.updated_at))
        .bind(tail)
        // Columns added after the rest: attempts' detail ($72),
        // dispatches' resume ($73).
        .bind(column!(attempts, |a| a.detail.as_deref()))
        .bind(column!(dispatches, |d| d.resume.as_deref()))
        // And events' actor ($74).
        .bind(column!(commits, |c| c.event_actor.as_deref()));
    let events = match q.fetch_all(&mut *conn).await {
        Ok(events) => events,
        Err(e) => return written_after(e),
    };
    // One event per route (each member's route is its own): answer by it.
    // `held` makes every part write or the statement fail, so each route
    // has its event; were one missing, the batch has still committed, and
    // must not be committed again: its members are told nothing certain.
    let ids: Option<Vec<i64>> = routes
        .iter()
        .map(|r| events.iter().find(|(_, id)| *id == r.id).map(|(e, _)| *e))
        .collect();
    match ids {
        Some(ids) => SetBased::Committed(ids),
        None => SetBased::Unknown(
            sqlx::Error::Protocol(
                "a committed batch answered fewer events than it has members".into(),
            )
            .into(),
        ),
    }
}

/// How a failed batch statement ended, from its error.
fn written_after(e: sqlx::Error) -> SetBased {
    match &e {
        sqlx::Error::Database(d) if d.code().as_deref() == Some(FENCE_MISSED) => SetBased::Missed,
        // PostgreSQL refused the statement or its commit (an `ERROR`: the
        // statement's transaction was rolled back, and the connection
        // goes on). Not so a `FATAL` (the connection is gone), nor what a
        // pooler between us and PostgreSQL reports of its own — a lost
        // server connection (class 08), an operator or timeout (57), an
        // internal error (XX) — which can come after the server committed:
        // whether it did is not known.
        sqlx::Error::Database(d) if refused(d.as_ref()) => SetBased::Failed(e.into()),
        sqlx::Error::Io(io) if io.kind() == std::io::ErrorKind::BrokenPipe => {
            SetBased::Unreachable(e.into())
        }
        _ => SetBased::Unknown(e.into()),
    }
}

/// Whether a database error proves the batch did not commit.
fn refused(d: &dyn sqlx::error::DatabaseError) -> bool {
    use sqlx::postgres::{PgDatabaseError, PgSeverity};
    let error = d
        .try_downcast_ref::<PgDatabaseError>()
        .is_some_and(|p| matches!(p.severity(), PgSeverity::Error));
    let code = d.code();
    error
        && !matches!(
            code.as_deref().and_then(|c| c.get(..2)),
            Some("08" | "57" | "XX")
        )
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
        // A manual action's audit entry is written member by member.
        let audited = Commit {
            audit: Some(crate::store::AuditRow {
                id: 0,
                at_ms: 2,
                actor: "{}".into(),
                action: "route.action".into(),
                subject: "e".into(),
                detail: None,
            }),
            ..moving("e")
        };
        assert!(!plain(&[moving("a"), audited]));
        assert!(!plain(&[Commit::default()]));
    }

    #[test]
    fn the_announcement_goes_to_the_channel_listened_to() {
        assert!(BATCH.contains(&format!("pg_notify('{}',", super::super::postgres::CHANNEL)));
    }
}
