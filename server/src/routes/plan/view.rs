//! A plan in the API's words: the decision as it is answered and where
//! the route went.

use crate::recovery::Decision;
use crate::routes::model::Route;
use domain::api::DecisionView;
use domain::route::{RouteOutcome, RouteState};

/// A decision as the API answers it (its outcome set by the caller, once
/// the route's next state is known).
pub(super) fn decision_view(d: &Decision) -> DecisionView {
    let mut v = DecisionView {
        kind: d.kind(),
        class: d.class(),
        retry_ordinal: None,
        max_retries: None,
        delay_seconds: None,
        deadline: None,
        // Set once the route's next state is known.
        outcome: RouteOutcome::In {
            state: RouteState::Active,
        },
        unsafe_reason: None,
        held_by: None,
    };
    match *d {
        Decision::WaitForReset { deadline, .. } => v.deadline = Some(deadline),
        Decision::Retry {
            ordinal,
            max_retries,
            delay_seconds,
            deadline,
            ..
        } => {
            v.retry_ordinal = Some(ordinal);
            v.max_retries = Some(max_retries);
            v.delay_seconds = Some(delay_seconds);
            v.deadline = Some(deadline);
        }
        Decision::Skip { .. } | Decision::Stop { .. } | Decision::Rejected(_) => {}
    }
    v
}

/// Where the route went.
pub(super) fn outcome_of(route: &Route) -> RouteOutcome {
    match (route.state, &route.reason, &route.pending) {
        (RouteState::ActionRequired, Some(reason), _) => RouteOutcome::Stopped {
            reason: reason.clone(),
        },
        (RouteState::Switching, _, _) => RouteOutcome::Switching {
            to: route.candidate.label.clone(),
        },
        (state, _, Some(p)) => RouteOutcome::Waiting {
            state,
            until: p.deadline,
        },
        (state, _, _) => RouteOutcome::In { state },
    }
}
