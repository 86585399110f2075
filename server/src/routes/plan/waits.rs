//! Waits: what a due schedule does ([`deadline`]: dispatch, or wait longer
//! for a circuit), moving a wait ([`rearm`]) and a circuit's waiters
//! ([`waiter_deadlines`]), and the pending wait and schedule row every
//! wait is made of, naming the circuit it is for ([`held_by`]).

use crate::circuits::{self, CircuitSet, Hold, Resource};
use crate::routes::model::{new_id, Route};
use crate::store::{Commit, ScheduleRow};
use chrono::{DateTime, Utc};
use domain::circuit::CircuitHold;
use domain::policy::ClassPolicy;
use domain::profile::Candidate;
use domain::route::{DispatchReason, EventKind, Pending, PendingKind, RouteState, ScheduleState};

/// What a due schedule does.
#[derive(Debug, Clone)]
pub struct DeadlinePlan {
    pub route: Route,
    pub commit: Commit,
    /// `route.fired` (dispatched) or `route.held` (the wait moved).
    pub event: EventKind,
}

/// A due schedule of `kind` for the route's current generation, whose
/// state accepts the deadline (`next`). `candidate`: the route's candidate
/// as the profile has it now (`None`: circuits cannot name it, so nothing
/// holds it).
pub fn deadline(
    route: &Route,
    next: RouteState,
    schedule: &ScheduleRow,
    kind: PendingKind,
    candidate: Option<&Candidate>,
    circuits: &mut CircuitSet,
    now: DateTime<Utc>,
) -> DeadlinePlan {
    let resource = candidate.map(Resource::from);
    let free = resource.is_none_or(|r| circuits.dispatch(r, route.id.as_str(), now));
    if !free {
        let hold = resource
            .map(|r| circuits.hold(r, route.id.as_str(), now))
            .unwrap_or(Hold::Free { probes: vec![] });
        let until = hold.until().unwrap_or(now);
        let (route, commit) = rearm(route, schedule, kind, until, held_by(&hold, until), now);
        return DeadlinePlan {
            route,
            commit,
            event: EventKind::Held,
        };
    }
    let mut next_route = route.clone();
    next_route.state = next;
    next_route.generation = next_route.generation.next();
    next_route.pending = None;
    next_route.new_invocation();
    let resume = route.pending.as_ref().and_then(|p| p.resume.as_ref());
    let commit = Commit {
        fire_schedule: Some(schedule.id.clone()),
        dispatch: Some(
            next_route
                .dispatch(DispatchReason::after(Some(kind)), now)
                .resuming(resume),
        ),
        ..Commit::default()
    };
    DeadlinePlan {
        route: next_route,
        commit,
        event: EventKind::Fired,
    }
}

/// Moves a waiting route's schedule to `deadline`, naming the circuit
/// that holds it (`None`: released). The route stays in its state; the
/// old schedule is consumed and a new one armed, one generation on.
pub fn rearm(
    route: &Route,
    schedule: &ScheduleRow,
    kind: PendingKind,
    deadline: DateTime<Utc>,
    circuit: Option<CircuitHold>,
    now: DateTime<Utc>,
) -> (Route, Commit) {
    let mut next = route.clone();
    next.generation = next.generation.next();
    if let Some(p) = next.pending.as_mut() {
        p.deadline = deadline;
        p.circuit = circuit.clone();
    }
    let commit = Commit {
        fire_schedule: Some(schedule.id.clone()),
        schedule: Some(self::schedule(&next, kind, deadline, circuit.as_ref(), now)),
        ..Commit::default()
    };
    (next, commit)
}

/// When each of a circuit's waiters (oldest first, with their current
/// deadlines) goes next: after the circuit closed, a few at a time (never
/// later than it was going anyway); while it is held, at its deadline.
pub fn waiter_deadlines(
    current: &[DateTime<Utc>],
    hold: &Hold,
    now: DateTime<Utc>,
) -> Vec<(DateTime<Utc>, Option<CircuitHold>)> {
    match hold.until() {
        None => circuits::release_times(current.len(), now)
            .into_iter()
            .zip(current)
            .map(|(release, was)| (release.min(*was), None))
            .collect(),
        Some(until) => current
            .iter()
            .map(|_| (until, held_by(hold, until)))
            .collect(),
    }
}

/// The circuit a wait until `deadline` is for, when its hold set it.
pub fn held_by(hold: &Hold, deadline: DateTime<Utc>) -> Option<CircuitHold> {
    match hold {
        Hold::Held {
            key,
            until,
            awaiting_probe,
        } if *until >= deadline => Some(CircuitHold {
            scope: key.scope,
            resource: key.resource.clone(),
            until: *until,
            awaiting_probe: *awaiting_probe,
        }),
        _ => None,
    }
}

pub(super) fn pending(
    kind: PendingKind,
    deadline: DateTime<Utc>,
    ordinal: u32,
    p: &ClassPolicy,
    code: &str,
    class: domain::policy::ErrorClass,
    circuit: Option<CircuitHold>,
) -> Pending {
    Pending {
        circuit,
        kind,
        deadline,
        retry_ordinal: ordinal,
        max_retries: p.retry.max_retries,
        outcome_after: p.on_exhausted,
        code: code.to_string(),
        class,
        resume: None,
    }
}

pub fn schedule(
    route: &Route,
    kind: PendingKind,
    deadline: DateTime<Utc>,
    circuit: Option<&CircuitHold>,
    now: DateTime<Utc>,
) -> ScheduleRow {
    ScheduleRow {
        id: new_id("s"),
        route_id: route.id.to_string(),
        generation: route.generation.get(),
        kind: kind.to_string(),
        deadline: deadline.timestamp_millis(),
        state: ScheduleState::Armed.to_string(),
        created_at: now.timestamp_millis(),
        circuit: circuit.map(|h| {
            circuits::CircuitKey {
                scope: h.scope,
                resource: h.resource.clone(),
            }
            .to_string()
        }),
    }
}
