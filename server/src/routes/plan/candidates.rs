//! Which candidate a route goes to, given the circuits that may hold
//! them: a switch to the next eligible one ([`switch`]) and a new route's
//! first ([`select`]) — at once, held until the hold that ends first, or
//! not at all.

use super::waits::{held_by, pending, schedule};
use crate::circuits::{CircuitSet, Hold, Resource};
use crate::routes::model::Route;
use crate::store::{DispatchRow, ScheduleRow};
use chrono::{DateTime, Duration, Utc};
use domain::circuit::CircuitHold;
use domain::policy::ClassPolicy;
use domain::profile::Profile;
use domain::route::{DispatchReason, PendingKind};

/// Where a switch goes.
#[derive(Debug, Clone)]
pub enum Switch {
    /// To the next eligible candidate, now: its dispatch.
    Now(Box<DispatchRow>),
    /// Every remaining candidate is held by a shared circuit: the route
    /// is on the one whose hold ends first, waiting for it.
    Held(HeldSwitch),
    /// No candidate is left in this route cycle.
    NoneLeft,
    /// Every remaining candidate is held longer than the deployment waits
    /// (the hold that ends first, to name it).
    AllHeld(Option<CircuitHold>),
}

/// A switch waiting for its candidate's circuit (the `switching` row of
/// docs/design.md's state table, its dispatch deferred to the hold's end: held is not gone).
#[derive(Debug, Clone)]
pub struct HeldSwitch {
    pub until: DateTime<Utc>,
    pub hold: Option<CircuitHold>,
}

impl HeldSwitch {
    /// Sets the route's pending wait (the policy `p` says what follows)
    /// and answers the schedule that fires the switch at the hold's end.
    pub fn apply(
        self,
        route: &mut Route,
        p: &ClassPolicy,
        code: &str,
        class: domain::policy::ErrorClass,
        now: DateTime<Utc>,
    ) -> ScheduleRow {
        let kind = PendingKind::Switch;
        route.pending = Some(pending(
            kind,
            self.until,
            0,
            p,
            code,
            class,
            self.hold.clone(),
        ));
        schedule(route, kind, self.until, self.hold.as_ref(), now)
    }
}

/// Excludes the current candidate and moves to the next eligible one —
/// not excluded this cycle and not held by a circuit (passed over, not
/// excluded: it may be chosen again once its circuit lets it). The switch
/// takes the probes of the circuits it is the first to try. When every
/// remaining candidate is held, the route moves to the one whose hold
/// ends first and waits for it, if that is within `max_hold_wait`.
pub fn switch(
    route: &mut Route,
    profile: &Profile,
    circuits: &mut CircuitSet,
    max_hold_wait: Duration,
    now: DateTime<Utc>,
) -> Switch {
    if !route.memory.excluded.contains(&route.candidate.id) {
        route.memory.excluded.push(route.candidate.id.clone());
    }
    let holds: Vec<(usize, Hold)> = profile
        .candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| !route.memory.excluded.contains(&c.id))
        .map(|(i, c)| (i, circuits.hold(Resource::from(c), route.id.as_str(), now)))
        .collect();
    let mut passed_over = route.memory.excluded.clone();
    passed_over.extend(
        holds
            .iter()
            .filter(|(_, h)| !h.is_free())
            .map(|(i, _)| profile.candidates[*i].id.clone()),
    );
    if let Some((index, candidate)) = profile.next_eligible(&route.candidate.id, &passed_over) {
        circuits.dispatch(Resource::from(candidate), route.id.as_str(), now);
        route.move_to(index, candidate);
        return Switch::Now(Box::new(route.dispatch(DispatchReason::Switch, now)));
    }
    match first_to_end(&holds) {
        None => Switch::NoneLeft,
        Some((_, until, hold)) if until - now > max_hold_wait => {
            Switch::AllHeld(held_by(hold, until))
        }
        Some((index, until, hold)) => {
            route.move_to(index, &profile.candidates[index]);
            Switch::Held(HeldSwitch {
                until,
                hold: held_by(hold, until),
            })
        }
    }
}

/// The held candidate whose hold ends first (the earliest in profile
/// order among equals).
fn first_to_end(holds: &[(usize, Hold)]) -> Option<(usize, DateTime<Utc>, &Hold)> {
    holds
        .iter()
        .filter_map(|(i, h)| h.until().map(|until| (*i, until, h)))
        .min_by_key(|(i, until, _)| (*until, *i))
}

/// Where a new route starts.
#[derive(Debug, Clone)]
pub enum Start {
    /// On this candidate, at once (the first its circuits let it try).
    Now(usize),
    /// Every candidate is held: on this one, waiting for its hold to end.
    Held(usize, HeldSwitch),
    /// Every candidate is held longer than the deployment waits (the hold
    /// that ends first, to name it).
    AllHeld(Option<CircuitHold>),
}

/// The candidate a new route starts on: the first one its circuits let it
/// try (taking the probes of expired circuits); when every one is held,
/// the one whose hold ends first, once it ends (within `max_hold_wait`).
pub fn select(
    route_id: &str,
    profile: &Profile,
    circuits: &mut CircuitSet,
    max_hold_wait: Duration,
    now: DateTime<Utc>,
) -> Start {
    let holds: Vec<(usize, Hold)> = profile
        .candidates
        .iter()
        .enumerate()
        .map(|(i, c)| (i, circuits.hold(Resource::from(c), route_id, now)))
        .collect();
    if let Some((index, _)) = holds.iter().find(|(_, h)| h.is_free()) {
        circuits.dispatch(Resource::from(&profile.candidates[*index]), route_id, now);
        return Start::Now(*index);
    }
    match first_to_end(&holds) {
        // No candidates at all: the caller refuses the profile before this.
        None => Start::Now(0),
        Some((_, until, hold)) if until - now > max_hold_wait => {
            Start::AllHeld(held_by(hold, until))
        }
        Some((index, until, hold)) => Start::Held(
            index,
            HeldSwitch {
                until,
                hold: held_by(hold, until),
            },
        ),
    }
}
