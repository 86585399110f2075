//! The concrete policy of `run --agent`: the runner's product defaults for
//! a session on one agent, overridden by flags in the policy document's
//! words, and checked by the same validator a profile's candidate goes
//! through (so a flag out of range gets the profile's message, addressed
//! to the flag). Pure: no I/O, no clock.

use crate::args::ConcreteFlags;
use domain::policy::limits::POLICY_VERSION;
use domain::policy::validate::validate_policy;
use domain::policy::{CandidatePolicy, ClassPolicy, OnExhausted, RetryPolicy, WaitForReset};

/// Transient errors are retried this many times by default…
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// …after 5 s, then 10 s, then 20 s.
pub const DEFAULT_INITIAL_INTERVAL_SECONDS: u32 = 5;
/// A trusted reset up to six hours away is waited for (a five-hour
/// subscription window fits; a monthly spend limit does not).
pub const DEFAULT_WAIT_FOR_RESET_SECONDS: u32 = 6 * 3600;

/// The policy the flags give, or a message naming the flag that is wrong.
///
/// Both classes stop once their recovery is used up: a concrete session
/// has no other candidate to skip to. Hard errors are never retried
/// blindly; only a trusted reset is waited for.
pub fn concrete_policy(flags: &ConcreteFlags) -> Result<CandidatePolicy, String> {
    let max_retries = flags.max_retries.unwrap_or(DEFAULT_MAX_RETRIES);
    let initial = match &flags.initial_interval {
        Some(text) => seconds_flag("--initial-interval", text)?,
        None => DEFAULT_INITIAL_INTERVAL_SECONDS,
    };
    let wait = match &flags.wait_for_reset {
        Some(text) => seconds_flag("--wait-for-reset", text)?,
        None => DEFAULT_WAIT_FOR_RESET_SECONDS,
    };
    let wait_for_reset = WaitForReset {
        enabled: wait > 0,
        max_wait_seconds: wait,
    };
    let policy = CandidatePolicy {
        version: POLICY_VERSION,
        transient: ClassPolicy {
            retry: RetryPolicy {
                enabled: max_retries > 0,
                max_retries,
                initial_interval_seconds: initial,
            },
            wait_for_reset,
            on_exhausted: OnExhausted::Stop,
        }
        .canonical(),
        hard: ClassPolicy {
            retry: RetryPolicy::default(),
            wait_for_reset,
            on_exhausted: OnExhausted::Stop,
        }
        .canonical(),
    };
    let document = serde_json::to_value(policy).map_err(|e| e.to_string())?;
    validate_policy(&document).map_err(|errors| {
        errors
            .iter()
            .map(|e| format!("{}: {}", flag_of(&e.field), e.message))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The flag that sets a policy field.
fn flag_of(field: &str) -> &'static str {
    if field.ends_with("max_retries") {
        "--max-retries"
    } else if field.ends_with("initial_interval_seconds") {
        "--initial-interval"
    } else if field.ends_with("max_wait_seconds") {
        "--wait-for-reset"
    } else {
        "the concrete policy"
    }
}

fn seconds_flag(flag: &str, text: &str) -> Result<u32, String> {
    let seconds = parse_duration(text).map_err(|e| format!("{flag}: {e}"))?;
    u32::try_from(seconds).map_err(|_| format!("{flag}: `{text}` is far too long"))
}

/// Seconds in a duration: `90s`, `5m`, `6h`, `1d`, `1h30m`, plain seconds
/// (`300`), or `off` / `0` for none.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_lowercase();
    let bad = || format!("`{text}` is not a duration; write e.g. 90s, 5m, 6h, 1d or 1h30m");
    if t == "off" {
        return Ok(0);
    }
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(seconds) = t.parse::<u64>() {
        return Ok(seconds);
    }
    let mut total: u64 = 0;
    let mut number = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            'd' => 86_400,
            'h' => 3_600,
            'm' => 60,
            's' => 1,
            _ => return Err(bad()),
        };
        let n: u64 = number.parse().map_err(|_| bad())?;
        number.clear();
        total = n
            .checked_mul(unit)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(bad)?;
    }
    if !number.is_empty() {
        return Err(bad());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(max: Option<u32>, initial: Option<&str>, wait: Option<&str>) -> ConcreteFlags {
        ConcreteFlags {
            max_retries: max,
            initial_interval: initial.map(str::to_string),
            wait_for_reset: wait.map(str::to_string),
        }
    }

    #[test]
    fn the_defaults_retry_transient_errors_and_wait_six_hours_for_a_reset() {
        let p = concrete_policy(&ConcreteFlags::default()).expect("valid");
        assert_eq!(
            p.transient.retry,
            RetryPolicy {
                enabled: true,
                max_retries: 3,
                initial_interval_seconds: 5
            }
        );
        assert_eq!(p.hard.retry, RetryPolicy::default());
        for class in [p.transient, p.hard] {
            assert_eq!(class.wait_for_reset.max_wait_seconds, 21_600);
            assert!(class.wait_for_reset.enabled);
            assert_eq!(class.on_exhausted, OnExhausted::Stop);
        }
    }

    #[test]
    fn flags_override_and_zero_turns_a_section_off() {
        let p = concrete_policy(&flags(Some(5), Some("30s"), Some("1d"))).expect("valid");
        assert_eq!(p.transient.retry.max_retries, 5);
        assert_eq!(p.transient.retry.initial_interval_seconds, 30);
        assert_eq!(p.hard.wait_for_reset.max_wait_seconds, 86_400);
        let p = concrete_policy(&flags(Some(0), None, Some("off"))).expect("valid");
        assert!(!p.transient.retry.enabled);
        assert_eq!(p.transient.retry.initial_interval_seconds, 0, "canonical");
        assert!(!p.hard.wait_for_reset.enabled);
    }

    #[test]
    fn out_of_range_flags_are_named() {
        let e = concrete_policy(&flags(Some(11), None, None)).expect_err("too many");
        assert!(e.starts_with("--max-retries:"), "{e}");
        let e = concrete_policy(&flags(None, Some("2h"), None)).expect_err("too long");
        assert!(e.starts_with("--initial-interval:"), "{e}");
        let e = concrete_policy(&flags(None, None, Some("8d"))).expect_err("too long");
        assert!(e.starts_with("--wait-for-reset:"), "{e}");
        let e = concrete_policy(&flags(None, None, Some("soon"))).expect_err("not a duration");
        assert!(
            e.contains("--wait-for-reset: `soon` is not a duration"),
            "{e}"
        );
    }

    #[test]
    fn durations_read_as_people_write_them() {
        for (text, seconds) in [
            ("6h", 21_600),
            ("90s", 90),
            ("5m", 300),
            ("1d", 86_400),
            ("1h30m", 5_400),
            ("300", 300),
            (" 2H ", 7_200),
            ("off", 0),
            ("0", 0),
        ] {
            assert_eq!(parse_duration(text), Ok(seconds), "{text}");
        }
        for text in ["", "h", "6x", "1h30", "-5s", "99999999999999999999d"] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
    }
}
