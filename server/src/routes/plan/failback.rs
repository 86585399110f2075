//! Failback: after a success, the route's next invocation goes back to the
//! highest candidate in the profile's order that is eligible now, when the
//! profile prefers `first_eligible`. Only a success starts an invocation no
//! prompt has reached yet, so this is the one moment a route may move
//! without moving a prompt mid-invocation. A success also starts a new
//! route cycle, so nothing is excluded; eligibility is the shared circuits'
//! — a candidate held by one stays passed over, an expired one is probed
//! by the first route to return (the others wait for its outcome), and
//! once a probe closed it the routes return a few at a time
//! ([`crate::circuits::pace_return`]).

use super::view::outcome_of;
use crate::circuits::{CircuitSet, Resource};
use crate::routes::model::{AttemptDetail, Route};
use crate::store::AttemptRow;
use chrono::{DateTime, Utc};
use domain::profile::{Prefer, Profile};
use domain::route::{DecisionKind, Returned};

/// Moves `route` (as a success left it: a new cycle and a new, undelivered
/// invocation) back to the first candidate above it that is eligible now;
/// answers the attempt row that records the return, or `None` when it
/// stays.
pub fn failback(
    route: &mut Route,
    profile: &Profile,
    circuits: &mut CircuitSet,
    now: DateTime<Utc>,
) -> Option<AttemptRow> {
    if profile.prefer != Prefer::FirstEligible || profile.configuration_error.is_some() {
        return None;
    }
    let current = profile
        .candidates
        .iter()
        .position(|c| c.id == route.candidate.id)
        .unwrap_or(profile.candidates.len());
    let (index, candidate, cause) =
        profile.candidates[..current]
            .iter()
            .enumerate()
            .find_map(|(i, c)| {
                circuits
                    .take_return(Resource::from(c), route.id.as_str(), now)
                    .map(|cause| (i, c, cause))
            })?;
    let from = route.candidate.clone();
    route.move_to(index, candidate);
    let (code, since) = cause.unzip();
    let detail = AttemptDetail {
        returned: Some(Returned {
            from,
            code: code.clone(),
            since,
        }),
        ..AttemptDetail::default()
    };
    Some(AttemptRow {
        route_id: route.id.to_string(),
        seq: 0,
        generation: route.generation.get(),
        cycle: route.cycle,
        candidate_index: index as i64,
        candidate_id: candidate.id.clone(),
        candidate_label: candidate.label.clone(),
        invocation_id: route.invocation_id.clone(),
        code: code.clone().unwrap_or_default(),
        class: code
            .as_deref()
            .and_then(domain::policy::class::builtin_class_of)
            .unwrap_or(domain::policy::ErrorClass::Unclassified)
            .to_string(),
        catalogue_version: String::new(),
        classifier_rule: String::new(),
        safe_excerpt: String::new(),
        http_status: None,
        policy: "null".into(),
        decision: DecisionKind::Returned.to_string(),
        retry_ordinal: 0,
        deadline: None,
        outcome: outcome_of(route).to_string(),
        created_at: now.timestamp_millis(),
        classification: None,
        detail: detail.to_column(),
    })
}
