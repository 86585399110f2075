//! What the current invocation did other than fail: an effect (counted,
//! or late — about an invocation whose failure was already being
//! recovered from), or success (a new cycle and a new invocation).

use super::view::outcome_of;
use crate::routes::machine::{self, Trigger};
use crate::routes::model::{AttemptDetail, Route};
use crate::store::{AttemptRow, Commit};
use chrono::{DateTime, Utc};
use domain::api::EffectReport;
use domain::route::{DecisionKind, RouteState, StopReason};

/// What an effect report does.
#[derive(Debug, Clone)]
pub enum EffectPlan {
    /// Nothing: about an invocation the route never recovered from
    /// automatically (or never saw).
    Nothing,
    /// An effect of the current invocation: counted (and its provider
    /// session kept for a resume).
    Counted(Box<Route>),
    /// A late effect: the invocation it belongs to had failed and its
    /// failure was already being recovered from automatically. Either the
    /// successor is not yet delivered — it is withdrawn and the route stops
    /// for a person — or it was, and the route records that the work may
    /// have run twice. Either way an attempt row says so.
    Late {
        route: Box<Route>,
        commit: Box<Commit>,
    },
}

/// The plan for `report`. `failed`: this route's attempt for the
/// invocation the report names, when there is one (the newest);
/// `successor_outstanding`: the route's next attempt is scheduled or
/// dispatched but not yet delivered (pending, or claimed and not
/// acknowledged).
pub fn effect(
    route: &Route,
    report: &EffectReport,
    failed: Option<&AttemptRow>,
    successor_outstanding: bool,
    now: DateTime<Utc>,
) -> EffectPlan {
    // An ended route records nothing more: its session is over.
    if route.state.is_terminal() {
        return EffectPlan::Nothing;
    }
    let current = report.invocation_id == route.invocation_id
        && report.prompt_generation == route.prompt_generation
        && report.generation == route.generation;
    if current {
        let mut next = route.clone();
        next.effects += 1;
        if let Some(s) = &report.provider_session_id {
            next.provider_session_id = Some(s.chars().take(200).collect());
        }
        return EffectPlan::Counted(Box::new(next));
    }
    // Only a failure that authorised automatic work can be undone by a
    // late effect; a stop or a rejection already waits for a person.
    let recovered = failed.filter(|a| {
        a.invocation_id == report.invocation_id
            && a.generation <= route.generation.get()
            && matches!(
                a.decision.parse(),
                Ok(DecisionKind::Retry | DecisionKind::WaitForReset | DecisionKind::Skip)
            )
    });
    let Some(failed) = recovered else {
        return EffectPlan::Nothing;
    };
    let mut next = route.clone();
    let stop = successor_outstanding
        .then(|| machine::next(route.state, Trigger::EffectAfterFailure))
        .flatten();
    if let Some(state) = stop {
        next.generation = next.generation.next();
        next.state = state;
        next.pending = None;
        next.reason = Some(StopReason::EffectAfterFailure);
    }
    let attempt = AttemptRow {
        route_id: route.id.to_string(),
        seq: 0,
        generation: route.generation.get(),
        cycle: route.cycle,
        decision: DecisionKind::LateEffect.to_string(),
        safe_excerpt: String::new(),
        http_status: None,
        policy: "null".into(),
        retry_ordinal: 0,
        deadline: None,
        outcome: outcome_of(&next).to_string(),
        created_at: now.timestamp_millis(),
        classification: None,
        detail: AttemptDetail {
            late_effect: Some(report.kind.to_string()),
            ..AttemptDetail::default()
        }
        .to_column(),
        ..failed.clone()
    };
    EffectPlan::Late {
        route: Box::new(next),
        commit: Box::new(Commit {
            attempt: Some(attempt),
            ..Commit::default()
        }),
    }
}

/// The route after its current invocation succeeded (the table allowed it,
/// to `state`): a new cycle begins, and the next prompt is a new invocation
/// (new id, prompt generation + 1) that this one's effects do not taint.
pub fn success(route: &Route, state: RouteState) -> Route {
    let mut next = route.clone();
    next.state = state;
    next.generation = next.generation.next();
    next.pending = None;
    next.reason = None;
    next.new_cycle();
    next.new_invocation();
    next.prompt_generation += 1;
    next
}
