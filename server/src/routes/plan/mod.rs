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
//!
//! One module per moment: [`failure`](mod@failure) (with [`decide`] and
//! [`stale`]), [`invocation`] (effects and success), [`action`](mod@action),
//! [`candidates`] (switching and a new route's start), [`waits`] (due
//! schedules, moved waits and circuit waiters), and [`view`] (the answers'
//! words).

mod action;
mod candidates;
mod failback;
mod failure;
mod invocation;
mod view;
mod waits;

pub use action::{action, action_needs_profile};
pub use candidates::{select, switch, HeldSwitch, Start, Switch};
pub use failback::failback;
pub use failure::{decide, failure, stale, Decided, FailureFacts, FailurePlan};
pub use invocation::{effect, success, EffectPlan};
pub use waits::{deadline, held_by, rearm, schedule, waiter_deadlines, DeadlinePlan};

#[cfg(test)]
mod tests {
    use super::waits::pending;
    use super::*;
    use crate::circuits::{self, CircuitSet, Hold};
    use crate::recovery::GateVerdict;
    use crate::routes::model::Route;
    use crate::store::{AttemptRow, ScheduleRow};
    use chrono::{DateTime, Duration, Utc};
    use classify::{Classification, Confidence};
    use domain::api::EffectReport;
    use domain::ids::Generation;
    use domain::policy::{
        CandidatePolicy, ClassPolicy, ErrorClass, OnExhausted, RetryPolicy, WaitForReset,
    };
    use domain::profile::{Candidate, Profile};
    use domain::route::{
        Action, Caller, CallerKind, DecisionKind, EventKind, PendingKind, RouteState, StopReason,
    };

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
            prefer: domain::profile::Prefer::FirstEligible,
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
            explain: None,
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
        assert_eq!(held.event, EventKind::Held);
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
        assert_eq!(probe.event, EventKind::Fired);
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
