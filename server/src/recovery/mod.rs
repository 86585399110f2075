//! Recovery decisions: pure functions from (gate verdict, classification,
//! candidate policy, per-cycle usage, now) to a [`Decision`], in SPEC.md's
//! order. No I/O, no clock: the route service supplies `now` and commits
//! whatever this returns.
//!
//! Order: reject stale evidence (changes nothing); reject unclassified or
//! low-confidence, `not_provider` and effect-unsafe failures (manual
//! recovery); else wait for a validated reset when the class allows it, it
//! is unused this cycle, and the reset is in the future and within the
//! maximum (a later one is never shortened); else retry while budget
//! remains; else the class's `on_exhausted`.
//!
//! Eligibility is an input too: when a shared circuit holds the candidate
//! back (`held_until`, from [`crate::circuits::Hold`]), a wait or retry
//! the policy chose goes no earlier than the circuit allows. The policy
//! still decides *whether* to wait, retry or skip; the circuit only decides
//! *when*, so concurrent routes do not stampede the resource.

pub mod gate;

pub use gate::{EffectGate, GateInput, GateVerdict};

use crate::classify::Confidence;
use app::policy::{retry_delay_seconds, CandidatePolicy, ErrorClass, OnExhausted, PolicyClass};
use app::route::DecisionKind;
use chrono::{DateTime, Duration, Utc};

pub use app::route::Rejection;

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
    Skip {
        class: PolicyClass,
    },
    /// Recovery exhausted: stop for a person.
    Stop {
        class: PolicyClass,
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
            | Decision::Skip { class }
            | Decision::Stop { class } => Some(class),
        }
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

/// SPEC.md's policy evaluation. `gate` is the effect-safety verdict for the
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
    match decide(gate, failure, policy, usage, now) {
        Decision::WaitForReset { class, deadline } => Decision::WaitForReset {
            class,
            deadline: deadline.max(held_until.unwrap_or(deadline)),
        },
        Decision::Retry {
            class,
            ordinal,
            max_retries,
            delay_seconds,
            deadline,
        } => Decision::Retry {
            class,
            ordinal,
            max_retries,
            delay_seconds,
            deadline: deadline.max(held_until.unwrap_or(deadline)),
        },
        other => other,
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
    if gate == GateVerdict::EffectUnsafe {
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

    match p.on_exhausted {
        OnExhausted::Skip => Decision::Skip { class },
        OnExhausted::Stop => Decision::Stop { class },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use app::policy::{ClassPolicy, RetryPolicy, WaitForReset};

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
                class: PolicyClass::Transient
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
                class: PolicyClass::Hard
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
                class: PolicyClass::Hard
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
                GateVerdict::EffectUnsafe,
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
                class: PolicyClass::Hard
            }
        );
    }

    #[test]
    fn a_held_candidate_waits_for_its_circuit_but_the_policy_still_chooses() {
        let held = Some(now() + Duration::seconds(900));
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
            held,
            now(),
        );
        assert_eq!(
            skip,
            Decision::Skip {
                class: PolicyClass::Transient
            }
        );
    }
}
