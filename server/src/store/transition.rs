//! What one route transition ([`Commit`]) executes, as data: the
//! statements in order, their parameters, and what each must have done
//! for the transition to stand. Both engines run this one list — the
//! PostgreSQL store through sqlx, the SQLite writer thread through its own
//! synchronous connection ([`super::sqlite_writer`]) — so the fences can
//! never differ between them.

use super::{Commit, Result, StoreError};

/// A bound value. Borrowed from the [`Commit`]: building the list copies
/// nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Param<'a> {
    Text(&'a str),
    OptText(Option<&'a str>),
    Int(i64),
    OptInt(Option<i64>),
}

/// What a statement must have done for the transition to stand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Nothing: it may touch any number of rows.
    Any,
    /// Exactly one row, else the transition fails with this.
    One(Miss),
    /// It returns the new event's id: the transition's answer.
    EventId,
}

/// Why a fenced statement touched no row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Miss {
    /// The route moved on (or is gone): its generation now is read back
    /// with [`GENERATION`] to answer `StaleGeneration` or `NotFound`.
    Route,
    /// Something the transition consumes (a schedule, a claimed dispatch)
    /// was taken first: the route moved on.
    Stale { generation: i64 },
    /// A circuit moved on.
    Circuit { key: String },
    /// The new route's idempotency key is taken (by a route committed
    /// first, in this batch or another).
    Key,
}

impl Miss {
    /// The error for a miss, given the route's generation now (read only
    /// for [`Miss::Route`]).
    pub(crate) fn error(self, current: Option<i64>) -> StoreError {
        match self {
            Miss::Route => match current {
                Some(current) => StoreError::StaleGeneration { current },
                None => StoreError::NotFound,
            },
            Miss::Stale { generation } => StoreError::StaleGeneration {
                current: generation,
            },
            Miss::Circuit { key } => StoreError::StaleCircuit { key },
            Miss::Key => StoreError::KeyTaken,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Statement<'a> {
    pub sql: &'static str,
    pub params: Vec<Param<'a>>,
    pub check: Check,
}

/// The route's generation now, after a [`Miss::Route`]; bound to its id.
pub(crate) const GENERATION: &str = "SELECT generation FROM routes WHERE id = $1";

/// Route columns in table order (`INSERT` and `SELECT`), as a literal so
/// statements can be assembled at compile time.
macro_rules! route_columns {
    () => {
        "id, profile_id, caller_kind, caller_ref, state, generation, cycle, \
         candidate_index, candidate_id, candidate_label, invocation_id, prompt_generation, effects, \
         provider_session_id, memory, pending, last_failure, reason, created_at, updated_at"
    };
}
pub(crate) use route_columns;

const INSERT_ROUTE: &str = concat!(
    "INSERT INTO routes (",
    route_columns!(),
    ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, \
     $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)"
);

/// `DO NOTHING` rather than a unique violation: a member whose key is
/// taken touches no row and answers alone, on both engines alike (on
/// PostgreSQL it waits for another server's insert of the key to commit
/// or roll back first).
const INSERT_ROUTE_KEY: &str =
    "INSERT INTO route_keys (scope, key, route_id, request, created_at) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (scope, key) DO NOTHING";

const INSERT_OPENER: &str = "INSERT INTO route_openers (route_id, opener) VALUES ($1, $2)";

const UPDATE_ROUTE: &str =
    "UPDATE routes SET id = $1, profile_id = $2, caller_kind = $3, caller_ref = $4, \
     state = $5, generation = $6, cycle = $7, candidate_index = $8, candidate_id = $9, \
     candidate_label = $10, invocation_id = $11, prompt_generation = $12, effects = $13, \
     provider_session_id = $14, memory = $15, pending = $16, last_failure = $17, \
     reason = $18, created_at = $19, updated_at = $20 \
     WHERE id = $21 AND generation = $22";

const FIRE_SCHEDULE: &str =
    "UPDATE schedules SET state = 'fired' WHERE id = $1 AND state = 'armed'";

const ACK_DISPATCH: &str =
    "UPDATE dispatches SET state = 'acked', acked_at = $1 WHERE id = $2 AND state = 'claimed'";

const EXPIRE_DISPATCH: &str =
    "UPDATE dispatches SET state = 'void' WHERE id = $1 AND state = 'claimed'";

const WITHDRAW_UNCLAIMED: &str =
    "UPDATE dispatches SET state = 'void' WHERE id = $1 AND state = 'pending'";

const VOID_SCHEDULES: &str = "UPDATE schedules SET state = 'void' \
     WHERE route_id = $1 AND state = 'armed' AND generation < $2";

const VOID_DISPATCHES: &str = "UPDATE dispatches SET state = 'void' WHERE route_id = $1 \
     AND state IN ('pending', 'claimed') AND generation < $2";

const INSERT_ATTEMPT: &str =
    "INSERT INTO attempts (route_id, seq, generation, cycle, candidate_index, candidate_id, \
     candidate_label, invocation_id, code, class, catalogue_version, classifier_rule, \
     safe_excerpt, http_status, policy, decision, retry_ordinal, deadline, outcome, \
     created_at, classification, detail) \
     VALUES ($1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM attempts WHERE route_id = $2), \
     $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, \
     $22)";

const INSERT_SCHEDULE: &str =
    "INSERT INTO schedules (id, route_id, generation, kind, deadline, state, created_at, circuit) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

const INSERT_CIRCUIT: &str =
    "INSERT INTO circuits (scope, resource, state, open_until, probe_holder, probe_until, \
     owner, openings, code, changed_at, version, released) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
     ON CONFLICT (scope, resource) DO NOTHING";

const UPDATE_CIRCUIT: &str =
    "UPDATE circuits SET state = $1, open_until = $2, probe_holder = $3, probe_until = $4, \
     owner = $5, openings = $6, code = $7, changed_at = $8, version = $9, released = $10 \
     WHERE scope = $11 AND resource = $12 AND version = $13";

const INSERT_CIRCUIT_EVENT: &str =
    "INSERT INTO circuit_events (scope, resource, kind, route_id, payload, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6)";

const INSERT_DISPATCH: &str =
    "INSERT INTO dispatches (id, route_id, generation, invocation_id, prompt_generation, \
     candidate_index, candidate_id, candidate_label, caller_kind, reason, state, lease_until, \
     created_at, claimed_at, acked_at, resume) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)";

const INSERT_EVENT: &str =
    "INSERT INTO events (route_id, kind, payload, created_at, actor) VALUES ($1, $2, $3, $4, $5) \
     RETURNING id";

/// Everything `c` says, in the order it must run: the route fenced by its
/// generation first (so nothing else is written for a moved-on route),
/// then what the transition consumes, the sweep of older generations,
/// the new rows, the circuits (each fenced by its version), the audit
/// entry, and the event last, whose id is the answer.
pub(crate) fn statements(c: &Commit) -> Result<Vec<Statement<'_>>> {
    use Param::{Int, OptInt, OptText, Text};
    let route = c
        .route
        .as_ref()
        .ok_or_else(|| StoreError::Unavailable("commit without a route".into()))?;
    let mut out = Vec::with_capacity(8 + 2 * c.circuits.len());
    let mut route_params = vec![
        Text(&route.id),
        Text(&route.profile_id),
        Text(&route.caller_kind),
        Text(&route.caller_ref),
        Text(&route.state),
        Int(route.generation),
        Int(route.cycle),
        Int(route.candidate_index),
        Text(&route.candidate_id),
        Text(&route.candidate_label),
        Text(&route.invocation_id),
        Int(route.prompt_generation),
        Int(route.effects),
        OptText(route.provider_session_id.as_deref()),
        Text(&route.memory),
        OptText(route.pending.as_deref()),
        OptText(route.last_failure.as_deref()),
        OptText(route.reason.as_deref()),
        Int(route.created_at),
        Int(route.updated_at),
    ];
    out.push(match c.expected_generation {
        None => Statement {
            sql: INSERT_ROUTE,
            params: route_params,
            check: Check::Any,
        },
        Some(expected) => {
            route_params.extend([Text(&route.id), Int(expected)]);
            Statement {
                sql: UPDATE_ROUTE,
                params: route_params,
                check: Check::One(Miss::Route),
            }
        }
    });
    if let Some(k) = &c.route_key {
        out.push(Statement {
            sql: INSERT_ROUTE_KEY,
            params: vec![
                Text(&k.scope),
                Text(&k.key),
                Text(&k.route_id),
                Text(&k.request),
                Int(k.created_at),
            ],
            check: Check::One(Miss::Key),
        });
    }
    if let Some(opener) = &c.opened_by {
        out.push(Statement {
            sql: INSERT_OPENER,
            params: vec![Text(&route.id), Text(opener)],
            check: Check::Any,
        });
    }
    let taken = || {
        Check::One(Miss::Stale {
            generation: route.generation,
        })
    };
    if let Some(id) = &c.fire_schedule {
        out.push(Statement {
            sql: FIRE_SCHEDULE,
            params: vec![Text(id)],
            check: taken(),
        });
    }
    if let Some((id, at)) = &c.ack_dispatch {
        out.push(Statement {
            sql: ACK_DISPATCH,
            params: vec![Int(*at), Text(id)],
            check: taken(),
        });
    }
    if let Some(id) = &c.expire_dispatch {
        out.push(Statement {
            sql: EXPIRE_DISPATCH,
            params: vec![Text(id)],
            check: taken(),
        });
    }
    if let Some(id) = &c.withdraw_unclaimed {
        out.push(Statement {
            sql: WITHDRAW_UNCLAIMED,
            params: vec![Text(id)],
            check: taken(),
        });
    }
    // Whatever was pending for older generations is superseded.
    if c.void_pending {
        for sql in [VOID_SCHEDULES, VOID_DISPATCHES] {
            out.push(Statement {
                sql,
                params: vec![Text(&route.id), Int(route.generation)],
                check: Check::Any,
            });
        }
    }
    if let Some(a) = &c.attempt {
        out.push(Statement {
            sql: INSERT_ATTEMPT,
            params: vec![
                Text(&a.route_id),
                Text(&a.route_id),
                Int(a.generation),
                Int(a.cycle),
                Int(a.candidate_index),
                Text(&a.candidate_id),
                Text(&a.candidate_label),
                Text(&a.invocation_id),
                Text(&a.code),
                Text(&a.class),
                Text(&a.catalogue_version),
                Text(&a.classifier_rule),
                Text(&a.safe_excerpt),
                OptInt(a.http_status),
                Text(&a.policy),
                Text(&a.decision),
                Int(a.retry_ordinal),
                OptInt(a.deadline),
                Text(&a.outcome),
                Int(a.created_at),
                OptText(a.classification.as_deref()),
                OptText(a.detail.as_deref()),
            ],
            check: Check::Any,
        });
    }
    if let Some(s) = &c.schedule {
        out.push(Statement {
            sql: INSERT_SCHEDULE,
            params: vec![
                Text(&s.id),
                Text(&s.route_id),
                Int(s.generation),
                Text(&s.kind),
                Int(s.deadline),
                Text(&s.state),
                Int(s.created_at),
                OptText(s.circuit.as_deref()),
            ],
            check: Check::Any,
        });
    }
    for w in &c.circuits {
        let r = &w.row;
        let moved = Check::One(Miss::Circuit {
            key: format!("{}:{}", r.scope, r.resource),
        });
        out.push(match w.expected_version {
            None => Statement {
                sql: INSERT_CIRCUIT,
                params: vec![
                    Text(&r.scope),
                    Text(&r.resource),
                    Text(&r.state),
                    OptInt(r.open_until),
                    OptText(r.probe_holder.as_deref()),
                    OptInt(r.probe_until),
                    OptText(r.owner.as_deref()),
                    Int(r.openings),
                    Text(&r.code),
                    Int(r.changed_at),
                    Int(r.version),
                    Int(r.released),
                ],
                check: moved,
            },
            Some(expected) => Statement {
                sql: UPDATE_CIRCUIT,
                params: vec![
                    Text(&r.state),
                    OptInt(r.open_until),
                    OptText(r.probe_holder.as_deref()),
                    OptInt(r.probe_until),
                    OptText(r.owner.as_deref()),
                    Int(r.openings),
                    Text(&r.code),
                    Int(r.changed_at),
                    Int(r.version),
                    Int(r.released),
                    Text(&r.scope),
                    Text(&r.resource),
                    Int(expected),
                ],
                check: moved,
            },
        });
        out.push(Statement {
            sql: INSERT_CIRCUIT_EVENT,
            params: vec![
                Text(&r.scope),
                Text(&r.resource),
                Text(&w.event_kind),
                Text(&w.route_id),
                Text(&w.event_payload),
                Int(r.changed_at),
            ],
            check: Check::Any,
        });
    }
    if let Some(d) = &c.dispatch {
        out.push(Statement {
            sql: INSERT_DISPATCH,
            params: vec![
                Text(&d.id),
                Text(&d.route_id),
                Int(d.generation),
                Text(&d.invocation_id),
                Int(d.prompt_generation),
                Int(d.candidate_index),
                Text(&d.candidate_id),
                Text(&d.candidate_label),
                Text(&d.caller_kind),
                Text(&d.reason),
                Text(&d.state),
                OptInt(d.lease_until),
                Int(d.created_at),
                OptInt(d.claimed_at),
                OptInt(d.acked_at),
                OptText(d.resume.as_deref()),
            ],
            check: Check::Any,
        });
    }
    // Before the event, whose id ends the list; after every fence, so a
    // moved-on route writes no entry.
    if let Some(a) = &c.audit {
        out.push(Statement {
            sql: super::audit::INSERT_AUDIT,
            params: vec![
                Int(a.at_ms),
                Text(&a.actor),
                Text(&a.action),
                Text(&a.subject),
                OptText(a.detail.as_deref()),
            ],
            check: Check::Any,
        });
    }
    out.push(Statement {
        sql: INSERT_EVENT,
        params: vec![
            Text(&route.id),
            Text(&c.event_kind),
            Text(&c.event_payload),
            Int(route.updated_at),
            OptText(c.event_actor.as_deref()),
        ],
        check: Check::EventId,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{AuditRow, RouteRow, ScheduleRow};

    fn route() -> RouteRow {
        RouteRow {
            id: "r".into(),
            profile_id: "p".into(),
            caller_kind: "kanban".into(),
            caller_ref: "card".into(),
            state: "retry_wait".into(),
            generation: 4,
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
        }
    }

    fn placeholders(sql: &str) -> usize {
        (1..64)
            .take_while(|n| sql.contains(&format!("${n}")))
            .count()
    }

    #[test]
    fn every_statement_binds_as_many_values_as_it_has_placeholders() {
        let c = Commit {
            expected_generation: Some(3),
            route: Some(route()),
            fire_schedule: Some("s0".into()),
            ack_dispatch: Some(("d0".into(), 5)),
            expire_dispatch: Some("d1".into()),
            void_pending: true,
            schedule: Some(ScheduleRow {
                id: "s".into(),
                route_id: "r".into(),
                generation: 4,
                kind: "retry".into(),
                deadline: 9,
                state: "armed".into(),
                created_at: 2,
                circuit: None,
            }),
            event_kind: "failure".into(),
            audit: Some(AuditRow {
                id: 0,
                at_ms: 2,
                actor: r#"{"kind":"local"}"#.into(),
                action: "route.action".into(),
                subject: "r".into(),
                detail: None,
            }),
            ..Commit::default()
        };
        let list = statements(&c).unwrap();
        for s in &list {
            assert_eq!(placeholders(s.sql), s.params.len(), "{}", s.sql);
        }
        let sqls: Vec<&str> = list.iter().map(|s| s.sql).collect();
        assert_eq!(
            sqls,
            [
                UPDATE_ROUTE,
                FIRE_SCHEDULE,
                ACK_DISPATCH,
                EXPIRE_DISPATCH,
                VOID_SCHEDULES,
                VOID_DISPATCHES,
                INSERT_SCHEDULE,
                crate::store::audit::INSERT_AUDIT,
                INSERT_EVENT
            ]
        );
        assert_eq!(list[0].check, Check::One(Miss::Route));
        assert_eq!(list[1].check, Check::One(Miss::Stale { generation: 4 }));
        assert_eq!(list.last().unwrap().check, Check::EventId);
    }

    #[test]
    fn a_new_route_is_inserted_unfenced_and_a_commit_without_one_is_refused() {
        let c = Commit {
            route: Some(route()),
            ..Commit::default()
        };
        let list = statements(&c).unwrap();
        assert_eq!((list[0].sql, &list[0].check), (INSERT_ROUTE, &Check::Any));
        assert_eq!(placeholders(INSERT_ROUTE), 20);
        assert!(matches!(
            statements(&Commit::default()),
            Err(StoreError::Unavailable(_))
        ));
    }

    #[test]
    fn an_idempotency_key_is_inserted_with_its_route_and_a_taken_one_refuses_it() {
        let c = Commit {
            route: Some(route()),
            route_key: Some(crate::store::RouteKeyRow {
                scope: "tok_1".into(),
                key: "k".into(),
                route_id: "r".into(),
                request: "{}".into(),
                created_at: 1,
            }),
            ..Commit::default()
        };
        let list = statements(&c).unwrap();
        assert_eq!(list[0].sql, INSERT_ROUTE);
        assert_eq!(
            (list[1].sql, &list[1].check),
            (INSERT_ROUTE_KEY, &Check::One(Miss::Key))
        );
        assert_eq!(placeholders(INSERT_ROUTE_KEY), list[1].params.len());
        assert!(matches!(Miss::Key.error(None), StoreError::KeyTaken));
    }

    #[test]
    fn misses_answer_the_error_callers_act_on() {
        assert!(matches!(
            Miss::Route.error(Some(7)),
            StoreError::StaleGeneration { current: 7 }
        ));
        assert!(matches!(Miss::Route.error(None), StoreError::NotFound));
        assert!(matches!(
            Miss::Circuit { key: "provider:x".into() }.error(None),
            StoreError::StaleCircuit { key } if key == "provider:x"
        ));
    }
}
