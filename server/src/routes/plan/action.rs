//! A person's manual action (retry now, skip now, cancel, stop), once the
//! state table allowed it.

use super::candidates::{switch, Switch};
use crate::circuits::CircuitSet;
use crate::routes::error::RouteError;
use crate::routes::model::Route;
use crate::store::Commit;
use chrono::{DateTime, Duration, Utc};
use domain::profile::Profile;
use domain::route::{Action, DispatchReason, RouteState, StopReason};

/// Whether a manual `action` on `route` reads the profile: a skip always
/// (it picks the next candidate), a retry when it restarts a stopped route
/// (its candidate may have changed).
pub fn action_needs_profile(route: &Route, action: Action) -> bool {
    match action {
        Action::SkipNow => true,
        Action::RetryNow => route.state == RouteState::ActionRequired,
        Action::Cancel | Action::Stop => false,
    }
}

/// The change a manual action makes, once the state table allowed it (the
/// route moves to `state`) and its generation was the route's. `profile`
/// is there when [`action_needs_profile`] says so. From a stopped route,
/// retry and skip start a new route cycle.
pub fn action(
    route: &Route,
    action: Action,
    state: RouteState,
    profile: Option<&Profile>,
    circuits: &mut CircuitSet,
    max_hold_wait: Duration,
    now: DateTime<Utc>,
) -> Result<(Route, Commit), RouteError> {
    let mut next = route.clone();
    next.generation = next.generation.next();
    next.pending = None;
    next.reason = None;
    next.state = state;
    let mut commit = Commit::default();
    let restarting = route.state == RouteState::ActionRequired;
    let unusable = || RouteError::ProfileUnusable("no candidates".into());
    match action {
        Action::RetryNow => {
            if restarting {
                next.new_cycle();
                let profile = profile.ok_or_else(unusable)?;
                let index = profile
                    .candidates
                    .iter()
                    .position(|c| c.id == route.candidate.id)
                    .unwrap_or(0);
                let candidate = profile.candidates.get(index).ok_or_else(unusable)?;
                next.move_to(index, candidate);
            } else {
                next.new_invocation();
            }
            let reason = DispatchReason::after(route.pending.as_ref().map(|p| p.kind));
            // A retry now of a resumable wait resumes too; a restart from
            // a stop is a person's fresh start.
            let resume = route.pending.as_ref().and_then(|p| p.resume.as_ref());
            commit.dispatch = Some(next.dispatch(reason, now).resuming(resume));
        }
        Action::SkipNow => {
            if restarting {
                next.new_cycle();
            }
            let switched = profile.map(|p| switch(&mut next, p, circuits, max_hold_wait, now));
            match switched.unwrap_or(Switch::NoneLeft) {
                Switch::Now(d) => commit.dispatch = Some(*d),
                Switch::Held(wait) => {
                    // What follows a failure there is that candidate's
                    // policy for the class that failed last.
                    let (code, class) = route
                        .last_failure
                        .as_ref()
                        .map(|f| (f.code.clone(), f.class))
                        .unwrap_or_else(|| (String::new(), domain::policy::ErrorClass::Transient));
                    let p = profile
                        .and_then(|p| p.candidates.get(next.candidate.index))
                        .and_then(|c| class.policy_class().map(|pc| *c.policy.class(pc)))
                        .unwrap_or_default();
                    commit.schedule = Some(wait.apply(&mut next, &p, &code, class, now));
                }
                Switch::NoneLeft => {
                    next.state = RouteState::ActionRequired;
                    next.reason = Some(StopReason::NoEligibleCandidate);
                }
                Switch::AllHeld(first) => {
                    next.state = RouteState::ActionRequired;
                    next.reason = Some(StopReason::AllCandidatesHeld);
                    if let Some(f) = next.last_failure.as_mut() {
                        f.held_by = first;
                    }
                }
            }
        }
        Action::Cancel => next.reason = Some(StopReason::CancelledByUser),
        Action::Stop => next.reason = Some(StopReason::StoppedByUser),
    }
    Ok((next, commit))
}
