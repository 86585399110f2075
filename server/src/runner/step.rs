//! The runner's next step, read from the route the service answered with —
//! the runner follows decisions, it never makes them — and the words it
//! prints for them. Pure: no I/O, no clock.

use super::client::FailureReply;
use app::route::{DecisionKind, PendingKind, RouteSnapshot, RouteState};
use app::words::{cause, reason_words, safe_cause};

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

/// What a waiting route waits for: "retry 2 of 3 of Claude Code (Sonnet)
/// after Provider overloaded (529)".
pub fn awaited(route: &RouteSnapshot) -> String {
    let after = cause(route)
        .map(|c| format!(" after {c}"))
        .unwrap_or_default();
    let who = &route.candidate.label;
    match (route.state, &route.pending) {
        (RouteState::RetryWait, Some(p)) if p.kind == PendingKind::Retry => format!(
            "retry {} of {} of {who}{after}",
            p.retry_ordinal, p.max_retries
        ),
        (RouteState::WaitingForReset, _) | (_, Some(_)) => {
            format!("{who}'s provider reset{after}, then one more try")
        }
        (RouteState::Switching, _) => format!("the switch to {who}{after}"),
        (RouteState::Retrying, _) => format!("the retry of {who} to be handed out"),
        _ => who.to_string(),
    }
}

/// One line for a failure answer: the cause, the rule that decided, and
/// where the route goes.
pub fn decision_line(reply: &FailureReply) -> String {
    let c = &reply.classification;
    let route = &reply.route;
    let cause = cause(route).unwrap_or_else(|| safe_cause(&c.code));
    let next = match reply.decision.kind {
        DecisionKind::Retry => format!(
            "retry {} of {}",
            reply.decision.retry_ordinal.unwrap_or(0),
            reply.decision.max_retries.unwrap_or(0)
        ),
        DecisionKind::WaitForReset => "wait for the provider's reset, then try once more".into(),
        DecisionKind::Skip => match route.state {
            RouteState::Switching => format!("skip to {}", route.candidate.label),
            _ => "skip, but no other candidate is left".into(),
        },
        DecisionKind::Stop => "stop for a person (the candidate's policy)".into(),
        DecisionKind::Stale => "ignored: the report was about an earlier attempt".into(),
        DecisionKind::Unclassified => "stop: the error was not recognised".into(),
        DecisionKind::NotProvider => "stop: not the provider's error".into(),
        DecisionKind::EffectUnsafe => {
            "stop: the agent already produced output or used tools".into()
        }
    };
    format!(
        "{cause} [{} {} · rule {}] → {next}",
        c.class, c.code, c.classifier_rule
    )
}

/// Why the route stopped, and what a person can do.
pub fn stopped_words(route: &RouteSnapshot, page: &str) -> Vec<String> {
    let reason = route
        .reason
        .as_ref()
        .map(reason_words)
        .unwrap_or_else(|| "Automatic recovery stopped.".into());
    let mut lines = vec![format!(
        "stopped for a person on {}: {reason}",
        route.candidate.label
    )];
    if let Some(c) = cause(route) {
        lines.push(format!("last error: {c}"));
    }
    lines.push(format!(
        "open {page} to retry the same candidate, skip to the next one, or leave it stopped"
    ));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::policy::{ErrorClass, OnExhausted};
    use app::route::{Caller, CallerKind, CandidateRef, LastFailure, Pending, StopReason};

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
            generation: 2,
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
