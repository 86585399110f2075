//! Reading untrusted JSON into the typed policy document.
//!
//! Validation walks a `serde_json::Value` rather than deserialising straight
//! into the types, so that every problem — wrong type, missing field, out of
//! range, unknown field — is reported at once and addressed by its path, and
//! so that the browser form (which builds the same JSON from its inputs) gets
//! exactly the server's messages.

use super::class::ErrorClass;
use super::document::{CandidatePolicy, ClassPolicy, OnExhausted, RetryPolicy, WaitForReset};
use super::error::{FieldError, FieldErrorCode};
use super::legacy;
use super::limits::*;
use super::reader::{check_range, wrong_type, Errors, Obj};
use serde_json::Value;

fn read_retry(v: &Value, path: &str, errs: &mut Errors) -> Option<RetryPolicy> {
    errs.checked(|errs| {
        let o = Obj::read(v, path, errs)?;
        o.reject_unknown(
            &["enabled", "max_retries", "initial_interval_seconds"],
            errs,
        );
        let enabled = o.bool("enabled", errs);
        // Numbers may be omitted when the section is disabled: they store 0.
        let default = if enabled == Some(true) { None } else { Some(0) };
        let max_retries = o.count("max_retries", default, errs);
        let initial = o.count("initial_interval_seconds", default, errs);
        let enabled = enabled?;
        let (max_retries, initial) = (max_retries?, initial?);
        if enabled {
            check_range(
                max_retries,
                &o.at("max_retries"),
                "maximum retries",
                MIN_RETRIES,
                MAX_RETRIES,
                errs,
            );
            check_range(
                initial,
                &o.at("initial_interval_seconds"),
                "initial interval (seconds)",
                MIN_INITIAL_INTERVAL_SECONDS,
                MAX_INITIAL_INTERVAL_SECONDS,
                errs,
            );
        }
        Some(RetryPolicy {
            enabled,
            max_retries,
            initial_interval_seconds: initial,
        })
    })
}

fn read_wait(v: &Value, path: &str, errs: &mut Errors) -> Option<WaitForReset> {
    errs.checked(|errs| {
        let o = Obj::read(v, path, errs)?;
        o.reject_unknown(&["enabled", "max_wait_seconds"], errs);
        let enabled = o.bool("enabled", errs);
        let default = if enabled == Some(true) { None } else { Some(0) };
        let max_wait = o.count("max_wait_seconds", default, errs);
        let (enabled, max_wait) = (enabled?, max_wait?);
        if enabled {
            check_range(
                max_wait,
                &o.at("max_wait_seconds"),
                "maximum wait (seconds)",
                MIN_WAIT_SECONDS,
                MAX_WAIT_SECONDS,
                errs,
            );
        }
        Some(WaitForReset {
            enabled,
            max_wait_seconds: max_wait,
        })
    })
}

fn read_outcome(o: &Obj<'_>, errs: &mut Errors) -> Option<OnExhausted> {
    let path = o.at("on_exhausted");
    match o.required("on_exhausted", errs)? {
        Value::String(s) => OnExhausted::parse(s).or_else(|| {
            errs.push(FieldError::new(
                path,
                FieldErrorCode::InvalidValue,
                format!("`{s}` is not an outcome; use \"skip\" or \"stop\""),
            ));
            None
        }),
        other => {
            errs.push(wrong_type(&path, "\"skip\" or \"stop\"", other));
            None
        }
    }
}

/// Reads one class policy (`transient` or `hard`).
pub fn read_class_policy(v: &Value, path: &str, errs: &mut Errors) -> Option<ClassPolicy> {
    errs.checked(|errs| {
        let o = Obj::read(v, path, errs)?;
        o.reject_unknown(&["retry", "wait_for_reset", "on_exhausted"], errs);
        let retry = o
            .required("retry", errs)
            .and_then(|v| read_retry(v, &o.at("retry"), errs));
        let wait = o
            .required("wait_for_reset", errs)
            .and_then(|v| read_wait(v, &o.at("wait_for_reset"), errs));
        let on_exhausted = read_outcome(&o, errs);
        Some(
            ClassPolicy {
                retry: retry?,
                wait_for_reset: wait?,
                on_exhausted: on_exhausted?,
            }
            .canonical(),
        )
    })
}

/// Reads a candidate's policy document at `path`. Legacy shapes are
/// normalised to version 1 (see [`legacy`]); `class_of` names the class of a
/// code used in legacy per-code rules.
pub fn read_candidate_policy(
    v: &Value,
    path: &str,
    class_of: &dyn Fn(&str) -> Option<ErrorClass>,
    errs: &mut Errors,
) -> Option<CandidatePolicy> {
    if legacy::is_legacy(v) {
        return errs.checked(|errs| legacy::normalise(v, path, class_of, errs));
    }
    errs.checked(|errs| {
        let o = Obj::read(v, path, errs)?;
        o.reject_unknown(&["version", "transient", "hard"], errs);
        let version = o.required("version", errs).and_then(|v| {
            if v.as_u64() == Some(POLICY_VERSION as u64) {
                Some(POLICY_VERSION)
            } else {
                errs.push(FieldError::new(
                    o.at("version"),
                    FieldErrorCode::UnsupportedVersion,
                    format!("unsupported policy version {v}; this server understands version {POLICY_VERSION}"),
                ));
                None
            }
        });
        let transient = o
            .required("transient", errs)
            .and_then(|v| read_class_policy(v, &o.at("transient"), errs));
        let hard = o
            .required("hard", errs)
            .and_then(|v| read_class_policy(v, &o.at("hard"), errs));
        Some(CandidatePolicy {
            version: version?,
            transient: transient?,
            hard: hard?,
        })
    })
}

/// Validates a whole policy document on its own (paths relative to it).
pub fn validate_policy(v: &Value) -> Result<CandidatePolicy, Vec<FieldError>> {
    let mut errs = Errors::default();
    let policy = read_candidate_policy(v, "", &super::class::builtin_class_of, &mut errs);
    errs.into_result(policy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn class(retry: Value, wait: Value, outcome: &str) -> Value {
        json!({"retry": retry, "wait_for_reset": wait, "on_exhausted": outcome})
    }

    fn doc(transient: Value, hard: Value) -> Value {
        json!({"version": 1, "transient": transient, "hard": hard})
    }

    fn off() -> Value {
        class(json!({"enabled": false}), json!({"enabled": false}), "skip")
    }

    fn fields(r: Result<CandidatePolicy, Vec<FieldError>>) -> Vec<(String, FieldErrorCode)> {
        r.unwrap_err()
            .into_iter()
            .map(|e| (e.field, e.code))
            .collect()
    }

    #[test]
    fn accepts_a_full_document() {
        let v = doc(
            class(
                json!({"enabled": true, "max_retries": 3, "initial_interval_seconds": 5}),
                json!({"enabled": false, "max_wait_seconds": 0}),
                "skip",
            ),
            class(
                json!({"enabled": false, "max_retries": 0, "initial_interval_seconds": 0}),
                json!({"enabled": true, "max_wait_seconds": 300}),
                "stop",
            ),
        );
        let p = validate_policy(&v).unwrap();
        assert_eq!(p.transient.retry.max_retries, 3);
        assert_eq!(p.hard.wait_for_reset.max_wait_seconds, 300);
        assert_eq!(p.hard.on_exhausted, OnExhausted::Stop);
    }

    #[test]
    fn disabled_sections_store_zeros() {
        let v = doc(
            class(
                json!({"enabled": false, "max_retries": 4, "initial_interval_seconds": 9}),
                json!({"enabled": false, "max_wait_seconds": 60}),
                "skip",
            ),
            off(),
        );
        let p = validate_policy(&v).unwrap();
        assert_eq!(p.transient, ClassPolicy::default());
    }

    #[test]
    fn out_of_range_names_the_field_and_bounds() {
        let v = doc(
            class(
                json!({"enabled": true, "max_retries": 11, "initial_interval_seconds": 5}),
                json!({"enabled": true, "max_wait_seconds": 604_801}),
                "skip",
            ),
            off(),
        );
        let errs = validate_policy(&v).unwrap_err();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].field, "transient.retry.max_retries");
        assert_eq!(errs[0].code, FieldErrorCode::OutOfRange);
        assert_eq!((errs[0].min, errs[0].max), (Some(1), Some(10)));
        assert_eq!(errs[1].field, "transient.wait_for_reset.max_wait_seconds");
        assert_eq!(errs[1].max, Some(604_800));
    }

    #[test]
    fn table_of_bad_input() {
        let enabled =
            |n: Value| json!({"enabled": true, "max_retries": n, "initial_interval_seconds": 5});
        let cases: Vec<(Value, Vec<(&str, FieldErrorCode)>)> = vec![
            (
                json!({"version": 2, "transient": off(), "hard": off()}),
                vec![("version", FieldErrorCode::UnsupportedVersion)],
            ),
            (
                json!({"version": 1, "transient": off()}),
                vec![("hard", FieldErrorCode::Required)],
            ),
            (
                json!({"version": 1, "transient": off(), "hard": off(), "fatal": off()}),
                vec![("fatal", FieldErrorCode::UnknownField)],
            ),
            (
                doc(
                    class(enabled(json!("3")), json!({"enabled": false}), "skip"),
                    off(),
                ),
                vec![("transient.retry.max_retries", FieldErrorCode::InvalidType)],
            ),
            (
                doc(
                    class(enabled(json!(2.5)), json!({"enabled": false}), "skip"),
                    off(),
                ),
                vec![("transient.retry.max_retries", FieldErrorCode::NotInteger)],
            ),
            (
                doc(
                    class(enabled(json!(-1)), json!({"enabled": false}), "skip"),
                    off(),
                ),
                vec![("transient.retry.max_retries", FieldErrorCode::OutOfRange)],
            ),
            (
                doc(
                    class(enabled(json!(1e300)), json!({"enabled": false}), "skip"),
                    off(),
                ),
                vec![("transient.retry.max_retries", FieldErrorCode::OutOfRange)],
            ),
            (
                doc(
                    class(json!({"enabled": true}), json!({"enabled": false}), "skip"),
                    off(),
                ),
                vec![
                    ("transient.retry.max_retries", FieldErrorCode::Required),
                    (
                        "transient.retry.initial_interval_seconds",
                        FieldErrorCode::Required,
                    ),
                ],
            ),
            (
                doc(
                    off(),
                    class(
                        json!({"enabled": false}),
                        json!({"enabled": false}),
                        "pause",
                    ),
                ),
                vec![("hard.on_exhausted", FieldErrorCode::InvalidValue)],
            ),
            (
                doc(
                    off(),
                    json!({"retry": {"enabled": "yes"}, "wait_for_reset": {"enabled": false}, "on_exhausted": "stop"}),
                ),
                vec![("hard.retry.enabled", FieldErrorCode::InvalidType)],
            ),
            (json!([]), vec![("", FieldErrorCode::InvalidType)]),
        ];
        for (input, want) in cases {
            let got = fields(validate_policy(&input));
            let want: Vec<(String, FieldErrorCode)> =
                want.into_iter().map(|(f, c)| (f.to_string(), c)).collect();
            assert_eq!(got, want, "input {input}");
        }
    }

    /// Any valid, canonical document.
    pub(crate) fn arb_policy() -> impl Strategy<Value = CandidatePolicy> {
        let retry = (
            any::<bool>(),
            MIN_RETRIES..=MAX_RETRIES,
            MIN_INITIAL_INTERVAL_SECONDS..=MAX_INITIAL_INTERVAL_SECONDS,
        )
            .prop_map(
                |(enabled, max_retries, initial_interval_seconds)| RetryPolicy {
                    enabled,
                    max_retries,
                    initial_interval_seconds,
                },
            );
        let wait = (any::<bool>(), MIN_WAIT_SECONDS..=MAX_WAIT_SECONDS).prop_map(
            |(enabled, max_wait_seconds)| WaitForReset {
                enabled,
                max_wait_seconds,
            },
        );
        let outcome = prop_oneof![Just(OnExhausted::Skip), Just(OnExhausted::Stop)];
        let class = (retry, wait, outcome).prop_map(|(retry, wait_for_reset, on_exhausted)| {
            ClassPolicy {
                retry,
                wait_for_reset,
                on_exhausted,
            }
            .canonical()
        });
        (class.clone(), class).prop_map(|(transient, hard)| CandidatePolicy {
            version: POLICY_VERSION,
            transient,
            hard,
        })
    }

    proptest! {
        #[test]
        fn accepted_documents_round_trip_through_json(p in arb_policy()) {
            let json = serde_json::to_value(p).unwrap();
            let again = validate_policy(&json).unwrap();
            prop_assert_eq!(again, p);
            let text = serde_json::to_string(&again).unwrap();
            let typed: CandidatePolicy = serde_json::from_str(&text).unwrap();
            prop_assert_eq!(typed, p);
        }

        #[test]
        fn arbitrary_numbers_never_panic_and_are_judged_by_the_limits(n in any::<i64>(), f in any::<f64>()) {
            for value in [json!(n), json!(f)] {
                let v = doc(class(json!({"enabled": true, "max_retries": value, "initial_interval_seconds": 5}), json!({"enabled": false}), "skip"), off());
                let ok = validate_policy(&v).is_ok();
                let in_range = value.as_f64().map(|x| x.fract() == 0.0 && (1.0..=10.0).contains(&x)).unwrap_or(false);
                prop_assert_eq!(ok, in_range);
            }
        }
    }
}
