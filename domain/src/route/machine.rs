//! The route state table of docs/design.md, and nothing else. Every transition the route
//! service commits is first checked here; a trigger the table does not allow
//! in the current state is refused.
//!
//! The table leaves three necessary steps implicit; they are spelled out here:
//! - `switching` ends when the caller acknowledges the switch dispatch
//!   (→ `active` on the new candidate). A failure reported for the switch's
//!   invocation before its acknowledgement proves delivery and is evaluated
//!   as from `active`.
//! - From `action_required`, `retry_now` (→ `retrying`, same candidate) and
//!   `skip_now` (→ `switching`) start a new route cycle; `cancel` and `stop`
//!   leave it as it is (idempotent).
//! - `retry_now` while waiting fires the pending attempt early (→ `retrying`).
//! - A `switching` route whose next candidate a shared circuit holds waits
//!   for the hold to end before its switch is dispatched: the deadline
//!   dispatches it and the route stays `switching` (the same row, its
//!   dispatch deferred).
//!
//! And it adds only stops for a person (→ `action_required`), which the
//! design (docs/design.md) allows from anywhere automatic work could go wrong:
//! - `stop` and `cancel` from every state but a stopped one (`active`,
//!   `retrying` and `switching` too): an outstanding dispatch is withdrawn.
//! - A dispatch nobody claimed within the deployment's dispatch timeout.
//! - An effect that arrives for an invocation whose failure was already
//!   being recovered from, while the successor is not yet delivered.
//!
//! Two triggers end a route from any state but an ended one: the caller's
//! session is over (`complete` → `completed`), or the caller or a person
//! gives the route up (`cancel` → `cancelled`). An ended route takes no
//! trigger at all; its outstanding schedules and dispatches end with it.
//!
//! Shared by the server, which commits only what [`next`] allows, and the
//! browser, which offers only the [`Action`]s [`valid_actions`] derives
//! from the same table.

use super::RouteState;

wire_names! {
    /// A manual route action, as `POST /routes/{id}/actions` names it.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum Action {
        RetryNow,
        SkipNow,
        Cancel,
        Stop,
    }
}

impl Action {
    /// The trigger this action is in the state table.
    pub fn trigger(self) -> Trigger {
        match self {
            Action::RetryNow => Trigger::RetryNow,
            Action::SkipNow => Trigger::SkipNow,
            Action::Cancel => Trigger::Cancel,
            Action::Stop => Trigger::Stop,
        }
    }
}

/// The actions worth offering in `state`: those the table allows and that
/// move the route. (`cancel` and `stop` of a stopped route are allowed,
/// being idempotent, but change nothing; `cancel` means cancelling a wait,
/// so only a waiting route offers it — elsewhere `stop` says the same.)
pub fn valid_actions(state: RouteState) -> Vec<Action> {
    Action::ALL
        .iter()
        .copied()
        .filter(|a| next(state, a.trigger()).is_some_and(|to| to != state))
        .filter(|a| *a != Action::Cancel || state.is_waiting())
        .collect()
}

/// What the route is asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// A current, classified, effect-safe failure and the decision it led to.
    Failure(Outcome),
    /// The pending deadline was reached with the generation still current.
    Deadline,
    RetryNow,
    SkipNow,
    Cancel,
    Stop,
    Success,
    /// The caller acknowledged delivery of a switch dispatch.
    SwitchAcknowledged,
    /// A claimed dispatch was not acknowledged before its lease ran out.
    AmbiguousDispatch,
    /// A dispatch was not claimed within the dispatch timeout.
    DispatchNotClaimed,
    /// Output or tool activity of the failed invocation arrived after its
    /// recovery was decided, before the successor was delivered.
    EffectAfterFailure,
    /// The caller's session is over (`POST /routes/{id}/complete`).
    Complete,
    /// The route is given up (`POST /routes/{id}/cancel`) — not the
    /// `cancel` action, which cancels a wait and stops for a person.
    CancelRoute,
}

/// Where a failure decision leads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    WaitForReset,
    Retry,
    /// Recovery exhausted with `skip` and another candidate is eligible.
    Switch,
    /// Recovery exhausted with `stop`, no eligible candidate, or the failure
    /// was unsafe, unclassified or not the provider's.
    ManualRecovery,
}

/// The next state, or `None` when the table does not allow the trigger.
pub fn next(state: RouteState, trigger: Trigger) -> Option<RouteState> {
    use RouteState::*;
    use Trigger::*;
    let failing = matches!(state, Active | Retrying | Switching);
    let waiting = matches!(state, WaitingForReset | RetryWait);
    let recovering = waiting || matches!(state, Retrying | Switching);
    if state.is_terminal() {
        return None;
    }
    Some(match (state, trigger) {
        (_, Complete) => Completed,
        (_, CancelRoute) => Cancelled,
        (_, Failure(o)) if failing => match o {
            Outcome::WaitForReset => WaitingForReset,
            Outcome::Retry => RetryWait,
            Outcome::Switch => Switching,
            Outcome::ManualRecovery => ActionRequired,
        },
        (_, Deadline) if waiting => Retrying,
        (_, RetryNow) if waiting => Retrying,
        (_, SkipNow) if waiting => Switching,
        (_, Cancel | Stop) if waiting || failing => ActionRequired,
        (Switching, Deadline) => Switching,
        (Retrying | Active | Switching, Success) => Active,
        (Switching, SwitchAcknowledged) => Active,
        (Retrying | Switching, AmbiguousDispatch | DispatchNotClaimed) => ActionRequired,
        (_, EffectAfterFailure) if recovering => ActionRequired,
        (ActionRequired, RetryNow) => Retrying,
        (ActionRequired, SkipNow) => Switching,
        (ActionRequired, Cancel | Stop) => ActionRequired,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use RouteState::*;

    /// Every row of docs/design.md's state table.
    #[test]
    fn spec_state_table() {
        let rows: &[(RouteState, Trigger, RouteState)] = &[
            (
                Active,
                Trigger::Failure(Outcome::WaitForReset),
                WaitingForReset,
            ),
            (Active, Trigger::Failure(Outcome::Retry), RetryWait),
            (Active, Trigger::Failure(Outcome::Switch), Switching),
            (
                Active,
                Trigger::Failure(Outcome::ManualRecovery),
                ActionRequired,
            ),
            (WaitingForReset, Trigger::Deadline, Retrying),
            (RetryWait, Trigger::Deadline, Retrying),
            (WaitingForReset, Trigger::SkipNow, Switching),
            (RetryWait, Trigger::SkipNow, Switching),
            (WaitingForReset, Trigger::Cancel, ActionRequired),
            (WaitingForReset, Trigger::Stop, ActionRequired),
            (RetryWait, Trigger::Cancel, ActionRequired),
            (RetryWait, Trigger::Stop, ActionRequired),
            (Retrying, Trigger::Success, Active),
            (
                Retrying,
                Trigger::Failure(Outcome::WaitForReset),
                WaitingForReset,
            ),
            (Retrying, Trigger::Failure(Outcome::Retry), RetryWait),
            (Retrying, Trigger::Failure(Outcome::Switch), Switching),
            (
                Retrying,
                Trigger::Failure(Outcome::ManualRecovery),
                ActionRequired,
            ),
        ];
        for (from, trigger, to) in rows {
            assert_eq!(next(*from, *trigger), Some(*to), "{from} + {trigger:?}");
        }
    }

    #[test]
    fn nothing_else_moves_a_waiting_or_finished_route() {
        for state in [WaitingForReset, RetryWait] {
            assert_eq!(next(state, Trigger::Failure(Outcome::Retry)), None);
            assert_eq!(next(state, Trigger::Success), None);
            assert_eq!(next(state, Trigger::SwitchAcknowledged), None);
        }
        for state in [Completed, Cancelled] {
            for t in [
                Trigger::Deadline,
                Trigger::RetryNow,
                Trigger::SkipNow,
                Trigger::Cancel,
                Trigger::Success,
            ] {
                assert_eq!(next(state, t), None);
            }
        }
        assert_eq!(next(Active, Trigger::Deadline), None);
        assert_eq!(next(Retrying, Trigger::SkipNow), None);
        assert_eq!(next(Active, Trigger::DispatchNotClaimed), None);
        assert_eq!(next(Active, Trigger::EffectAfterFailure), None);
        assert_eq!(next(ActionRequired, Trigger::EffectAfterFailure), None);
    }

    #[test]
    fn every_state_but_a_stopped_one_can_be_stopped_for_a_person() {
        for state in [Active, RetryWait, WaitingForReset, Retrying, Switching] {
            for t in [Trigger::Cancel, Trigger::Stop] {
                assert_eq!(next(state, t), Some(ActionRequired), "{state} + {t:?}");
            }
        }
        for state in [Retrying, Switching] {
            assert_eq!(
                next(state, Trigger::DispatchNotClaimed),
                Some(ActionRequired)
            );
        }
        for state in [RetryWait, WaitingForReset, Retrying, Switching] {
            assert_eq!(
                next(state, Trigger::EffectAfterFailure),
                Some(ActionRequired)
            );
        }
        // A held switch fires into the same row.
        assert_eq!(next(Switching, Trigger::Deadline), Some(Switching));
    }

    #[test]
    fn every_open_route_can_end_and_an_ended_one_takes_nothing() {
        let open = [
            Active,
            RetryWait,
            WaitingForReset,
            Retrying,
            Switching,
            ActionRequired,
        ];
        for state in open {
            assert_eq!(next(state, Trigger::Complete), Some(Completed), "{state}");
            assert_eq!(
                next(state, Trigger::CancelRoute),
                Some(Cancelled),
                "{state}"
            );
        }
        for state in [Completed, Cancelled] {
            assert!(state.is_terminal());
            for t in [
                Trigger::Complete,
                Trigger::CancelRoute,
                Trigger::Stop,
                Trigger::Failure(Outcome::ManualRecovery),
                Trigger::AmbiguousDispatch,
                Trigger::DispatchNotClaimed,
                Trigger::EffectAfterFailure,
                Trigger::SwitchAcknowledged,
            ] {
                assert_eq!(next(state, t), None, "{state} + {t:?}");
            }
        }
        assert!(open.iter().all(|s| !s.is_terminal()));
    }

    #[test]
    fn manual_recovery_can_start_a_new_cycle_and_stays_put_otherwise() {
        assert_eq!(next(ActionRequired, Trigger::RetryNow), Some(Retrying));
        assert_eq!(next(ActionRequired, Trigger::SkipNow), Some(Switching));
        assert_eq!(next(ActionRequired, Trigger::Cancel), Some(ActionRequired));
        assert_eq!(next(ActionRequired, Trigger::Failure(Outcome::Retry)), None);
    }

    #[test]
    fn actions_follow_the_state_table() {
        use Action::*;
        for s in [RouteState::RetryWait, RouteState::WaitingForReset] {
            assert_eq!(valid_actions(s), &[RetryNow, SkipNow, Cancel, Stop]);
        }
        assert_eq!(
            valid_actions(RouteState::ActionRequired),
            &[RetryNow, SkipNow]
        );
        for s in [
            RouteState::Active,
            RouteState::Retrying,
            RouteState::Switching,
        ] {
            assert_eq!(valid_actions(s), &[Stop], "{s}");
        }
        for s in [RouteState::Completed, RouteState::Cancelled] {
            assert!(valid_actions(s).is_empty(), "{s}");
        }
    }

    #[test]
    fn action_names_agree_with_serde() {
        crate::route::decision::tests::names_agree::<Action>();
    }
}
