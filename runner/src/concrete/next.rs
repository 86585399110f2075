//! What a concrete session does with the service's decision: wait until
//! a deadline and try again, or stop with the reason — and the lines that
//! say so, worded as the route runner's are (`domain::words`). Pure: no
//! I/O, no clock.

use chrono::{DateTime, Utc};
use domain::concrete::EvaluateAnswer;
use domain::route::DecisionKind;
use domain::words::{reason_words, safe_cause, unsafe_words};

/// The runner's next step after a failure.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Try the agent again once the server's clock reaches `deadline`;
    /// `awaited` says what the wait is for.
    Wait {
        deadline: DateTime<Utc>,
        awaited: String,
    },
    /// Nothing more runs; `reason` says why, for a person.
    Stop { reason: String },
}

/// The failure's cause from its code, with the provider's HTTP status
/// when the evidence had one: "Provider overloaded (529)".
pub fn cause(answer: &EvaluateAnswer, http_status: Option<u16>) -> String {
    let text = safe_cause(&answer.classification.code);
    match http_status {
        Some(s) => format!("{text} ({s})"),
        None => text,
    }
}

/// When a deadline falls, on the server's clock (UTC, to the second).
pub fn at(deadline: DateTime<Utc>) -> String {
    deadline.format("%Y-%m-%d %H:%M:%S UTC").to_string()
}

/// What the runner does for `answer`. A wait without a deadline, or a
/// decision a concrete session cannot follow, stops (fail closed).
pub fn next(answer: &EvaluateAnswer, label: &str, cause: &str) -> Next {
    let d = &answer.decision;
    let stop = |reason: String| Next::Stop { reason };
    match (d.kind, d.deadline) {
        (DecisionKind::Retry, Some(deadline)) => Next::Wait {
            deadline,
            awaited: format!(
                "retry {} of {} of {label} after {cause}",
                d.retry_ordinal.unwrap_or(0),
                d.max_retries.unwrap_or(0)
            ),
        },
        (DecisionKind::WaitForReset, Some(deadline)) => Next::Wait {
            deadline,
            awaited: format!("{label}'s provider reset after {cause}, then one more try"),
        },
        (DecisionKind::Retry | DecisionKind::WaitForReset, None) => stop(format!(
            "the service decided to {} but gave no time, so nothing is tried again.",
            d.kind.as_str().replace('_', " ")
        )),
        (DecisionKind::Skip, _) => stop(
            "Recovery for this error is used up, and a concrete session has no other agent \
             to skip to."
                .into(),
        ),
        (DecisionKind::Stop, _) => stop(
            "Recovery for this error is used up (or the concrete policy does not recover from \
             it)."
                .into(),
        ),
        (DecisionKind::Unclassified, _) => {
            stop(reason_words(&domain::route::StopReason::Unclassified))
        }
        (DecisionKind::NotProvider, _) => {
            stop(reason_words(&domain::route::StopReason::NotProvider))
        }
        (DecisionKind::EffectUnsafe, _) => {
            let mut reason = reason_words(&domain::route::StopReason::EffectUnsafe);
            if let Some(r) = d.unsafe_reason {
                reason.push_str(&format!(" Here {}.", unsafe_words(r)));
            }
            stop(reason)
        }
        (DecisionKind::Stale | DecisionKind::LateEffect | DecisionKind::Returned, _) => {
            stop(format!(
                "the service answered `{}`, which a concrete session cannot follow, so nothing is \
             tried again.",
                d.kind.as_str()
            ))
        }
    }
}

/// One line for the decision: the cause, the rule that decided, and what
/// happens — "Provider overloaded (529) [transient provider_overloaded ·
/// rule anthropic.overloaded] → retry 1 of 3 at 2026-11-30 12:00:05 UTC".
pub fn decision_line(answer: &EvaluateAnswer, cause: &str) -> String {
    let c = &answer.classification;
    let d = &answer.decision;
    let then = match (d.kind, d.deadline) {
        (DecisionKind::Retry, Some(t)) => format!(
            "retry {} of {} at {}",
            d.retry_ordinal.unwrap_or(0),
            d.max_retries.unwrap_or(0),
            at(t)
        ),
        (DecisionKind::WaitForReset, Some(t)) => format!(
            "wait for the provider's reset at {}, then try once more",
            at(t)
        ),
        (DecisionKind::Unclassified, _) => "stop: the error was not recognised".into(),
        (DecisionKind::NotProvider, _) => "stop: not the provider's error".into(),
        (DecisionKind::EffectUnsafe, _) => {
            "stop: it may have come after the agent started working".into()
        }
        _ => "stop".into(),
    };
    format!(
        "{cause} [{} {} · rule {}] → {then}",
        c.class, c.code, c.classifier_rule
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::concrete::{CycleUsage, Verdict};
    use domain::policy::PolicyClass;
    use domain::route::UnsafeReason;
    use serde_json::json;

    fn answer(kind: &str, deadline: Option<&str>) -> EvaluateAnswer {
        let classification = serde_json::from_value(json!({
            "code": "provider_overloaded", "class": "transient", "catalogue_version": "1",
            "confidence": "high", "scope": "provider", "classifier_rule": "anthropic.overloaded",
            "provider_id": "anthropic", "model_id": null, "phase": "prompt",
            "occurred_at": "2026-11-30T12:00:00Z", "retry_after_seconds": null,
            "reset_at": null, "safe_excerpt": ""
        }))
        .expect("a classification");
        EvaluateAnswer {
            classification,
            decision: Verdict {
                kind: serde_json::from_value(json!(kind)).expect("a kind"),
                class: Some(PolicyClass::Transient),
                retry_ordinal: Some(1),
                max_retries: Some(3),
                delay_seconds: Some(5),
                deadline: deadline.map(|d| d.parse().expect("a time")),
                unsafe_reason: None,
                summary: String::new(),
            },
            cycle: CycleUsage::default(),
        }
    }

    #[test]
    fn a_retry_waits_until_its_deadline_and_says_so() {
        let a = answer("retry", Some("2026-11-30T12:00:05Z"));
        let cause = cause(&a, Some(529));
        assert_eq!(cause, "Provider overloaded (529)");
        assert_eq!(
            decision_line(&a, &cause),
            "Provider overloaded (529) [transient provider_overloaded · rule anthropic.overloaded] \
             → retry 1 of 3 at 2026-11-30 12:00:05 UTC"
        );
        match next(&a, "claude", &cause) {
            Next::Wait { deadline, awaited } => {
                assert_eq!(at(deadline), "2026-11-30 12:00:05 UTC");
                assert_eq!(
                    awaited,
                    "retry 1 of 3 of claude after Provider overloaded (529)"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_reset_wait_names_the_reset() {
        let a = answer("wait_for_reset", Some("2026-11-30T12:10:00Z"));
        assert!(decision_line(&a, "Usage limit reached").ends_with(
            "→ wait for the provider's reset at 2026-11-30 12:10:00 UTC, then try once more"
        ));
        assert!(matches!(next(&a, "claude", "x"), Next::Wait { .. }));
    }

    #[test]
    fn everything_else_stops_with_its_reason() {
        let mut unsafe_answer = answer("effect_unsafe", None);
        unsafe_answer.decision.unsafe_reason = Some(UnsafeReason::EffectsInEvidence);
        let Next::Stop { reason } = next(&unsafe_answer, "claude", "x") else {
            panic!("stops");
        };
        assert!(reason.contains("repeat its effects"), "{reason}");
        assert!(
            reason.contains("output or tool activity before the error"),
            "{reason}"
        );
        for (kind, words) in [
            ("skip", "no other agent"),
            ("stop", "used up"),
            ("unclassified", "not recognised"),
            ("not_provider", "not the provider's"),
            ("stale", "cannot follow"),
        ] {
            match next(&answer(kind, None), "claude", "x") {
                Next::Stop { reason } => assert!(reason.contains(words), "{kind}: {reason}"),
                other => panic!("{kind}: {other:?}"),
            }
        }
        // A wait the service gave no time for is not guessed at.
        assert!(matches!(
            next(&answer("retry", None), "claude", "x"),
            Next::Stop { .. }
        ));
    }
}
