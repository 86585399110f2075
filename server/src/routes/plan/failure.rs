//! A current, accepted failure: [`decide`] records it in the circuits and
//! lets the candidate's policy decide, [`failure`] turns the decision into
//! the next route, its attempt row and the schedule or dispatch it needs;
//! [`stale`] answers a failure that changes nothing.

use super::candidates::{switch, Switch};
use super::view::{decision_view, outcome_of};
use super::waits::{held_by, pending, schedule};
use crate::circuits::{self, CircuitSet, Hold, Resource};
use crate::recovery::{evaluate, Decision, Failure, GateVerdict, Rejection, Usage};
use crate::routes::machine::{self, Outcome, Trigger};
use crate::routes::model::{AttemptDetail, Memory, Route};
use crate::store::{AttemptRow, Commit};
use chrono::{DateTime, Duration, Utc};
use classify::Classification;
use domain::api::DecisionView;
use domain::policy::{CandidatePolicy, PolicyClass};
use domain::profile::Profile;
use domain::route::{LastFailure, PendingKind, Resume, RouteOutcome, RouteState, StopReason};
use domain::words::safe_cause;

/// What [`decide`] answers: the decision, the candidate's policy it was
/// made under (`None` when the profile no longer has the candidate or
/// cannot authorise work), and the hold of the candidate's circuits after
/// this failure.
pub struct Decided {
    pub decision: Decision,
    /// The gate's verdict the decision was made under (it says why a
    /// failure was unsafe, and whether the successor resumes).
    pub gate: GateVerdict,
    pub policy: Option<CandidatePolicy>,
    pub hold: Hold,
}

/// The decision for a failure of the route's current candidate; records
/// the failure in `circuits` first, so the candidate's own hold counts.
pub fn decide(
    route: &Route,
    gate: GateVerdict,
    classification: &Classification,
    profile: Option<&Profile>,
    circuits: &mut CircuitSet,
    now: DateTime<Utc>,
) -> Decided {
    let candidate = profile
        .filter(|p| p.configuration_error.is_none())
        .and_then(|p| p.candidates.iter().find(|c| c.id == route.candidate.id));
    let failure = Failure {
        class: classification.class,
        confidence: classification.confidence,
        reset_at: classification.reset_at,
    };
    let Some(candidate) = candidate else {
        // The policy order (docs/design.md) rejects unclassified, not-the-provider's and
        // effect-unsafe failures before any policy is read, so a lost
        // candidate only changes what a provider failure does: it
        // authorises nothing (stop).
        let any_policy = CandidatePolicy::default();
        // Only the rejections are read here; the placeholder policy's
        // skip must not turn a resumable failure into an unsafe one.
        let rejecting = match gate {
            GateVerdict::Resumable => GateVerdict::Current,
            other => other,
        };
        let decision = match evaluate(
            rejecting,
            &failure,
            &any_policy,
            Usage::default(),
            None,
            now,
        ) {
            rejected @ Decision::Rejected(_) => rejected,
            _ => Decision::Stop {
                class: PolicyClass::Transient,
                by_hold: false,
            },
        };
        return Decided {
            decision,
            gate,
            policy: None,
            hold: Hold::Free { probes: vec![] },
        };
    };
    let resource = Resource::from(candidate);
    circuits.fail(
        resource,
        classification.scope,
        &classification.code,
        &circuits::FailureFacts {
            class: failure.class,
            confidence: failure.confidence,
            reset_at: failure.reset_at,
        },
        route.id.as_str(),
        now,
    );
    let hold = circuits.hold(resource, route.id.as_str(), now);
    let usage = failure
        .class
        .policy_class()
        .map(|pc| route.memory.usage(&route.candidate.id, pc))
        .unwrap_or_default();
    Decided {
        decision: evaluate(gate, &failure, &candidate.policy, usage, hold.until(), now),
        gate,
        policy: Some(candidate.policy),
        hold,
    }
}

/// What a failure report commits.
#[derive(Debug, Clone)]
pub struct FailurePlan {
    /// The route after the failure (generation already advanced).
    pub route: Route,
    /// The attempt row, and the schedule or dispatch the decision needs.
    pub commit: Commit,
    /// The decision as the API answers it.
    pub decision: DecisionView,
}

/// The facts a failure is planned from.
pub struct FailureFacts<'a> {
    /// The route as loaded; its state accepts failures.
    pub route: &'a Route,
    /// What [`decide`] answered.
    pub decided: Decided,
    /// The circuits [`decide`] recorded the failure in; a switch takes the
    /// probes of the candidate it moves to.
    pub circuits: &'a mut CircuitSet,
    pub classification: &'a Classification,
    /// The evidence's first HTTP error status.
    pub http_status: Option<u16>,
    /// The profile, when it could be read (a skip switches within it).
    pub profile: Option<&'a Profile>,
    /// How long a switch may wait for a held candidate's circuit.
    pub max_hold_wait: Duration,
    /// The provider session and turn the report says a retry can resume
    /// (used when the gate found the failure resumable).
    pub resume: Option<Resume>,
    pub now: DateTime<Utc>,
}

/// The change a current, accepted failure makes.
pub fn failure(f: FailureFacts<'_>) -> FailurePlan {
    let FailureFacts {
        route,
        decided:
            Decided {
                decision,
                gate,
                policy,
                hold,
            },
        circuits,
        classification,
        http_status,
        profile,
        max_hold_wait,
        resume,
        now,
    } = f;
    // Only a resumable failure's same-candidate attempt resumes.
    let resume = resume.filter(|_| gate == GateVerdict::Resumable);
    let mut next = route.clone();
    next.generation = next.generation.next();
    let unsafe_reason = crate::recovery::unsafe_reason(gate, &decision);
    // The hold that outlasted the policy's bound, when it decided.
    let held_by_hold = decision
        .by_hold()
        .then(|| hold.until().and_then(|until| held_by(&hold, until)))
        .flatten();
    next.last_failure = Some(LastFailure {
        code: classification.code.clone(),
        class: classification.class,
        safe_cause: safe_cause(&classification.code),
        http_status,
        unsafe_reason,
        held_by: held_by_hold.clone(),
    });
    let mut commit = Commit::default();
    let class_policy = |class: PolicyClass| policy.map(|p| *p.class(class));
    let outcome = match decision {
        Decision::Rejected(r) => {
            next.reason = Some(r.into());
            Outcome::ManualRecovery
        }
        Decision::WaitForReset { class, deadline } => {
            next.memory
                .reset_used
                .push(Memory::key(&route.candidate.id, class));
            let p = class_policy(class).unwrap_or_default();
            let kind = PendingKind::ResetWait;
            let held = held_by(&hold, deadline);
            next.pending = Some(pending(
                kind,
                deadline,
                0,
                &p,
                &classification.code,
                classification.class,
                held.clone(),
            ));
            set_resume(&mut next, resume.clone());
            commit.schedule = Some(schedule(&next, kind, deadline, held.as_ref(), now));
            Outcome::WaitForReset
        }
        Decision::Retry {
            class,
            ordinal,
            deadline,
            ..
        } => {
            next.memory
                .retries
                .insert(Memory::key(&route.candidate.id, class), ordinal);
            let p = class_policy(class).unwrap_or_default();
            let kind = PendingKind::Retry;
            let held = held_by(&hold, deadline);
            next.pending = Some(pending(
                kind,
                deadline,
                ordinal,
                &p,
                &classification.code,
                classification.class,
                held.clone(),
            ));
            set_resume(&mut next, resume.clone());
            commit.schedule = Some(schedule(&next, kind, deadline, held.as_ref(), now));
            Outcome::Retry
        }
        Decision::Skip { class, .. } => {
            let switched = profile.map(|p| switch(&mut next, p, circuits, max_hold_wait, now));
            // What follows a failure of the candidate switched to is its
            // own policy for this class.
            let p = profile
                .and_then(|p| p.candidates.get(next.candidate.index))
                .map(|c| *c.policy.class(class))
                .unwrap_or_default();
            match switched.unwrap_or(Switch::NoneLeft) {
                Switch::Now(d) => {
                    commit.dispatch = Some(*d);
                    Outcome::Switch
                }
                Switch::Held(wait) => {
                    commit.schedule = Some(wait.apply(
                        &mut next,
                        &p,
                        &classification.code,
                        classification.class,
                        now,
                    ));
                    Outcome::Switch
                }
                Switch::NoneLeft => {
                    next.reason = Some(StopReason::NoEligibleCandidate);
                    Outcome::ManualRecovery
                }
                Switch::AllHeld(first) => {
                    next.reason = Some(StopReason::AllCandidatesHeld);
                    if let Some(f) = next.last_failure.as_mut() {
                        f.held_by = first;
                    }
                    Outcome::ManualRecovery
                }
            }
        }
        Decision::Stop { .. } => {
            // Without a policy the profile could not authorise the work;
            // a person must be told whether to restore the candidate or
            // repair the stored document.
            let misconfigured = profile.is_some_and(|p| p.configuration_error.is_some());
            next.reason = Some(match policy {
                Some(_) => StopReason::StoppedByPolicy,
                None if misconfigured => StopReason::ProfileMisconfigured,
                None => StopReason::ProfileChanged,
            });
            Outcome::ManualRecovery
        }
    };
    next.state = machine::next(route.state, Trigger::Failure(outcome))
        .expect("failing states accept failures");
    if commit.schedule.is_none() {
        next.pending = None;
    }
    if next.state != RouteState::ActionRequired {
        next.reason = None;
    }
    let mut view = decision_view(&decision);
    view.outcome = outcome_of(&next);
    view.unsafe_reason = unsafe_reason;
    view.held_by = held_by_hold.clone();
    let detail = AttemptDetail {
        unsafe_reason,
        held_by: held_by_hold,
        late_effect: None,
        returned: None,
    };
    commit.attempt = Some(AttemptRow {
        route_id: route.id.to_string(),
        seq: 0,
        generation: route.generation.get(),
        cycle: route.cycle,
        candidate_index: route.candidate.index as i64,
        candidate_id: route.candidate.id.clone(),
        candidate_label: route.candidate.label.clone(),
        invocation_id: route.invocation_id.clone(),
        code: classification.code.clone(),
        class: classification.class.to_string(),
        catalogue_version: classification.catalogue_version.clone(),
        classifier_rule: classification.classifier_rule.clone(),
        safe_excerpt: classification.safe_excerpt.clone(),
        http_status: http_status.map(i64::from),
        policy: classification
            .class
            .policy_class()
            .and_then(class_policy)
            .map(|p| serde_json::to_string(&p).expect("policies serialise"))
            .unwrap_or_else(|| "null".into()),
        decision: view.kind.to_string(),
        retry_ordinal: view.retry_ordinal.unwrap_or(0) as i64,
        deadline: view.deadline.map(|d| d.timestamp_millis()),
        outcome: view.outcome.to_string(),
        created_at: now.timestamp_millis(),
        classification: Some(
            serde_json::to_string(classification).expect("classifications serialise"),
        ),
        detail: detail.to_column(),
    });
    FailurePlan {
        route: next,
        commit,
        decision: view,
    }
}

/// The pending attempt resumes `resume`'s session (see [`Resume`]).
fn set_resume(route: &mut Route, resume: Option<Resume>) {
    if let Some(p) = route.pending.as_mut() {
        p.resume = resume;
    }
}

/// The answer to a failure about an attempt the route has left (or one
/// its state does not take): nothing changes.
pub fn stale(route: &Route) -> DecisionView {
    let mut view = decision_view(&Decision::Rejected(Rejection::Stale));
    view.outcome = RouteOutcome::Unchanged {
        generation: route.generation,
        state: route.state,
    };
    view
}
