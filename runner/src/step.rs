//! The runner's next step, read from the route the service answered with —
//! the runner follows decisions, it never makes them — and its one line per
//! failure answer (the words themselves are `domain::words`'). Pure: no I/O,
//! no clock.

use domain::api::FailureAnswer;
use domain::route::{RouteSnapshot, RouteState};
use domain::words::{cause, decision_next, safe_cause};

/// What the runner does next for a route in this state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Deliver the route's current invocation to its current candidate.
    Deliver,
    /// The backend owns a timer or a dispatch: wait for the dispatch.
    AwaitDispatch,
    /// Automatic recovery stopped; a person decides.
    Stopped,
    /// Nothing more happens on this route.
    Finished,
}

pub fn step(route: &RouteSnapshot) -> Step {
    match route.state {
        RouteState::Active => Step::Deliver,
        RouteState::RetryWait
        | RouteState::WaitingForReset
        | RouteState::Retrying
        | RouteState::Switching => Step::AwaitDispatch,
        RouteState::ActionRequired => Step::Stopped,
        RouteState::Completed | RouteState::Cancelled => Step::Finished,
    }
}

/// One line for a failure answer: the cause, the rule that decided, and
/// where the route goes.
pub fn decision_line(reply: &FailureAnswer) -> String {
    let c = &reply.classification;
    let route = &reply.route;
    let cause = cause(route).unwrap_or_else(|| safe_cause(&c.code));
    let d = &reply.decision;
    let next = decision_next(d.kind, d.retry_ordinal, d.max_retries, route);
    format!(
        "{cause} [{} {} · rule {}] → {next}",
        c.class, c.code, c.classifier_rule
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::ids::Generation;
    use domain::policy::{ErrorClass, OnExhausted};
    use domain::route::{
        Caller, CallerKind, CandidateRef, LastFailure, Pending, PendingKind, StopReason,
    };
    use domain::words::{awaited, stopped_words};

    fn route(state: RouteState) -> RouteSnapshot {
        let now = chrono::Utc::now();
        RouteSnapshot {
            id: "r_1".into(),
            profile_id: "p_1".into(),
            caller: Caller {
                kind: CallerKind::Utility,
                reference: "cli".into(),
            },
            state,
            generation: Generation(2),
            cycle: 1,
            candidate: CandidateRef {
                index: 0,
                id: "c_1".into(),
                label: "Claude".into(),
            },
            invocation_id: "i_1".into(),
            prompt_generation: 1,
            pending: None,
            last_failure: Some(LastFailure {
                code: "provider_overloaded".into(),
                class: ErrorClass::Transient,
                safe_cause: "Provider overloaded".into(),
                http_status: Some(529),
                unsafe_reason: None,
                held_by: None,
            }),
            reason: None,
            excluded: vec![],
            updated_at: now,
            server_time: now,
        }
    }

    #[test]
    fn every_state_has_a_step() {
        use RouteState::*;
        let expect = [
            (Active, Step::Deliver),
            (RetryWait, Step::AwaitDispatch),
            (WaitingForReset, Step::AwaitDispatch),
            (Retrying, Step::AwaitDispatch),
            (Switching, Step::AwaitDispatch),
            (ActionRequired, Step::Stopped),
            (Completed, Step::Finished),
            (Cancelled, Step::Finished),
        ];
        for (state, s) in expect {
            assert_eq!(step(&route(state)), s, "{state}");
        }
        assert_eq!(RouteState::ALL.len(), expect.len());
    }

    #[test]
    fn waits_say_what_they_wait_for() {
        let mut r = route(RouteState::RetryWait);
        r.pending = Some(Pending {
            kind: PendingKind::Retry,
            deadline: chrono::Utc::now(),
            retry_ordinal: 2,
            max_retries: 3,
            outcome_after: OnExhausted::Skip,
            code: "provider_overloaded".into(),
            class: ErrorClass::Transient,
            circuit: None,
            resume: None,
        });
        assert_eq!(
            awaited(&r),
            "retry 2 of 3 of Claude after Provider overloaded (529)"
        );
        let mut stopped = route(RouteState::ActionRequired);
        stopped.reason = Some(StopReason::Unclassified);
        let lines = stopped_words(&stopped, "http://x/routes/r_1");
        assert!(lines[0].contains("not recognised"), "{lines:?}");
        assert!(lines.last().expect("hint").contains("http://x/routes/r_1"));
    }
}
