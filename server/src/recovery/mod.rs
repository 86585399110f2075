//! Recovery decisions: pure functions from (gate verdict, classification,
//! candidate policy, per-cycle usage, the candidate's circuit hold, now) to
//! a [`Decision`], in the policy order of docs/design.md. No I/O, no clock: the route service
//! supplies `now` and commits whatever this returns.
//!
//! Order: reject stale evidence (changes nothing); reject unclassified or
//! low-confidence, `not_provider` and effect-unsafe failures (manual
//! recovery; the [`gate`] says why); else wait for a validated reset when
//! the class allows it, it is unused this cycle, and the reset is in the
//! future and within the maximum (a later one is never shortened); else
//! retry while budget remains; else the class's `on_exhausted`.
//!
//! Eligibility is an input too: when a shared circuit holds the candidate
//! back (`held_until`, from [`crate::circuits::Hold`]), a wait or retry
//! the policy chose goes no earlier than the circuit allows, so concurrent
//! routes do not stampede the resource. But the policy bounds every wait:
//! a route never waits longer than its own policy would let it wait from
//! this failure — for a reset wait its `max_wait_seconds`, for a retry the
//! delays of the retries it has left. A hold beyond that bound applies the
//! exhausted outcome at once (`by_hold`), as a reset beyond the maximum
//! does (docs/design.md, “The policy order”: such a reset is not
//! shortened; the retry or the exhausted outcome decides).
//!
//! A [`GateVerdict::Resumable`] failure may be retried or waited on (its
//! successor resumes the same provider session), never switched: another
//! candidate could only repeat the prompt.

pub mod concrete;
pub mod gate;

pub use gate::{EffectGate, GateInput, GateVerdict, UnsafeReason};

use chrono::{DateTime, Duration, Utc};
use classify::Confidence;
use domain::policy::{
    retry_delay_seconds, CandidatePolicy, ClassPolicy, ErrorClass, OnExhausted, PolicyClass,
};
use domain::route::DecisionKind;

pub use domain::route::Rejection;

/// What the classified failure should lead to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Rejected(Rejection),
    /// Wait until the trusted reset, then try the same candidate once.
    WaitForReset {
        class: PolicyClass,
        deadline: DateTime<Utc>,
    },
    /// Retry the same candidate after `delay_seconds` (retry `ordinal` of `max_retries`).
    Retry {
        class: PolicyClass,
        ordinal: u32,
        max_retries: u32,
        delay_seconds: u64,
        deadline: DateTime<Utc>,
    },
    /// Recovery exhausted: exclude the candidate for this cycle and switch.
    /// `by_hold`: the policy would have waited, but a shared circuit holds
    /// the candidate longer than the policy lets it wait.
    Skip {
        class: PolicyClass,
        by_hold: bool,
    },
    /// Recovery exhausted: stop for a person (`by_hold` as for `Skip`).
    Stop {
        class: PolicyClass,
        by_hold: bool,
    },
}

impl Decision {
    /// The kind the API names (`wait_for_reset`, `retry`, `skip`, `stop`,
    /// or the rejection).
    pub fn kind(&self) -> DecisionKind {
        match self {
            Decision::Rejected(r) => (*r).into(),
            Decision::WaitForReset { .. } => DecisionKind::WaitForReset,
            Decision::Retry { .. } => DecisionKind::Retry,
            Decision::Skip { .. } => DecisionKind::Skip,
            Decision::Stop { .. } => DecisionKind::Stop,
        }
    }

    /// The class whose policy decided (none for a rejection).
    pub fn class(&self) -> Option<PolicyClass> {
        match *self {
            Decision::Rejected(_) => None,
            Decision::WaitForReset { class, .. }
            | Decision::Retry { class, .. }
            | Decision::Skip { class, .. }
            | Decision::Stop { class, .. } => Some(class),
        }
    }

    /// Whether a shared circuit's hold, beyond the policy's bound, decided.
    pub fn by_hold(&self) -> bool {
        matches!(
            self,
            Decision::Skip { by_hold: true, .. } | Decision::Stop { by_hold: true, .. }
        )
    }
}

/// The facts of a classification the evaluator needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failure {
    pub class: ErrorClass,
    pub confidence: Confidence,
    /// Validated absolute reset time, if the classifier found one.
    pub reset_at: Option<DateTime<Utc>>,
}

/// What this candidate and class already used in the current route cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub retries_used: u32,
    pub reset_used: bool,
}

/// The policy order of docs/design.md. `gate` is the effect-safety verdict for the
/// evidence; `usage` is for the failing candidate and the failure's class;
/// `held_until` is when the candidate's circuits let it be tried again.
pub fn evaluate(
    gate: GateVerdict,
    failure: &Failure,
    policy: &CandidatePolicy,
    usage: Usage,
    held_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Decision {
    let decision = match decide(gate, failure, policy, usage, now) {
        Decision::WaitForReset { class, deadline } => {
            let p = policy.class(class);
            let bound = now + Duration::seconds(p.wait_for_reset.max_wait_seconds as i64);
            match held_until {
                Some(held) if held > bound => exhausted(p, class, true),
                held => Decision::WaitForReset {
                    class,
                    deadline: deadline.max(held.unwrap_or(deadline)),
                },
            }
        }
        Decision::Retry {
            class,
            ordinal,
            max_retries,
            delay_seconds,
            deadline,
        } => {
            let p = policy.class(class);
            let bound = now + Duration::seconds(retries_left_seconds(p, ordinal) as i64);
            match held_until {
                Some(held) if held > bound => exhausted(p, class, true),
                held => Decision::Retry {
                    class,
                    ordinal,
                    max_retries,
                    delay_seconds,
                    deadline: deadline.max(held.unwrap_or(deadline)),
                },
            }
        }
        other => other,
    };
    match decision {
        // Another candidate cannot resume this provider's session.
        Decision::Skip { .. } if gate == GateVerdict::Resumable => {
            Decision::Rejected(Rejection::EffectUnsafe)
        }
        other => other,
    }
}

/// Why an `effect_unsafe` decision was made under `gate`.
pub fn unsafe_reason(gate: GateVerdict, decision: &Decision) -> Option<UnsafeReason> {
    match (gate, decision) {
        (_, d) if *d != Decision::Rejected(Rejection::EffectUnsafe) => None,
        (GateVerdict::EffectUnsafe(reason), _) => Some(reason),
        (GateVerdict::Resumable, _) => Some(UnsafeReason::ResumeNeedsSameCandidate),
        _ => None,
    }
}

/// The longest the policy lets a route wait for retries from retry
/// `ordinal` on: the delays of every retry it has left, each capped.
fn retries_left_seconds(p: &ClassPolicy, ordinal: u32) -> u64 {
    (ordinal..=p.retry.max_retries.max(ordinal))
        .map(|n| retry_delay_seconds(p.retry.initial_interval_seconds, n))
        .fold(0, u64::saturating_add)
}

fn exhausted(p: &ClassPolicy, class: PolicyClass, by_hold: bool) -> Decision {
    match p.on_exhausted {
        OnExhausted::Skip => Decision::Skip { class, by_hold },
        OnExhausted::Stop => Decision::Stop { class, by_hold },
    }
}

/// The policy's decision alone, before eligibility moves its deadline.
fn decide(
    gate: GateVerdict,
    failure: &Failure,
    policy: &CandidatePolicy,
    usage: Usage,
    now: DateTime<Utc>,
) -> Decision {
    if gate == GateVerdict::Stale {
        return Decision::Rejected(Rejection::Stale);
    }
    let class = match failure.class {
        _ if failure.confidence == Confidence::Low => {
            return Decision::Rejected(Rejection::Unclassified)
        }
        ErrorClass::Unclassified => return Decision::Rejected(Rejection::Unclassified),
        ErrorClass::NotProvider => return Decision::Rejected(Rejection::NotProvider),
        ErrorClass::Transient => PolicyClass::Transient,
        ErrorClass::Hard => PolicyClass::Hard,
    };
    if matches!(gate, GateVerdict::EffectUnsafe(_)) {
        return Decision::Rejected(Rejection::EffectUnsafe);
    }
    let p = policy.class(class);

    if p.wait_for_reset.enabled && !usage.reset_used {
        if let Some(reset) = failure.reset_at {
            let max = Duration::seconds(p.wait_for_reset.max_wait_seconds as i64);
            // A reset at or before now is ignored; a later one than the
            // maximum is not shortened (fall through to retry / exhausted).
            if reset > now && reset - now <= max {
                return Decision::WaitForReset {
                    class,
                    deadline: reset,
                };
            }
        }
    }

    if p.retry.enabled && usage.retries_used < p.retry.max_retries {
        let ordinal = usage.retries_used + 1;
        let delay_seconds = retry_delay_seconds(p.retry.initial_interval_seconds, ordinal);
        return Decision::Retry {
            class,
            ordinal,
            max_retries: p.retry.max_retries,
            delay_seconds,
            deadline: now + Duration::seconds(delay_seconds as i64),
        };
    }

    exhausted(p, class, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::policy::{ClassPolicy, RetryPolicy, WaitForReset};

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .unwrap()
            .to_utc()
    }

    fn policy(retries: u32, initial: u32, wait: u32, outcome: OnExhausted) -> CandidatePolicy {
        let class = ClassPolicy {
            retry: RetryPolicy {
                enabled: retries > 0,
                max_retries: retries,
                initial_interval_seconds: if retries > 0 { initial } else { 0 },
            },
            wait_for_reset: WaitForReset {
                enabled: wait > 0,
                max_wait_seconds: wait,
            },
            on_exhausted: outcome,
        };
        CandidatePolicy {
            transient: class,
            hard: class,
            ..CandidatePolicy::default()
        }
    }

    fn failure(class: ErrorClass, reset_in: Option<i64>) -> Failure {
        Failure {
            class,
            confidence: Confidence::High,
            reset_at: reset_in.map(|s| now() + Duration::seconds(s)),
        }
    }

    #[test]
    fn capacity_errors_retry_5_10_20_then_apply_the_outcome() {
        let p = policy(3, 5, 0, OnExhausted::Skip);
        let f = failure(ErrorClass::Transient, None);
        let delays: Vec<u64> = (0..3)
            .map(|used| {
                match evaluate(
                    GateVerdict::Current,
                    &f,
                    &p,
                    Usage {
                        retries_used: used,
                        reset_used: false,
                    },
                    None,
                    now(),
                ) {
                    Decision::Retry {
                        delay_seconds,
                        ordinal,
                        max_retries: 3,
                        ..
                    } => {
                        assert_eq!(ordinal, used + 1);
                        delay_seconds
                    }
                    other => panic!("expected a retry, got {other:?}"),
                }
            })
            .collect();
        assert_eq!(delays, [5, 10, 20]);
        let last = evaluate(
            GateVerdict::Current,
            &f,
            &p,
            Usage {
                retries_used: 3,
                reset_used: false,
            },
            None,
            now(),
        );
        assert_eq!(
            last,
            Decision::Skip {
                class: PolicyClass::Transient,
                by_hold: false
            }
        );
    }

    #[test]
    fn a_near_trusted_reset_is_waited_for_once() {
        let p = policy(0, 0, 300, OnExhausted::Stop);
        let f = failure(ErrorClass::Hard, Some(60));
        assert_eq!(
            evaluate(GateVerdict::Current, &f, &p, Usage::default(), None, now()),
            Decision::WaitForReset {
                class: PolicyClass::Hard,
                deadline: now() + Duration::seconds(60)
            }
        );
        // Used once this cycle: no second wait, straight to the outcome.
        let used = Usage {
            retries_used: 0,
            reset_used: true,
        };
        assert_eq!(
            evaluate(GateVerdict::Current, &f, &p, used, None, now()),
            Decision::Stop {
                class: PolicyClass::Hard,
                by_hold: false
            }
        );
    }

    #[test]
    fn a_far_or_past_reset_is_not_shortened_or_waited_for() {
        let p = policy(2, 30, 300, OnExhausted::Skip);
        for reset in [Some(6 * 3600), Some(0), Some(-60), None] {
            let d = evaluate(
                GateVerdict::Current,
                &failure(ErrorClass::Hard, reset),
                &p,
                Usage::default(),
                None,
                now(),
            );
            assert!(
                matches!(
                    d,
                    Decision::Retry {
                        ordinal: 1,
                        delay_seconds: 30,
                        ..
                    }
                ),
                "{reset:?} → {d:?}"
            );
        }
        let p = policy(0, 0, 300, OnExhausted::Skip);
        let d = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Hard, Some(6 * 3600)),
            &p,
            Usage::default(),
            None,
            now(),
        );
        assert_eq!(
            d,
            Decision::Skip {
                class: PolicyClass::Hard,
                by_hold: false
            }
        );
    }

    #[test]
    fn rejections_come_first_in_spec_order() {
        let p = policy(3, 5, 300, OnExhausted::Skip);
        let t = failure(ErrorClass::Transient, None);
        assert_eq!(
            evaluate(GateVerdict::Stale, &t, &p, Usage::default(), None, now()),
            Decision::Rejected(Rejection::Stale)
        );
        assert_eq!(
            evaluate(
                GateVerdict::Current,
                &failure(ErrorClass::Unclassified, None),
                &p,
                Usage::default(),
                None,
                now()
            ),
            Decision::Rejected(Rejection::Unclassified)
        );
        let low = Failure {
            confidence: Confidence::Low,
            ..t
        };
        assert_eq!(
            evaluate(
                GateVerdict::Current,
                &low,
                &p,
                Usage::default(),
                None,
                now()
            ),
            Decision::Rejected(Rejection::Unclassified)
        );
        assert_eq!(
            evaluate(
                GateVerdict::Current,
                &failure(ErrorClass::NotProvider, None),
                &p,
                Usage::default(),
                None,
                now()
            ),
            Decision::Rejected(Rejection::NotProvider)
        );
        assert_eq!(
            evaluate(
                GateVerdict::EffectUnsafe(UnsafeReason::BoundaryUnknown),
                &t,
                &p,
                Usage::default(),
                None,
                now()
            ),
            Decision::Rejected(Rejection::EffectUnsafe)
        );
    }

    #[test]
    fn no_retry_and_no_wait_applies_the_outcome_immediately() {
        let d = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Hard, Some(60)),
            &policy(0, 0, 0, OnExhausted::Stop),
            Usage::default(),
            None,
            now(),
        );
        assert_eq!(
            d,
            Decision::Stop {
                class: PolicyClass::Hard,
                by_hold: false
            }
        );
    }

    #[test]
    fn a_held_candidate_waits_for_its_circuit_within_the_policys_bound() {
        // 3 retries from 5 s: the policy lets this failure wait 5 + 10 + 20 s.
        let held = Some(now() + Duration::seconds(35));
        let retry = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Transient, None),
            &policy(3, 5, 0, OnExhausted::Skip),
            Usage::default(),
            held,
            now(),
        );
        assert!(
            matches!(retry, Decision::Retry { ordinal: 1, delay_seconds: 5, deadline, .. } if Some(deadline) == held),
            "{retry:?}"
        );
        // A reset wait of up to 300 s waits for a hold that ends sooner.
        let held = Some(now() + Duration::seconds(240));
        let wait = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Hard, Some(60)),
            &policy(0, 0, 300, OnExhausted::Skip),
            Usage::default(),
            held,
            now(),
        );
        assert!(
            matches!(wait, Decision::WaitForReset { deadline, .. } if Some(deadline) == held),
            "{wait:?}"
        );
        // A hold earlier than the policy's own deadline changes nothing.
        let early = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Transient, None),
            &policy(3, 5, 0, OnExhausted::Skip),
            Usage::default(),
            Some(now() + Duration::seconds(1)),
            now(),
        );
        assert!(
            matches!(early, Decision::Retry { deadline, .. } if deadline == now() + Duration::seconds(5))
        );
        // Skip and stop are the policy's alone.
        let skip = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Transient, None),
            &policy(0, 0, 0, OnExhausted::Skip),
            Usage::default(),
            Some(now() + Duration::seconds(900)),
            now(),
        );
        assert_eq!(
            skip,
            Decision::Skip {
                class: PolicyClass::Transient,
                by_hold: false
            }
        );
    }

    #[test]
    fn a_hold_beyond_the_policys_bound_applies_the_exhausted_outcome_at_once() {
        // "3 retries from 5 s, then skip" and a 6-hour circuit: skip now.
        let six_hours = Some(now() + Duration::hours(6));
        let d = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Transient, None),
            &policy(3, 5, 0, OnExhausted::Skip),
            Usage::default(),
            six_hours,
            now(),
        );
        assert_eq!(
            d,
            Decision::Skip {
                class: PolicyClass::Transient,
                by_hold: true
            }
        );
        assert!(d.by_hold());
        // The last retry left (20 s) bounds the wait from there.
        let last = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Transient, None),
            &policy(3, 5, 0, OnExhausted::Stop),
            Usage {
                retries_used: 2,
                reset_used: false,
            },
            Some(now() + Duration::seconds(21)),
            now(),
        );
        assert_eq!(
            last,
            Decision::Stop {
                class: PolicyClass::Transient,
                by_hold: true
            }
        );
        // A reset wait of at most 300 s does not wait for a 6-hour hold.
        let wait = evaluate(
            GateVerdict::Current,
            &failure(ErrorClass::Hard, Some(60)),
            &policy(0, 0, 300, OnExhausted::Stop),
            Usage::default(),
            six_hours,
            now(),
        );
        assert_eq!(
            wait,
            Decision::Stop {
                class: PolicyClass::Hard,
                by_hold: true
            }
        );
    }

    #[test]
    fn a_resumable_failure_retries_the_same_candidate_but_never_switches() {
        let f = failure(ErrorClass::Transient, None);
        let retry = evaluate(
            GateVerdict::Resumable,
            &f,
            &policy(2, 5, 0, OnExhausted::Skip),
            Usage::default(),
            None,
            now(),
        );
        assert!(matches!(retry, Decision::Retry { .. }), "{retry:?}");
        assert_eq!(unsafe_reason(GateVerdict::Resumable, &retry), None);
        let skip = evaluate(
            GateVerdict::Resumable,
            &f,
            &policy(0, 0, 0, OnExhausted::Skip),
            Usage::default(),
            None,
            now(),
        );
        assert_eq!(skip, Decision::Rejected(Rejection::EffectUnsafe));
        assert_eq!(
            unsafe_reason(GateVerdict::Resumable, &skip),
            Some(UnsafeReason::ResumeNeedsSameCandidate)
        );
        let gate = GateVerdict::EffectUnsafe(UnsafeReason::OutputStarted);
        let stopped = evaluate(
            gate,
            &f,
            &policy(2, 5, 0, OnExhausted::Skip),
            Usage::default(),
            None,
            now(),
        );
        assert_eq!(
            unsafe_reason(gate, &stopped),
            Some(UnsafeReason::OutputStarted)
        );
    }
}
