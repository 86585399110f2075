//! The failure planner: pure functions from a route, the classified
//! failure, the decision and the profile to the change the service
//! commits. No I/O and no clock (`now` is an input); the service loads,
//! calls these and commits what they return — the shape of
//! [`crate::recovery::evaluate`].
//!
//! Order, for a current failure the state table accepts:
//! 1. [`decide`]: the failing candidate's policy decides
//!    ([`evaluate`]); a profile that lost the candidate, or cannot be read,
//!    authorises nothing (stop).
//! 2. [`failure`]: the decision becomes the next route — a reset wait or a
//!    retry arms a schedule and uses up this cycle's budget, a skip
//!    excludes the candidate and dispatches the next eligible one (or stops
//!    when none is left), a stop or a rejection stops with its reason — plus
//!    the append-only attempt row and the decision as the API reports it.

use super::machine::{self, Outcome, Trigger};
use super::model::{new_id, Memory, Route};
use super::wire::DecisionView;
use crate::classify::Classification;
use crate::recovery::{evaluate, Decision, Failure, GateVerdict, Rejection};
use crate::store::{AttemptRow, Commit, DispatchRow, ScheduleRow};
use app::policy::{CandidatePolicy, ClassPolicy, PolicyClass};
use app::profile::Profile;
use app::route::{
    DispatchReason, LastFailure, Pending, PendingKind, RouteOutcome, RouteState, ScheduleState,
    StopReason,
};
use app::words::safe_cause;
use chrono::{DateTime, Utc};

/// The decision for a failure of the route's current candidate, and the
/// candidate's policy it was made under (`None` when the profile no
/// longer has the candidate or cannot authorise work).
pub fn decide(
    route: &Route,
    gate: GateVerdict,
    classification: &Classification,
    profile: Option<&Profile>,
    now: DateTime<Utc>,
) -> (Decision, Option<CandidatePolicy>) {
    let candidate = profile
        .filter(|p| p.configuration_error.is_none())
        .and_then(|p| p.candidates.iter().find(|c| c.id == route.candidate.id));
    let Some(candidate) = candidate else {
        return (
            Decision::Stop {
                class: PolicyClass::Transient,
            },
            None,
        );
    };
    let failure = Failure {
        class: classification.class,
        confidence: classification.confidence,
        reset_at: classification.reset_at,
    };
    let usage = failure
        .class
        .policy_class()
        .map(|pc| route.memory.usage(&route.candidate.id, pc))
        .unwrap_or_default();
    (
        evaluate(gate, &failure, &candidate.policy, usage, now),
        Some(candidate.policy),
    )
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
    pub decision: Decision,
    /// The policy [`decide`] answered with the decision.
    pub policy: Option<CandidatePolicy>,
    pub classification: &'a Classification,
    /// The evidence's first HTTP error status.
    pub http_status: Option<u16>,
    /// The profile, when it could be read (a skip switches within it).
    pub profile: Option<&'a Profile>,
    pub now: DateTime<Utc>,
}

/// The change a current, accepted failure makes.
pub fn failure(f: FailureFacts<'_>) -> FailurePlan {
    let FailureFacts {
        route,
        decision,
        policy,
        classification,
        http_status,
        profile,
        now,
    } = f;
    let mut next = route.clone();
    next.generation += 1;
    next.last_failure = Some(LastFailure {
        code: classification.code.clone(),
        class: classification.class,
        safe_cause: safe_cause(&classification.code),
        http_status,
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
            next.pending = Some(pending(kind, deadline, 0, &p, classification));
            commit.schedule = Some(schedule(&next, kind, deadline, now));
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
            next.pending = Some(pending(kind, deadline, ordinal, &p, classification));
            commit.schedule = Some(schedule(&next, kind, deadline, now));
            Outcome::Retry
        }
        Decision::Skip { .. } => match profile.and_then(|p| switch(&mut next, p, now)) {
            Some(d) => {
                commit.dispatch = Some(d);
                Outcome::Switch
            }
            None => {
                next.reason = Some(StopReason::NoEligibleCandidate);
                Outcome::ManualRecovery
            }
        },
        Decision::Stop { .. } => {
            next.reason = Some(match policy {
                Some(_) => StopReason::StoppedByPolicy,
                None => StopReason::ProfileChanged,
            });
            Outcome::ManualRecovery
        }
    };
    next.state = machine::next(route.state, Trigger::Failure(outcome))
        .expect("failing states accept failures");
    if !next.state.is_waiting() {
        next.pending = None;
    }
    if next.state != RouteState::ActionRequired {
        next.reason = None;
    }
    let mut view = decision_view(&decision);
    view.outcome = outcome_of(&next);
    commit.attempt = Some(AttemptRow {
        route_id: route.id.clone(),
        seq: 0,
        generation: route.generation,
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
    });
    FailurePlan {
        route: next,
        commit,
        decision: view,
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

/// Excludes the current candidate and moves to the next eligible one;
/// answers the switch dispatch, or `None` when no candidate is left.
pub fn switch(route: &mut Route, profile: &Profile, now: DateTime<Utc>) -> Option<DispatchRow> {
    if !route.memory.excluded.contains(&route.candidate.id) {
        route.memory.excluded.push(route.candidate.id.clone());
    }
    let (index, candidate) = profile.next_eligible(&route.candidate.id, &route.memory.excluded)?;
    route.move_to(index, candidate);
    Some(route.dispatch(DispatchReason::Switch, now))
}

fn pending(
    kind: PendingKind,
    deadline: DateTime<Utc>,
    ordinal: u32,
    p: &ClassPolicy,
    c: &Classification,
) -> Pending {
    Pending {
        kind,
        deadline,
        retry_ordinal: ordinal,
        max_retries: p.retry.max_retries,
        outcome_after: p.on_exhausted,
        code: c.code.clone(),
        class: c.class,
    }
}

fn schedule(
    route: &Route,
    kind: PendingKind,
    deadline: DateTime<Utc>,
    now: DateTime<Utc>,
) -> ScheduleRow {
    ScheduleRow {
        id: new_id("s"),
        route_id: route.id.clone(),
        generation: route.generation,
        kind: kind.to_string(),
        deadline: deadline.timestamp_millis(),
        state: ScheduleState::Armed.to_string(),
        created_at: now.timestamp_millis(),
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
    use crate::classify::Confidence;
    use app::policy::{ErrorClass, OnExhausted, RetryPolicy, WaitForReset};
    use app::profile::Candidate;
    use app::route::{Caller, CallerKind, DecisionKind};

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn now() -> DateTime<Utc> {
        t("2026-11-30T12:00:00Z")
    }

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
            policy: CandidatePolicy {
                version: 1,
                transient: p,
                hard: p,
            },
        }
    }

    fn profile(candidates: Vec<Candidate>) -> Profile {
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
        let mut r = Route {
            id: "r_1".into(),
            profile_id: p.id.clone(),
            caller: Caller {
                kind: CallerKind::Kanban,
                reference: "task".into(),
            },
            state,
            generation: 3,
            cycle: 1,
            candidate: Default::default(),
            invocation_id: String::new(),
            prompt_generation: 1,
            effects: 0,
            provider_session_id: None,
            memory: Memory::default(),
            pending: None,
            last_failure: None,
            reason: None,
            created_at: now(),
            updated_at: now(),
        };
        r.move_to(0, &p.candidates[0]);
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
        let (decision, policy) = decide(route, gate, c, profile, now());
        failure(FailureFacts {
            route,
            decision,
            policy,
            classification: c,
            http_status: Some(529),
            profile,
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
                gate: GateVerdict::EffectUnsafe,
                kind: DecisionKind::EffectUnsafe,
                to: RouteState::ActionRequired,
                outcome: "action_required: effect_unsafe",
                schedule: false,
                dispatch: false,
            },
        ];
        for row in rows {
            let p = profile(vec![
                candidate("a", "Claude", row.policy),
                candidate("b", "Codex", row.policy),
            ]);
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
            assert_eq!(attempt.generation, r.generation, "{name}");
            assert_eq!(attempt.decision, row.kind.to_string(), "{name}");
            assert_eq!(attempt.outcome, row.outcome, "{name}");
            assert_eq!(attempt.http_status, Some(529), "{name}");
        }
    }

    #[test]
    fn a_retry_uses_the_cycles_budget_and_names_its_ordinal() {
        let p = profile(vec![candidate(
            "a",
            "Claude",
            class_policy(3, 0, OnExhausted::Stop),
        )]);
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
        assert_eq!(schedule.generation, plan.route.generation);
        assert_eq!(schedule.kind, "retry");
    }

    #[test]
    fn a_reset_wait_is_used_once_per_cycle() {
        let p = profile(vec![candidate(
            "a",
            "Claude",
            class_policy(0, 600, OnExhausted::Stop),
        )]);
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
        let p = profile(vec![
            candidate("a", "Claude", class_policy(0, 0, OnExhausted::Skip)),
            candidate("b", "Codex", class_policy(0, 0, OnExhausted::Skip)),
        ]);
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
        let p = profile(vec![
            candidate("a", "Claude", class_policy(0, 0, OnExhausted::Skip)),
            candidate("b", "Codex", class_policy(0, 0, OnExhausted::Skip)),
        ]);
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
        assert_eq!(d.generation, plan.route.generation);
        assert_eq!(d.invocation_id, plan.route.invocation_id);
    }

    #[test]
    fn a_profile_without_the_candidate_authorises_nothing() {
        let p = profile(vec![candidate(
            "a",
            "Claude",
            class_policy(3, 0, OnExhausted::Skip),
        )]);
        let r = route(RouteState::Active, &p);
        let other = profile(vec![candidate(
            "z",
            "Gemini",
            class_policy(3, 0, OnExhausted::Skip),
        )]);
        let c = overloaded(ErrorClass::Transient, None);
        for profile in [Some(&other), None] {
            let plan = plan(&r, GateVerdict::Current, &c, profile);
            assert_eq!(plan.decision.kind, DecisionKind::Stop);
            assert_eq!(plan.route.reason, Some(StopReason::ProfileChanged));
            assert_eq!(plan.commit.attempt.expect("attempt").policy, "null");
        }
    }

    #[test]
    fn a_stale_report_changes_nothing_and_says_where_the_route_is() {
        let p = profile(vec![candidate(
            "a",
            "Claude",
            class_policy(3, 0, OnExhausted::Skip),
        )]);
        let r = route(RouteState::RetryWait, &p);
        let view = stale(&r);
        assert_eq!(view.kind, DecisionKind::Stale);
        assert_eq!(
            view.outcome.to_string(),
            "unchanged: the route is at generation 3 (retry_wait)"
        );
    }
}
