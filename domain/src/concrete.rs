//! Concrete sessions: a session on one concrete agent profile, not a
//! dynamic route, that still uses the service's classifier, policy
//! evaluator and effect-safety gate. `POST /classify` takes an evidence
//! envelope and answers its [`Classification`]; `POST /policies/evaluate`
//! takes an [`EvaluateRequest`] — one candidate's policy document, the
//! envelope and what the session already used in this cycle — and answers
//! the decision the evaluator would take ([`EvaluateAnswer`]). Nothing is
//! stored, scheduled or dispatched: the caller keeps its own product
//! defaults and its own timers, and shares the classes, timing and gate.
//!
//! The request is read with the policy validator's field-error reader, so
//! a bad document is refused with the same paths a profile would get
//! (`policy.transient.retry.max_retries`).

use crate::classification::Classification;
use crate::evidence::Evidence;
use crate::policy::class::builtin_class_of;
use crate::policy::reader::{Errors, Obj};
use crate::policy::validate::read_candidate_policy;
use crate::policy::{CandidatePolicy, FieldError, FieldErrorCode, PolicyClass};
use crate::route::{DecisionKind, UnsafeReason};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What one class already used in the session's current cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ClassUsage {
    /// Retries of this class already made (the next retry is this + 1).
    pub retries_used: u32,
    /// Whether this class already waited for a reset (once per cycle).
    pub reset_wait_used: bool,
}

/// What the session already used in its current cycle, per class (a
/// class left out has used nothing). The answer carries the cycle after
/// the decision, to send with the next failure of the same cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CycleUsage {
    pub transient: ClassUsage,
    pub hard: ClassUsage,
}

impl CycleUsage {
    pub fn class(&self, class: PolicyClass) -> &ClassUsage {
        match class {
            PolicyClass::Transient => &self.transient,
            PolicyClass::Hard => &self.hard,
        }
    }

    pub fn class_mut(&mut self, class: PolicyClass) -> &mut ClassUsage {
        match class {
            PolicyClass::Transient => &mut self.transient,
            PolicyClass::Hard => &mut self.hard,
        }
    }
}

/// `POST /policies/evaluate` body.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EvaluateRequest {
    /// One candidate's policy document (version 1; a legacy shape is
    /// normalised as a profile's would be).
    pub policy: CandidatePolicy,
    /// The failure, as `POST /classify` takes it. Route identity is not
    /// read; `phase` and the items decide the effect-safety gate.
    pub evidence: Evidence,
    /// What this cycle already used (default: nothing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycle: Option<CycleUsage>,
}

impl EvaluateRequest {
    /// Reads a request body, collecting every problem with its path.
    pub fn read(v: &Value) -> Result<EvaluateRequest, Vec<FieldError>> {
        let mut errs = Errors::default();
        let request = errs.checked(|errs| {
            let o = Obj::read(v, "", errs)?;
            o.reject_unknown(&["policy", "evidence", "cycle"], errs);
            let policy = o
                .required("policy", errs)
                .and_then(|p| read_candidate_policy(p, &o.at("policy"), &builtin_class_of, errs));
            let evidence =
                o.required("evidence", errs)
                    .and_then(|e| match Evidence::from_json_value(e) {
                        Ok(e) => Some(e),
                        Err(e) => {
                            errs.push(FieldError::new(
                                "evidence",
                                FieldErrorCode::InvalidType,
                                format!("must be an evidence envelope: {e}"),
                            ));
                            None
                        }
                    });
            let cycle = match o.get("cycle") {
                None => Some(None),
                Some(c) => read_cycle(c, &o.at("cycle"), errs).map(Some),
            };
            Some(EvaluateRequest {
                policy: policy?,
                evidence: evidence?,
                cycle: cycle?,
            })
        });
        errs.into_result(request)
    }
}

fn read_cycle(v: &Value, path: &str, errs: &mut Errors) -> Option<CycleUsage> {
    errs.checked(|errs| {
        let o = Obj::read(v, path, errs)?;
        o.reject_unknown(&["transient", "hard"], errs);
        let mut read_class = |field: &str| -> Option<ClassUsage> {
            let Some(c) = o.get(field) else {
                return Some(ClassUsage::default());
            };
            errs.checked(|errs| {
                let c = Obj::read(c, &o.at(field), errs)?;
                c.reject_unknown(&["retries_used", "reset_wait_used"], errs);
                let retries_used = c.count("retries_used", Some(0), errs);
                let reset_wait_used = match c.get("reset_wait_used") {
                    None => Some(false),
                    Some(_) => c.bool("reset_wait_used", errs),
                };
                Some(ClassUsage {
                    retries_used: retries_used?,
                    reset_wait_used: reset_wait_used?,
                })
            })
        };
        let transient = read_class("transient");
        let hard = read_class("hard");
        Some(CycleUsage {
            transient: transient?,
            hard: hard?,
        })
    })
}

/// The evaluator's decision for a concrete session: what to do and when.
/// Deadlines are absolute (UTC), from the server's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Verdict {
    /// `wait_for_reset` (wait until `deadline`, then try once more),
    /// `retry` (try again at `deadline`), `skip` (this candidate is done
    /// for the cycle), `stop` (a person decides), or the rejection:
    /// `unclassified`, `not_provider`, `effect_unsafe`.
    pub kind: DecisionKind,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "transient"))]
    pub class: Option<PolicyClass>,
    pub retry_ordinal: Option<u32>,
    pub max_retries: Option<u32>,
    pub delay_seconds: Option<u64>,
    pub deadline: Option<DateTime<Utc>>,
    /// Why an `effect_unsafe` failure may not be recovered from
    /// automatically (`boundary_unknown`, `output_started`,
    /// `at_teardown`, `effects_in_evidence`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsafe_reason: Option<UnsafeReason>,
    /// The decision in one sentence for people.
    pub summary: String,
}

/// `POST /policies/evaluate` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EvaluateAnswer {
    pub classification: Classification,
    pub decision: Verdict,
    /// The cycle after this decision: send it with the next failure of
    /// the same cycle (a success starts a new cycle: send none).
    pub cycle: CycleUsage,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn off() -> Value {
        json!({"retry": {"enabled": false}, "wait_for_reset": {"enabled": false}, "on_exhausted": "skip"})
    }

    #[test]
    fn reads_a_request_and_defaults_the_cycle() {
        let r = EvaluateRequest::read(&json!({
            "policy": {"version": 1, "transient": off(), "hard": off()},
            "evidence": {"phase": "prompt", "items": []}
        }))
        .unwrap();
        assert_eq!(r.cycle, None);
        let r = EvaluateRequest::read(&json!({
            "policy": {"version": 1, "transient": off(), "hard": off()},
            "evidence": {},
            "cycle": {"hard": {"retries_used": 2}}
        }))
        .unwrap();
        let cycle = r.cycle.unwrap();
        assert_eq!(cycle.hard.retries_used, 2);
        assert!(!cycle.hard.reset_wait_used);
        assert_eq!(cycle.transient, ClassUsage::default());
    }

    #[test]
    fn refuses_bad_input_with_field_paths() {
        let errors = EvaluateRequest::read(&json!({
            "policy": {"version": 1, "transient": {"retry": {"enabled": true, "max_retries": 99,
                "initial_interval_seconds": 5}, "wait_for_reset": {"enabled": false},
                "on_exhausted": "skip"}, "hard": off()},
            "evidence": [1],
            "cycle": {"transient": {"retries_used": -1, "reset_wait_used": "no"}, "warm": {}},
            "extra": true
        }))
        .unwrap_err();
        let mut fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        fields.sort();
        assert_eq!(
            fields,
            [
                "cycle.transient.reset_wait_used",
                "cycle.transient.retries_used",
                "cycle.warm",
                "evidence",
                "extra",
                "policy.transient.retry.max_retries",
            ]
        );
        let missing = EvaluateRequest::read(&json!({})).unwrap_err();
        let fields: Vec<&str> = missing.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["policy", "evidence"]);
    }

    #[test]
    fn the_request_serialises_to_what_it_reads() {
        let request = EvaluateRequest::read(&json!({
            "policy": {"version": 1, "transient": off(), "hard": off()},
            "evidence": {"phase": "prompt", "items": [{"kind": "http", "status": 529}]},
            "cycle": {"transient": {"retries_used": 1, "reset_wait_used": true}}
        }))
        .unwrap();
        let again = EvaluateRequest::read(&serde_json::to_value(&request).unwrap()).unwrap();
        assert_eq!(again, request);
    }
}
