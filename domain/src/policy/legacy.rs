//! One-time normalisation of legacy candidate policies.
//!
//! Before version 1 a candidate carried one action for every failure, plus
//! optional per-code overrides. Two stored shapes exist:
//!
//! - a bare action string: `"retry_same"`, `"try_next"` or `"stop"`;
//! - an object `{"on_error": <action>, "per_code": {<code>: <action>, …}}`
//!   (`per_code` may also be a list of `{"code", "action"}` objects).
//!
//! Mapping (docs/design.md, “Legacy policies”): `try_next` → no wait, no
//! retry, skip; `stop` → no wait, no retry, stop; `retry_same` → one
//! same-candidate retry after 5 s, then stop. The default action sets both
//! classes; an explicit per-code rule overrides the class its code belongs
//! to.
//!
//! **Conflicts.** When per-code rules inside one class disagree, the most
//! conservative action wins, always: `stop` over `retry_same` over
//! `try_next`. Version 1 has one policy per class, so the per-code
//! distinction cannot survive; choosing the rule that does the least
//! automatic work means no code ends up retried or switched more than its
//! owner asked for. The order of rules in the stored document never matters.
//!
//! Rules naming `not_provider` or `unclassified` codes are dropped: no policy
//! acts on those classes any more. A rule naming a code the registry does
//! not know, or an unknown action, makes the document unmappable — it loads
//! as a configuration error and authorises no work.

use super::class::{ErrorClass, PolicyClass};
use super::document::{CandidatePolicy, ClassPolicy, OnExhausted, RetryPolicy};
use super::error::{FieldError, FieldErrorCode};
use super::limits::{LEGACY_RETRY_SAME_DELAY_SECONDS, POLICY_VERSION};
use super::reader::{join, Errors, Obj};
use serde_json::Value;

/// A legacy action, ordered from most to least automatic work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LegacyAction {
    TryNext,
    RetrySame,
    Stop,
}

impl LegacyAction {
    pub fn parse(s: &str) -> Option<LegacyAction> {
        match s {
            "try_next" => Some(LegacyAction::TryNext),
            "retry_same" => Some(LegacyAction::RetrySame),
            "stop" => Some(LegacyAction::Stop),
            _ => None,
        }
    }

    /// The version-1 class policy this action maps to.
    pub fn class_policy(self) -> ClassPolicy {
        match self {
            LegacyAction::TryNext => ClassPolicy::immediate(OnExhausted::Skip),
            LegacyAction::Stop => ClassPolicy::immediate(OnExhausted::Stop),
            LegacyAction::RetrySame => ClassPolicy {
                retry: RetryPolicy {
                    enabled: true,
                    max_retries: 1,
                    initial_interval_seconds: LEGACY_RETRY_SAME_DELAY_SECONDS,
                },
                on_exhausted: OnExhausted::Stop,
                ..ClassPolicy::default()
            },
        }
    }
}

/// Whether `v` is a legacy shape rather than a version-1 document.
pub fn is_legacy(v: &Value) -> bool {
    match v {
        Value::String(_) => true,
        Value::Object(map) => {
            !map.contains_key("version")
                && (map.contains_key("on_error") || map.contains_key("per_code"))
        }
        _ => false,
    }
}

fn read_action(v: &Value, path: &str, errs: &mut Errors) -> Option<LegacyAction> {
    let parsed = v.as_str().and_then(LegacyAction::parse);
    if parsed.is_none() {
        errs.push(FieldError::new(
            path,
            FieldErrorCode::LegacyUnmappable,
            format!("legacy action {v} is not one of \"retry_same\", \"try_next\", \"stop\""),
        ));
    }
    parsed
}

/// Per-code rules as (code, action) pairs with their paths.
fn read_rules(v: &Value, path: &str, errs: &mut Errors) -> Vec<(String, Value, String)> {
    match v {
        Value::Object(map) => map
            .iter()
            .map(|(code, action)| (code.clone(), action.clone(), join(path, code)))
            .collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .filter_map(|(i, item)| {
                let item_path = format!("{path}[{i}]");
                let code = item.get("code").and_then(Value::as_str);
                let action = item.get("action");
                match (code, action) {
                    (Some(code), Some(action)) => {
                        Some((code.to_string(), action.clone(), item_path))
                    }
                    _ => {
                        errs.push(FieldError::new(
                            item_path,
                            FieldErrorCode::LegacyUnmappable,
                            "a legacy per-code rule needs a `code` and an `action`",
                        ));
                        None
                    }
                }
            })
            .collect(),
        other => {
            errs.push(FieldError::new(
                path,
                FieldErrorCode::LegacyUnmappable,
                format!("legacy per-code rules must be an object or a list, not {other}"),
            ));
            Vec::new()
        }
    }
}

/// Normalises a legacy shape (see the module docs) into version 1.
pub fn normalise(
    v: &Value,
    path: &str,
    class_of: &dyn Fn(&str) -> Option<ErrorClass>,
    errs: &mut Errors,
) -> Option<CandidatePolicy> {
    let (default, rules) = match v {
        Value::String(_) => (read_action(v, path, errs), Vec::new()),
        _ => {
            let o = Obj::read(v, path, errs)?;
            o.reject_unknown(&["on_error", "per_code"], errs);
            // A legacy document without a default behaved like `try_next`.
            let default = match o.get("on_error") {
                Some(a) => read_action(a, &o.at("on_error"), errs),
                None => Some(LegacyAction::TryNext),
            };
            let rules = o
                .get("per_code")
                .map(|r| read_rules(r, &o.at("per_code"), errs))
                .unwrap_or_default();
            (default, rules)
        }
    };

    // The most conservative explicit rule per class (Ord: Stop is greatest).
    let mut explicit: [Option<LegacyAction>; 2] = [None, None];
    for (code, action, rule_path) in rules {
        let Some(action) = read_action(&action, &rule_path, errs) else {
            continue;
        };
        match class_of(&code) {
            Some(class) => {
                if let Some(pc) = class.policy_class() {
                    let slot = &mut explicit[pc as usize];
                    *slot = Some(slot.map_or(action, |a| a.max(action)));
                }
            }
            None => errs.push(FieldError::new(
                rule_path,
                FieldErrorCode::LegacyUnmappable,
                format!("legacy rule names unknown error code `{code}`"),
            )),
        }
    }

    let default = default?;
    let for_class = |pc: PolicyClass| explicit[pc as usize].unwrap_or(default).class_policy();
    Some(CandidatePolicy {
        version: POLICY_VERSION,
        transient: for_class(PolicyClass::Transient),
        hard: for_class(PolicyClass::Hard),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::validate::validate_policy;
    use proptest::prelude::*;
    use serde_json::json;

    fn norm(v: Value) -> Result<CandidatePolicy, Vec<FieldError>> {
        validate_policy(&v)
    }

    #[test]
    fn maps_each_bare_action() {
        let p = norm(json!("try_next")).unwrap();
        assert_eq!(p.transient, ClassPolicy::immediate(OnExhausted::Skip));
        assert_eq!(p.hard, ClassPolicy::immediate(OnExhausted::Skip));
        let p = norm(json!("stop")).unwrap();
        assert_eq!(p.hard, ClassPolicy::immediate(OnExhausted::Stop));
        let p = norm(json!("retry_same")).unwrap();
        assert_eq!(p.transient.retry.max_retries, 1);
        assert_eq!(p.transient.retry.initial_interval_seconds, 5);
        assert_eq!(p.transient.on_exhausted, OnExhausted::Stop);
        assert_eq!(p.hard, p.transient);
    }

    #[test]
    fn a_per_code_rule_overrides_its_class_only() {
        let p = norm(json!({"on_error": "retry_same", "per_code": {"quota_limited": "try_next"}}))
            .unwrap();
        assert_eq!(p.transient, LegacyAction::RetrySame.class_policy());
        assert_eq!(p.hard, ClassPolicy::immediate(OnExhausted::Skip));
    }

    #[test]
    fn conflicting_rules_resolve_to_the_most_conservative_in_any_order() {
        let a = norm(json!({"on_error": "try_next", "per_code": [
            {"code": "provider_overloaded", "action": "retry_same"},
            {"code": "rate_limited", "action": "stop"},
            {"code": "network_unavailable", "action": "try_next"}]}))
        .unwrap();
        let b = norm(json!({"on_error": "try_next", "per_code": [
            {"code": "network_unavailable", "action": "try_next"},
            {"code": "rate_limited", "action": "stop"},
            {"code": "provider_overloaded", "action": "retry_same"}]}))
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.transient, ClassPolicy::immediate(OnExhausted::Stop));
        assert_eq!(a.hard, ClassPolicy::immediate(OnExhausted::Skip));
    }

    #[test]
    fn rules_for_unconfigurable_classes_are_dropped() {
        let p = norm(
            json!({"on_error": "stop", "per_code": {"context_window_exceeded": "retry_same"}}),
        )
        .unwrap();
        assert_eq!(p, norm(json!("stop")).unwrap());
    }

    #[test]
    fn unmappable_documents_say_why() {
        let errs = norm(json!({"on_error": "retry_forever"})).unwrap_err();
        assert_eq!(errs[0].field, "on_error");
        assert_eq!(errs[0].code, FieldErrorCode::LegacyUnmappable);
        let errs =
            norm(json!({"on_error": "stop", "per_code": {"solar_flare": "stop"}})).unwrap_err();
        assert_eq!(errs[0].field, "per_code.solar_flare");
        assert!(norm(json!("pause")).is_err());
    }

    fn arb_action() -> impl Strategy<Value = &'static str> {
        prop_oneof![Just("retry_same"), Just("try_next"), Just("stop")]
    }

    proptest! {
        #[test]
        fn normalisation_is_idempotent(
            default in arb_action(),
            rules in proptest::collection::vec((0usize..crate::policy::class::BUILTIN_CODES.len(), arb_action()), 0..6),
        ) {
            let per_code: serde_json::Map<String, Value> = rules
                .iter()
                .map(|(i, a)| (crate::policy::class::BUILTIN_CODES[*i].0.to_string(), json!(a)))
                .collect();
            let legacy = json!({"on_error": default, "per_code": per_code});
            let once = validate_policy(&legacy).unwrap();
            let twice = validate_policy(&serde_json::to_value(once).unwrap()).unwrap();
            prop_assert_eq!(once, twice);
        }
    }
}
