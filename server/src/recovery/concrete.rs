//! Decisions for concrete sessions (`POST /policies/evaluate`): the same
//! evaluator and gate a route's failure goes through, for a session that
//! is not a route. There is no route identity to fence against and no
//! effect report to remember, so the gate reads only what the envelope
//! itself says — its `phase` and any output or tool activity among its
//! items — and a resume claim proves nothing (it needs a session the
//! service saw effects reported under): it fails closed. Shared circuits
//! are a route's eligibility input and are neither read nor changed here.

use super::gate::before_any_result;
use super::{evaluate, unsafe_reason, Decision, Failure, GateVerdict, Rejection, Usage};
use chrono::{DateTime, Utc};
use classify::{Classification, Evidence};
use domain::concrete::{CycleUsage, Verdict};
use domain::policy::{format_duration, CandidatePolicy};
use domain::route::UnsafeReason;
use domain::words::unsafe_words;

/// The gate's verdict for a concrete session's failure.
pub fn gate(evidence: &Evidence) -> GateVerdict {
    if evidence.effect_count() > 0 {
        return GateVerdict::EffectUnsafe(UnsafeReason::EffectsInEvidence);
    }
    match before_any_result(evidence.phase) {
        Ok(()) => GateVerdict::Current,
        Err(reason) => GateVerdict::EffectUnsafe(reason),
    }
}

/// The decision for `classification` of `evidence` under `policy`, given
/// what the cycle already used; answers the decision and the cycle after it.
pub fn decide(
    classification: &Classification,
    evidence: &Evidence,
    policy: &CandidatePolicy,
    cycle: CycleUsage,
    now: DateTime<Utc>,
) -> (Verdict, CycleUsage) {
    let gate = gate(evidence);
    let failure = Failure {
        class: classification.class,
        confidence: classification.confidence,
        reset_at: classification.reset_at,
    };
    let usage = classification
        .class
        .policy_class()
        .map(|c| {
            let u = cycle.class(c);
            Usage {
                retries_used: u.retries_used,
                reset_used: u.reset_wait_used,
            }
        })
        .unwrap_or_default();
    let decision = evaluate(gate, &failure, policy, usage, None, now);
    let mut after = cycle;
    let mut verdict = Verdict {
        kind: decision.kind(),
        class: decision.class(),
        retry_ordinal: None,
        max_retries: None,
        delay_seconds: None,
        deadline: None,
        unsafe_reason: unsafe_reason(gate, &decision),
        summary: String::new(),
    };
    match decision {
        Decision::WaitForReset { class, deadline } => {
            after.class_mut(class).reset_wait_used = true;
            verdict.deadline = Some(deadline);
        }
        Decision::Retry {
            class,
            ordinal,
            max_retries,
            delay_seconds,
            deadline,
        } => {
            after.class_mut(class).retries_used = ordinal;
            verdict.retry_ordinal = Some(ordinal);
            verdict.max_retries = Some(max_retries);
            verdict.delay_seconds = Some(delay_seconds);
            verdict.deadline = Some(deadline);
        }
        Decision::Skip { .. } | Decision::Stop { .. } | Decision::Rejected(_) => {}
    }
    verdict.summary = summary(&decision, verdict.unsafe_reason, now);
    (verdict, after)
}

/// The decision in one sentence.
fn summary(decision: &Decision, unsafe_reason: Option<UnsafeReason>, now: DateTime<Utc>) -> String {
    let after =
        |deadline: DateTime<Utc>| format_duration((deadline - now).num_seconds().max(0) as u64);
    match *decision {
        Decision::WaitForReset { deadline, .. } => format!(
            "Wait {} for the reset at {}, then try once more.",
            after(deadline),
            deadline.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        Decision::Retry {
            ordinal,
            max_retries,
            deadline,
            ..
        } => format!(
            "Retry {ordinal} of {max_retries} in {}, at {}.",
            after(deadline),
            deadline.format("%Y-%m-%d %H:%M:%S UTC")
        ),
        Decision::Skip { .. } => {
            "Recovery is exhausted: skip this agent for the rest of this cycle.".into()
        }
        Decision::Stop { .. } => "Recovery is exhausted: stop for a person.".into(),
        Decision::Rejected(Rejection::Unclassified) => {
            "Stop for a person: the failure was not recognised.".into()
        }
        Decision::Rejected(Rejection::NotProvider) => {
            "Stop: not the provider's failure; its owner handles it.".into()
        }
        Decision::Rejected(Rejection::EffectUnsafe) => format!(
            "Stop for a person: unsafe to repeat, because {}.",
            unsafe_reason
                .map(unsafe_words)
                .unwrap_or("work may have begun")
        ),
        Decision::Rejected(Rejection::Stale) => "Ignored: the report is stale.".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use classify::{classify_at, Catalogue};
    use domain::concrete::ClassUsage;
    use domain::policy::{ClassPolicy, OnExhausted, RetryPolicy, WaitForReset};
    use domain::route::DecisionKind;

    fn now() -> DateTime<Utc> {
        "2026-11-30T12:00:00Z".parse().unwrap()
    }

    fn overloaded(phase: &str, extra: serde_json::Value) -> Evidence {
        let mut items = vec![serde_json::json!({"kind": "http", "status": 529,
            "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"})];
        if !extra.is_null() {
            items.insert(0, extra);
        }
        Evidence::from_json_value(&serde_json::json!({"phase": phase, "items": items})).unwrap()
    }

    fn retrying(max_retries: u32) -> CandidatePolicy {
        CandidatePolicy {
            transient: ClassPolicy {
                retry: RetryPolicy {
                    enabled: true,
                    max_retries,
                    initial_interval_seconds: 5,
                },
                wait_for_reset: WaitForReset::default(),
                on_exhausted: OnExhausted::Stop,
            },
            ..CandidatePolicy::default()
        }
    }

    #[test]
    fn retries_count_through_the_answered_cycle_then_the_outcome() {
        let e = overloaded("prompt", serde_json::Value::Null);
        let c = classify_at(Catalogue::builtin(), &e, now());
        let mut cycle = CycleUsage::default();
        let mut delays = vec![];
        loop {
            let (v, after) = decide(&c, &e, &retrying(3), cycle, now());
            if v.kind != DecisionKind::Retry {
                assert_eq!(v.kind, DecisionKind::Stop);
                break;
            }
            delays.push(v.delay_seconds.unwrap());
            cycle = after;
        }
        assert_eq!(delays, [5, 10, 20]);
        assert_eq!(
            cycle.transient,
            ClassUsage {
                retries_used: 3,
                reset_wait_used: false
            }
        );
    }

    #[test]
    fn the_gate_reads_the_phase_and_the_items() {
        let policy = retrying(3);
        for (phase, extra, reason) in [
            (
                "stream",
                serde_json::Value::Null,
                UnsafeReason::OutputStarted,
            ),
            (
                "teardown",
                serde_json::Value::Null,
                UnsafeReason::AtTeardown,
            ),
            (
                "prompt",
                serde_json::json!({"kind": "acp_update", "update": "tool_call", "text": "ls"}),
                UnsafeReason::EffectsInEvidence,
            ),
        ] {
            let e = overloaded(phase, extra);
            let c = classify_at(Catalogue::builtin(), &e, now());
            let (v, after) = decide(&c, &e, &policy, CycleUsage::default(), now());
            assert_eq!(v.kind, DecisionKind::EffectUnsafe, "{phase}");
            assert_eq!(v.unsafe_reason, Some(reason));
            assert_eq!(after, CycleUsage::default());
        }
        // A resume claim alone does not open the gate.
        let e = Evidence::from_json_value(&serde_json::json!({"phase": "stream",
            "resumable": {"provider_session_id": "s", "generation": 2},
            "items": [{"kind": "http", "status": 529}]}))
        .unwrap();
        assert!(matches!(gate(&e), GateVerdict::EffectUnsafe(_)));
    }
}
