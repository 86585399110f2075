//! The route planner: pure functions from a route, what was reported (the
//! classified failure and its decision, an effect, a success, a manual
//! action) and the profile to the change the service commits. No I/O and
//! no clock (`now` is an input); the service loads, calls these and
//! commits what they return — the shape of [`crate::recovery::evaluate`].
//!
//! Order, for a current failure the state table accepts:
//! 1. [`decide`]: the failure opens, extends or reopens the circuit its
//!    scope names (a shared resource, [`crate::circuits`]); then the
//!    failing candidate's policy decides ([`evaluate`]), with the hold of
//!    its circuits as an input; a profile that lost the candidate, or
//!    cannot be read, authorises nothing (stop).
//! 2. [`failure`]: the decision becomes the next route — a reset wait or a
//!    retry arms a schedule and uses up this cycle's budget, a skip
//!    excludes the candidate and dispatches the next eligible one (or stops
//!    when none is left), a stop or a rejection stops with its reason — plus
//!    the append-only attempt row and the decision as the API reports it.
//!    A wait that a circuit moved names the circuit, in the pending
//!    schedule (so people see why) and the schedule row (so the circuit's
//!    waiters can be counted and released). Candidates held by a circuit
//!    are passed over when switching, without being excluded.
//!
//! And for the other moments a route reaches a resource:
//! - [`select`]: a new route starts on the first candidate its circuits let
//!   it try.
//! - [`deadline`]: a due schedule dispatches when the candidate's circuits
//!   let it (taking the probe of an expired one); otherwise the wait moves
//!   to the circuit's deadline or its probe's outcome, and the route stays
//!   where it is.
//! - [`rearm`]: a circuit's waiter gets a new deadline after the probe's
//!   outcome (released a few at a time, or held until the circuit reopens'
//!   end).
//!
//! Effect reports ([`effect`]), success ([`success`]) and manual actions
//! the state table allowed ([`action`]) are planned the same way.

use super::error::RouteError;
use super::machine::{self, Outcome, Trigger};
use super::model::{new_id, AttemptDetail, Memory, Route};
use super::wire::{DecisionView, EffectReport};
use crate::circuits::{self, CircuitSet, Hold, Resource};
use crate::recovery::{evaluate, Decision, Failure, GateVerdict, Rejection, Usage};
use crate::store::{AttemptRow, Commit, DispatchRow, ScheduleRow};
use chrono::{DateTime, Duration, Utc};
use classify::Classification;
use domain::circuit::CircuitHold;
use domain::policy::{CandidatePolicy, ClassPolicy, PolicyClass};
use domain::profile::{Candidate, Profile};
use domain::route::{
    event_kind, Action, DecisionKind, DispatchReason, LastFailure, Pending, PendingKind, Resume,
    RouteOutcome, RouteState, ScheduleState, StopReason,
};
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
            late_effect: Some(report.kind.clone()),
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

/// What a due schedule does.
#[derive(Debug, Clone)]
pub struct DeadlinePlan {
    pub route: Route,
    pub commit: Commit,
    /// `route.fired` (dispatched) or `route.held` (the wait moved).
    pub event: &'static str,
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
            event: event_kind::HELD,
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
        event: event_kind::FIRED,
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

fn pending(
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

fn decision_view(d: &Decision) -> DecisionView {
    let mut v = DecisionView {
        kind: d.kind(),
        class: d.class(),
        retry_ordinal: None,
        max_retries: None,
        delay_seconds: None,
        deadline: None,
        // Set once the route's next state is known.
        outcome: RouteOutcome::In(RouteState::Active),
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
fn outcome_of(route: &Route) -> RouteOutcome {
    match (route.state, &route.reason, &route.pending) {
        (RouteState::ActionRequired, Some(reason), _) => RouteOutcome::Stopped(reason.clone()),
        (RouteState::Switching, _, _) => RouteOutcome::Switching {
            to: route.candidate.label.clone(),
        },
        (state, _, Some(p)) => RouteOutcome::Waiting {
            state,
            until: p.deadline,
        },
        (state, _, _) => RouteOutcome::In(state),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use classify::Confidence;
    use domain::ids::Generation;
    use domain::policy::{ErrorClass, OnExhausted, RetryPolicy, WaitForReset};
    use domain::profile::Candidate;
    use domain::route::{Caller, CallerKind, DecisionKind};

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn now() -> DateTime<Utc> {
        t("2026-11-30T12:00:00Z")
    }

    const HOLD_WAIT: Duration = Duration::minutes(15);

    fn class_policy(retries: u32, wait: u32, on_exhausted: OnExhausted) -> ClassPolicy {
        ClassPolicy {
            retry: RetryPolicy {
                enabled: retries > 0,
                max_retries: retries,
                initial_interval_seconds: if retries > 0 { 5 } else { 0 },
            },
            wait_for_reset: WaitForReset {
                enabled: wait > 0,
                max_wait_seconds: wait,
            },
            on_exhausted,
        }
    }

    fn candidate(id: &str, label: &str, p: ClassPolicy) -> Candidate {
        Candidate {
            id: id.into(),
            label: label.into(),
            agent: "claude-code".into(),
            provider_id: String::new(),
            model_id: String::new(),
            profile_ref: String::new(),
            account_ref: None,
            policy: CandidatePolicy {
                version: 1,
                transient: p,
                hard: p,
            },
        }
    }

    /// A profile of `(id, label)` candidates, all with policy `p`.
    fn profile(ids: &[(&str, &str)], p: ClassPolicy) -> Profile {
        let candidates = ids
            .iter()
            .map(|(id, label)| candidate(id, label, p))
            .collect();
        Profile {
            id: "p_1".into(),
            name: "P".into(),
            revision: 1,
            candidates,
            configuration_error: None,
            created_at: now(),
            updated_at: now(),
        }
    }

    fn route(state: RouteState, p: &Profile) -> Route {
        let caller = Caller {
            kind: CallerKind::Kanban,
            reference: "task".into(),
        };
        let mut r = Route::open(p.id.clone(), caller, &p.candidates[0], now());
        r.state = state;
        r.generation = Generation(3);
        r
    }

    fn overloaded(class: ErrorClass, reset_in: Option<i64>) -> Classification {
        Classification {
            code: "provider_overloaded".into(),
            class,
            catalogue_version: "1".into(),
            confidence: Confidence::High,
            scope: None,
            classifier_rule: "http.529".into(),
            provider_id: None,
            model_id: None,
            phase: None,
            occurred_at: now(),
            retry_after_seconds: reset_in.map(|s| s as f64),
            reset_at: reset_in.map(|s| now() + chrono::Duration::seconds(s)),
            safe_excerpt: "HTTP 529".into(),
        }
    }

    /// Plans a failure the way the service does: decide, then plan.
    fn plan(
        route: &Route,
        gate: GateVerdict,
        c: &Classification,
        profile: Option<&Profile>,
    ) -> FailurePlan {
        let mut circuits = CircuitSet::default();
        let decided = decide(route, gate, c, profile, &mut circuits, now());
        failure(FailureFacts {
            route,
            decided,
            circuits: &mut circuits,
            classification: c,
            http_status: Some(529),
            profile,
            max_hold_wait: HOLD_WAIT,
            resume: None,
            now: now(),
        })
    }

    struct Row {
        name: &'static str,
        from: RouteState,
        policy: ClassPolicy,
        class: ErrorClass,
        reset_in: Option<i64>,
        gate: GateVerdict,
        kind: DecisionKind,
        to: RouteState,
        outcome: &'static str,
        schedule: bool,
        dispatch: bool,
    }

    #[test]
    fn each_decision_becomes_one_change() {
        let retry3 = class_policy(3, 0, OnExhausted::Skip);
        let none_skip = class_policy(0, 0, OnExhausted::Skip);
        let none_stop = class_policy(0, 0, OnExhausted::Stop);
        let wait = class_policy(0, 600, OnExhausted::Skip);
        let rows = [
            Row {
                name: "retry arms a schedule",
                from: RouteState::Active,
                policy: retry3,
                class: ErrorClass::Transient,
                reset_in: None,
                gate: GateVerdict::Current,
                kind: DecisionKind::Retry,
                to: RouteState::RetryWait,
                outcome: "retry_wait until 2026-11-30T12:00:05+00:00",
                schedule: true,
                dispatch: false,
            },
            Row {
                name: "a trusted reset inside the maximum is waited for",
                from: RouteState::Retrying,
                policy: wait,
                class: ErrorClass::Hard,
                reset_in: Some(120),
                gate: GateVerdict::Current,
                kind: DecisionKind::WaitForReset,
                to: RouteState::WaitingForReset,
                outcome: "waiting_for_reset until 2026-11-30T12:02:00+00:00",
                schedule: true,
                dispatch: false,
            },
            Row {
                name: "exhausted with skip switches to the next candidate",
                from: RouteState::Active,
                policy: none_skip,
                class: ErrorClass::Transient,
                reset_in: None,
                gate: GateVerdict::Current,
                kind: DecisionKind::Skip,
                to: RouteState::Switching,
                outcome: "switching to Codex",
                schedule: false,
                dispatch: true,
            },
            Row {
                name: "exhausted with stop stops by policy",
                from: RouteState::Active,
                policy: none_stop,
                class: ErrorClass::Transient,
                reset_in: None,
                gate: GateVerdict::Current,
                kind: DecisionKind::Stop,
                to: RouteState::ActionRequired,
                outcome: "action_required: stopped_by_policy",
                schedule: false,
                dispatch: false,
            },
            Row {
                name: "an unclassified failure stops",
                from: RouteState::Active,
                policy: retry3,
                class: ErrorClass::Unclassified,
                reset_in: None,
                gate: GateVerdict::Current,
                kind: DecisionKind::Unclassified,
                to: RouteState::ActionRequired,
                outcome: "action_required: unclassified",
                schedule: false,
                dispatch: false,
            },
            Row {
                name: "effects before the failure make a retry unsafe",
                from: RouteState::Active,
                policy: retry3,
                class: ErrorClass::Transient,
                reset_in: None,
                gate: GateVerdict::EffectUnsafe(crate::recovery::UnsafeReason::EffectsReported),
                kind: DecisionKind::EffectUnsafe,
                to: RouteState::ActionRequired,
                outcome: "action_required: effect_unsafe",
                schedule: false,
                dispatch: false,
            },
        ];
        for row in rows {
            let p = profile(&[("a", "Claude"), ("b", "Codex")], row.policy);
            let r = route(row.from, &p);
            let c = overloaded(row.class, row.reset_in);
            let plan = plan(&r, row.gate, &c, Some(&p));
            let name = row.name;
            assert_eq!(plan.decision.kind, row.kind, "{name}");
            assert_eq!(plan.route.state, row.to, "{name}");
            assert_eq!(plan.route.generation, r.generation + 1, "{name}");
            assert_eq!(plan.decision.outcome.to_string(), row.outcome, "{name}");
            assert_eq!(plan.commit.schedule.is_some(), row.schedule, "{name}");
            assert_eq!(plan.commit.dispatch.is_some(), row.dispatch, "{name}");
            assert_eq!(plan.route.pending.is_some(), row.schedule, "{name}");
            assert_eq!(
                plan.route.reason.is_some(),
                row.to == RouteState::ActionRequired,
                "{name}"
            );
            let attempt = plan.commit.attempt.as_ref().expect("an attempt row");
            assert_eq!(attempt.generation, r.generation.get(), "{name}");
            assert_eq!(attempt.decision, row.kind.to_string(), "{name}");
            assert_eq!(attempt.outcome, row.outcome, "{name}");
            assert_eq!(attempt.http_status, Some(529), "{name}");
        }
    }

    #[test]
    fn a_retry_uses_the_cycles_budget_and_names_its_ordinal() {
        let p = profile(&[("a", "Claude")], class_policy(3, 0, OnExhausted::Stop));
        let mut r = route(RouteState::Retrying, &p);
        r.memory.retries.insert("a/transient".into(), 1);
        let plan = plan(
            &r,
            GateVerdict::Current,
            &overloaded(ErrorClass::Transient, None),
            Some(&p),
        );
        assert_eq!(plan.decision.retry_ordinal, Some(2));
        assert_eq!(plan.decision.max_retries, Some(3));
        assert_eq!(plan.route.memory.retries.get("a/transient"), Some(&2));
        let pending = plan.route.pending.expect("pending");
        assert_eq!(pending.retry_ordinal, 2);
        assert_eq!(pending.outcome_after, OnExhausted::Stop);
        let schedule = plan.commit.schedule.expect("schedule");
        assert_eq!(schedule.generation, plan.route.generation.get());
        assert_eq!(schedule.kind, "retry");
    }

    #[test]
    fn a_reset_wait_is_used_once_per_cycle() {
        let p = profile(&[("a", "Claude")], class_policy(0, 600, OnExhausted::Stop));
        let r = route(RouteState::Active, &p);
        let c = overloaded(ErrorClass::Hard, Some(60));
        let first = plan(&r, GateVerdict::Current, &c, Some(&p));
        assert_eq!(first.route.memory.reset_used, vec!["a/hard".to_string()]);
        let mut again = first.route.clone();
        again.state = RouteState::Retrying;
        let second = plan(&again, GateVerdict::Current, &c, Some(&p));
        assert_eq!(second.decision.kind, DecisionKind::Stop);
        assert_eq!(second.route.reason, Some(StopReason::StoppedByPolicy));
    }

    #[test]
    fn skip_with_no_candidate_left_stops() {
        let p = profile(
            &[("a", "Claude"), ("b", "Codex")],
            class_policy(0, 0, OnExhausted::Skip),
        );
        let mut r = route(RouteState::Active, &p);
        r.memory.excluded = vec!["b".into()];
        let plan = plan(
            &r,
            GateVerdict::Current,
            &overloaded(ErrorClass::Transient, None),
            Some(&p),
        );
        assert_eq!(plan.decision.kind, DecisionKind::Skip);
        assert_eq!(plan.route.state, RouteState::ActionRequired);
        assert_eq!(plan.route.reason, Some(StopReason::NoEligibleCandidate));
        assert!(plan.commit.dispatch.is_none());
        // The candidate that failed stays excluded for the cycle.
        assert!(plan.route.memory.excluded.contains(&"a".to_string()));
    }

    #[test]
    fn a_switch_dispatches_the_next_candidate_with_a_fresh_invocation() {
        let p = profile(
            &[("a", "Claude"), ("b", "Codex")],
            class_policy(0, 0, OnExhausted::Skip),
        );
        let r = route(RouteState::Active, &p);
        let plan = plan(
            &r,
            GateVerdict::Current,
            &overloaded(ErrorClass::Transient, None),
            Some(&p),
        );
        assert_eq!(plan.route.candidate.id, "b");
        assert_ne!(plan.route.invocation_id, r.invocation_id);
        let d = plan.commit.dispatch.expect("dispatch");
        assert_eq!(d.reason, "switch");
        assert_eq!(d.candidate_id, "b");
        assert_eq!(d.generation, plan.route.generation.get());
        assert_eq!(d.invocation_id, plan.route.invocation_id);
    }

    #[test]
    fn a_profile_without_the_candidate_authorises_nothing() {
        let p = profile(&[("a", "Claude")], class_policy(3, 0, OnExhausted::Skip));
        let r = route(RouteState::Active, &p);
        let other = profile(&[("z", "Gemini")], class_policy(3, 0, OnExhausted::Skip));
        let c = overloaded(ErrorClass::Transient, None);
        for profile in [Some(&other), None] {
            let plan = plan(&r, GateVerdict::Current, &c, profile);
            assert_eq!(plan.decision.kind, DecisionKind::Stop);
            assert_eq!(plan.route.reason, Some(StopReason::ProfileChanged));
            assert_eq!(plan.commit.attempt.expect("attempt").policy, "null");
        }
        // A failure that is not the provider's is rejected as such first
        // (found by the model-based test, server/tests/it/model.rs).
        let task = Classification {
            code: "local_runtime".into(),
            ..overloaded(ErrorClass::NotProvider, None)
        };
        let plan = plan(&r, GateVerdict::Current, &task, Some(&other));
        assert_eq!(plan.decision.kind, DecisionKind::NotProvider);
        assert_eq!(plan.route.reason, Some(StopReason::NotProvider));
    }

    #[test]
    fn a_profile_that_cannot_be_mapped_authorises_nothing_and_says_so() {
        let mut p = profile(&[("a", "Claude")], class_policy(3, 0, OnExhausted::Skip));
        let r = route(RouteState::Active, &p);
        // As `Profiles::load` answers an unmappable stored document.
        p.candidates.clear();
        p.configuration_error = Some(domain::profile::ConfigurationError {
            message: "cannot be mapped".into(),
            errors: Vec::new(),
        });
        let plan = plan(
            &r,
            GateVerdict::Current,
            &overloaded(ErrorClass::Transient, None),
            Some(&p),
        );
        assert_eq!(plan.decision.kind, DecisionKind::Stop);
        assert_eq!(plan.route.reason, Some(StopReason::ProfileMisconfigured));
        assert!(plan.commit.schedule.is_none() && plan.commit.dispatch.is_none());
        assert_eq!(plan.commit.attempt.expect("attempt").policy, "null");
    }

    #[test]
    fn a_stale_report_changes_nothing_and_says_where_the_route_is() {
        let p = profile(&[("a", "Claude")], class_policy(3, 0, OnExhausted::Skip));
        let r = route(RouteState::RetryWait, &p);
        let view = stale(&r);
        assert_eq!(view.kind, DecisionKind::Stale);
        assert_eq!(
            view.outcome.to_string(),
            "unchanged: the route is at generation 3 (retry_wait)"
        );
    }

    #[test]
    fn manual_actions_plan_their_change() {
        let p = profile(
            &[("a", "Claude"), ("b", "Codex")],
            class_policy(3, 600, OnExhausted::Skip),
        );
        let mut waiting = route(RouteState::WaitingForReset, &p);
        waiting.pending = Some(pending(
            PendingKind::ResetWait,
            now(),
            0,
            &class_policy(3, 600, OnExhausted::Skip),
            "quota_limited",
            ErrorClass::Hard,
            None,
        ));
        let act = |r: &Route, a: Action, to: RouteState, profile: Option<&Profile>| {
            let profile = profile.filter(|_| action_needs_profile(r, a));
            action(
                r,
                a,
                to,
                profile,
                &mut CircuitSet::default(),
                HOLD_WAIT,
                now(),
            )
            .expect("planned")
        };

        // Retry now while waiting: the pending attempt goes out early, as
        // the reset's retry.
        let (next, commit) = act(&waiting, Action::RetryNow, RouteState::Retrying, Some(&p));
        assert_eq!(next.generation, waiting.generation.next());
        assert!(next.pending.is_none());
        assert_ne!(next.invocation_id, waiting.invocation_id);
        assert_eq!(next.cycle, waiting.cycle);
        let d = commit.dispatch.expect("dispatch");
        assert_eq!(d.reason, "reset_retry");

        // Cancel stops for a person and dispatches nothing.
        let (next, commit) = act(&waiting, Action::Cancel, RouteState::ActionRequired, None);
        assert_eq!(next.reason, Some(StopReason::CancelledByUser));
        assert!(commit.dispatch.is_none());

        // From a stopped route, retry and skip start a new cycle.
        let mut stopped = route(RouteState::ActionRequired, &p);
        stopped.memory.excluded = vec!["b".into()];
        stopped.reason = Some(StopReason::StoppedByPolicy);
        assert!(action_needs_profile(&stopped, Action::RetryNow));
        assert!(!action_needs_profile(&waiting, Action::RetryNow));
        let (next, commit) = act(&stopped, Action::RetryNow, RouteState::Retrying, Some(&p));
        assert_eq!(next.cycle, stopped.cycle + 1);
        assert!(next.memory.excluded.is_empty());
        assert_eq!(next.reason, None);
        assert_eq!(commit.dispatch.expect("dispatch").reason, "retry");
        let (next, commit) = act(&stopped, Action::SkipNow, RouteState::Switching, Some(&p));
        assert_eq!(next.candidate.id, "b");
        assert_eq!(commit.dispatch.expect("dispatch").reason, "switch");

        // Skip with nobody left to skip to stops instead.
        let alone = profile(&[("a", "Claude")], class_policy(3, 0, OnExhausted::Skip));
        let (next, commit) = act(
            &stopped,
            Action::SkipNow,
            RouteState::Switching,
            Some(&alone),
        );
        assert_eq!(next.state, RouteState::ActionRequired);
        assert_eq!(next.reason, Some(StopReason::NoEligibleCandidate));
        assert!(commit.dispatch.is_none());
    }

    #[test]
    fn effects_count_or_stop_a_route_whose_failed_invocation_waits() {
        let p = profile(&[("a", "Claude")], class_policy(3, 0, OnExhausted::Skip));
        let active = route(RouteState::Active, &p);
        let report = |r: &Route, generation: Generation| EffectReport {
            generation,
            invocation_id: r.invocation_id.clone(),
            prompt_generation: r.prompt_generation,
            kind: "tool_call".into(),
            provider_session_id: Some("sess".into()),
        };
        let EffectPlan::Counted(counted) = effect(
            &active,
            &report(&active, active.generation),
            None,
            false,
            now(),
        ) else {
            panic!("counted")
        };
        assert_eq!(counted.effects, 1);
        assert_eq!(counted.generation, active.generation);
        assert_eq!(counted.provider_session_id.as_deref(), Some("sess"));

        // The invocation failed and waits for its retry: the late effect
        // makes replay unsafe.
        let failed = plan(
            &active,
            GateVerdict::Current,
            &overloaded(ErrorClass::Transient, None),
            Some(&p),
        );
        let waiting = failed.route.clone();
        let attempt = failed.commit.attempt.clone().expect("an attempt");
        let EffectPlan::Late {
            route: stopped,
            commit,
        } = effect(
            &waiting,
            &report(&active, active.generation),
            Some(&attempt),
            true,
            now(),
        )
        else {
            panic!("late")
        };
        assert_eq!(stopped.state, RouteState::ActionRequired);
        assert_eq!(stopped.reason, Some(StopReason::EffectAfterFailure));
        assert_eq!(stopped.generation, waiting.generation.next());
        let row = commit.attempt.expect("a late-effect row");
        assert_eq!(row.decision, "late_effect");
        assert_eq!(row.invocation_id, active.invocation_id);
        assert_eq!(row.outcome, "action_required: effect_after_failure");

        // The successor was already delivered: recorded, nothing stops.
        let mut retrying = waiting.clone();
        retrying.state = RouteState::Retrying;
        retrying.pending = None;
        retrying.generation = waiting.generation.next();
        retrying.new_invocation();
        let EffectPlan::Late {
            route: kept,
            commit,
        } = effect(
            &retrying,
            &report(&active, active.generation),
            Some(&attempt),
            false,
            now(),
        )
        else {
            panic!("late")
        };
        assert_eq!(*kept, retrying);
        let row = commit.attempt.expect("a late-effect row");
        assert!(row.detail.as_deref().unwrap().contains("tool_call"));
        assert_eq!(row.outcome, "retrying");

        // About another invocation, or one whose failure stopped: nothing.
        let mut other = report(&active, active.generation);
        other.invocation_id = "inv_other".into();
        assert!(matches!(
            effect(&active, &other, None, false, now()),
            EffectPlan::Nothing
        ));
        let stop = AttemptRow {
            decision: "stop".into(),
            ..attempt
        };
        assert!(matches!(
            effect(
                &waiting,
                &report(&active, active.generation),
                Some(&stop),
                true,
                now()
            ),
            EffectPlan::Nothing
        ));
    }

    #[test]
    fn success_starts_a_new_cycle_and_a_new_invocation() {
        let p = profile(&[("a", "Claude")], class_policy(3, 0, OnExhausted::Skip));
        let mut r = route(RouteState::Retrying, &p);
        r.memory.retries.insert("a/transient".into(), 2);
        r.effects = 3;
        let next = success(&r, RouteState::Active);
        assert_eq!(next.state, RouteState::Active);
        assert_eq!(next.generation, r.generation.next());
        assert_eq!(next.cycle, r.cycle + 1);
        assert!(next.memory.retries.is_empty());
        assert_eq!(next.effects, 0);
        assert_eq!(next.prompt_generation, r.prompt_generation + 1);
        assert_ne!(next.invocation_id, r.invocation_id);
    }

    /// A profile of the given candidates.
    fn profile_of(candidates: Vec<Candidate>) -> Profile {
        Profile {
            candidates,
            ..profile(&[("x", "X")], class_policy(0, 0, OnExhausted::Skip))
        }
    }

    /// A candidate on Anthropic's `team-a` account.
    fn on_account(id: &str, label: &str, p: ClassPolicy) -> Candidate {
        Candidate {
            provider_id: "anthropic".into(),
            model_id: "claude-sonnet-4-5".into(),
            profile_ref: format!("{id}-ref"),
            account_ref: Some("team-a".into()),
            ..candidate(id, label, p)
        }
    }

    fn quota(reset_in: i64) -> Classification {
        Classification {
            code: "quota_limited".into(),
            scope: Some(classify::Scope::Account),
            ..overloaded(ErrorClass::Hard, Some(reset_in))
        }
    }

    /// Plans `c` for `route` over `circuits`, as the service does.
    fn plan_on(
        route: &Route,
        c: &Classification,
        p: &Profile,
        circuits: &mut CircuitSet,
    ) -> FailurePlan {
        let decided = decide(route, GateVerdict::Current, c, Some(p), circuits, now());
        failure(FailureFacts {
            route,
            decided,
            circuits,
            classification: c,
            http_status: None,
            profile: Some(p),
            max_hold_wait: HOLD_WAIT,
            resume: None,
            now: now(),
        })
    }

    struct CircuitRow {
        name: &'static str,
        /// Whether another route opened the circuit first.
        opened_by_other: bool,
        policy: ClassPolicy,
        kind: DecisionKind,
        to: RouteState,
        /// The pending deadline, seconds after now.
        deadline_in: Option<i64>,
        held_visibly: bool,
        candidate_after: &'static str,
    }

    #[test]
    fn circuits_hold_the_others_and_leave_the_policy_its_choice() {
        let retry = class_policy(3, 0, OnExhausted::Skip);
        let rows = [
            CircuitRow {
                name: "the route that opened it keeps its own pace",
                opened_by_other: false,
                policy: retry,
                kind: DecisionKind::Retry,
                to: RouteState::RetryWait,
                deadline_in: Some(5),
                held_visibly: false,
                candidate_after: "a",
            },
            CircuitRow {
                name: "another route's retry waits for the circuit, visibly",
                opened_by_other: true,
                // Ten retries from 5 s may wait 5,115 s in all: the 900 s
                // hold is within what this policy waits.
                policy: class_policy(10, 0, OnExhausted::Skip),
                kind: DecisionKind::Retry,
                to: RouteState::RetryWait,
                deadline_in: Some(900),
                held_visibly: true,
                candidate_after: "a",
            },
            CircuitRow {
                name: "a hold beyond what the policy waits skips at once",
                opened_by_other: true,
                // Three retries from 5 s wait 35 s at most.
                policy: retry,
                kind: DecisionKind::Skip,
                to: RouteState::Switching,
                deadline_in: None,
                held_visibly: false,
                candidate_after: "c",
            },
            CircuitRow {
                name: "the opener's own skip may try its next candidate on the resource",
                opened_by_other: false,
                policy: class_policy(0, 0, OnExhausted::Skip),
                kind: DecisionKind::Skip,
                to: RouteState::Switching,
                deadline_in: None,
                held_visibly: false,
                candidate_after: "b",
            },
            CircuitRow {
                name: "a skip passes over the held candidate on the same account",
                opened_by_other: true,
                policy: class_policy(0, 0, OnExhausted::Skip),
                kind: DecisionKind::Skip,
                to: RouteState::Switching,
                deadline_in: None,
                held_visibly: false,
                candidate_after: "c",
            },
        ];
        for row in rows {
            let name = row.name;
            let p = profile_of(vec![
                on_account("a", "Claude", row.policy),
                on_account("b", "Claude Opus", row.policy),
                candidate("c", "Codex", row.policy),
            ]);
            let mut circuits = CircuitSet::default();
            if row.opened_by_other {
                // Another route, whose policy retries, opened it first.
                let theirs = profile_of(vec![
                    on_account("a", "Claude", retry),
                    on_account("b", "Claude Opus", retry),
                ]);
                let mut other = route(RouteState::Active, &theirs);
                other.id = "r_other".into();
                let first = plan_on(&other, &quota(900), &theirs, &mut circuits);
                assert_eq!(
                    first.decision.kind,
                    DecisionKind::Retry,
                    "{name}: the opener"
                );
            }
            let r = route(RouteState::Active, &p);
            let plan = plan_on(&r, &quota(900), &p, &mut circuits);
            assert_eq!(plan.decision.kind, row.kind, "{name}");
            // Only a hold beyond the policy's bound decides, and says so.
            let by_hold =
                row.opened_by_other && row.kind == DecisionKind::Skip && row.policy == retry;
            assert_eq!(plan.decision.held_by.is_some(), by_hold, "{name}");
            assert_eq!(
                plan.route
                    .last_failure
                    .as_ref()
                    .and_then(|f| f.held_by.as_ref())
                    .map(|h| h.resource.as_str()),
                by_hold.then_some("anthropic/team-a"),
                "{name}"
            );
            assert_eq!(plan.route.state, row.to, "{name}");
            assert_eq!(plan.route.candidate.id, row.candidate_after, "{name}");
            let pending = plan.route.pending.as_ref();
            assert_eq!(
                pending.map(|p| (p.deadline - now()).num_seconds()),
                row.deadline_in,
                "{name}"
            );
            let hold = pending.and_then(|p| p.circuit.as_ref());
            assert_eq!(hold.is_some(), row.held_visibly, "{name}");
            let schedule_circuit = plan
                .commit
                .schedule
                .as_ref()
                .and_then(|s| s.circuit.clone());
            assert_eq!(schedule_circuit.is_some(), row.held_visibly, "{name}");
            if let Some(h) = hold {
                assert_eq!(h.resource, "anthropic/team-a", "{name}");
                assert_eq!(
                    schedule_circuit.as_deref(),
                    Some("account:anthropic/team-a"),
                    "{name}"
                );
            }
            // Held candidates are passed over, not excluded for the cycle.
            assert!(
                !plan.route.memory.excluded.contains(&"b".to_string()),
                "{name}"
            );
            let changes = circuits.changes();
            assert_eq!(changes.len(), 1, "{name}: one circuit, opened once");
            // The opener switching onto the resource makes that attempt the probe.
            let kind = if row.candidate_after == "b" {
                "probe_claimed"
            } else {
                "opened"
            };
            assert_eq!(changes[0].kind().to_string(), kind, "{name}");
        }
    }

    #[test]
    fn a_failure_without_a_named_resource_opens_nothing() {
        let retry = class_policy(3, 0, OnExhausted::Skip);
        // No provider, model, account or profile reference: nothing to key.
        let p = profile_of(vec![candidate("a", "Claude", retry)]);
        let mut circuits = CircuitSet::default();
        let plan = plan_on(
            &route(RouteState::Active, &p),
            &quota(900),
            &p,
            &mut circuits,
        );
        assert_eq!(plan.decision.kind, DecisionKind::Retry);
        assert!(circuits.changes().is_empty());
        // A medium-confidence failure on a named resource opens nothing either.
        let p = profile_of(vec![on_account("a", "Claude", retry)]);
        let unsure = Classification {
            confidence: Confidence::Medium,
            ..quota(900)
        };
        plan_on(&route(RouteState::Active, &p), &unsure, &p, &mut circuits);
        assert!(circuits.changes().is_empty());
    }

    #[test]
    fn a_due_schedule_dispatches_probes_or_moves_visibly() {
        // Four retries from 5 s wait up to 75 s: the 60 s hold is within.
        let retry = class_policy(4, 0, OnExhausted::Skip);
        let p = profile_of(vec![on_account("a", "Claude", retry)]);
        let mut circuits = CircuitSet::default();
        let mut opener = route(RouteState::Active, &p);
        opener.id = "r_opener".into();
        plan_on(&opener, &quota(60), &p, &mut circuits);
        let mut waiter = route(RouteState::Active, &p);
        waiter = plan_on(&waiter, &quota(60), &p, &mut circuits).route;
        let schedule = ScheduleRow {
            id: "s_1".into(),
            route_id: waiter.id.to_string(),
            generation: waiter.generation.get(),
            kind: "retry".into(),
            deadline: (now() + chrono::Duration::seconds(60)).timestamp_millis(),
            state: "armed".into(),
            created_at: 0,
            circuit: Some("account:anthropic/team-a".into()),
        };
        let at = |s: i64| now() + chrono::Duration::seconds(s);
        let fire = |circuits: &mut CircuitSet, route: &Route, secs: i64| {
            deadline(
                route,
                RouteState::Retrying,
                &schedule,
                PendingKind::Retry,
                Some(&p.candidates[0]),
                circuits,
                at(secs),
            )
        };
        // Still open (another route opened it and extended nothing): held.
        let held = fire(&mut circuits.clone(), &waiter, 30);
        assert_eq!(held.event, event_kind::HELD);
        assert_eq!(held.route.state, RouteState::RetryWait);
        assert_eq!(held.route.generation, waiter.generation + 1);
        assert_eq!(held.route.pending.as_ref().unwrap().deadline, at(60));
        assert!(held.commit.dispatch.is_none());
        assert_eq!(held.commit.fire_schedule.as_deref(), Some("s_1"));
        let next = held.commit.schedule.expect("re-armed");
        assert_eq!(next.circuit.as_deref(), Some("account:anthropic/team-a"));
        // Expired: this route's retry is the probe.
        let mut after = circuits.clone();
        let probe = fire(&mut after, &waiter, 60);
        assert_eq!(probe.event, event_kind::FIRED);
        assert_eq!(probe.route.state, RouteState::Retrying);
        assert!(probe.commit.dispatch.is_some());
        let taken = after.changes();
        assert!(taken
            .iter()
            .any(|c| c.kind() == circuits::ChangeKind::ProbeClaimed));
        // Anyone after it waits for the probe's outcome, until its lease ends.
        let mut other = waiter.clone();
        other.id = "r_other".into();
        let wait = fire(&mut after, &other, 61);
        let hold = wait.route.pending.unwrap().circuit.expect("visible");
        assert!(hold.awaiting_probe);
        assert_eq!(hold.until, at(60 + circuits::PROBE_LEASE_SECONDS));
    }

    #[test]
    fn waiters_are_released_a_few_at_a_time_or_held_to_the_new_end() {
        let at = |s: i64| now() + chrono::Duration::seconds(s);
        let current = vec![at(600); 12];
        let released = waiter_deadlines(&current, &Hold::Free { probes: vec![] }, now());
        assert_eq!(released.len(), 12);
        assert!(released.iter().all(|(_, h)| h.is_none()));
        let firsts = released.iter().filter(|(t, _)| *t == now()).count();
        assert_eq!(firsts, circuits::RELEASE_BATCH);
        // Never later than a waiter was going anyway.
        let soon = waiter_deadlines(&[at(0)], &Hold::Free { probes: vec![] }, now());
        assert_eq!(soon[0].0, at(0));
        let key = circuits::CircuitKey {
            scope: domain::circuit::CircuitScope::Account,
            resource: "anthropic/team-a".into(),
        };
        let reopened = Hold::Held {
            key,
            until: at(900),
            awaiting_probe: false,
        };
        let held = waiter_deadlines(&current, &reopened, now());
        assert!(held.iter().all(|(t, h)| *t == at(900) && h.is_some()));
    }
}
