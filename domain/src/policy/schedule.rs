//! The retry schedule: delay n (1-based) is `initial × 2^(n−1)` seconds,
//! each delay capped at 24 hours. Saturating arithmetic keeps every input,
//! however absurd, from overflowing.

use super::document::{ClassPolicy, OnExhausted, RetryPolicy};
use super::limits::MAX_RETRY_DELAY_SECONDS;

/// Delay before retry number `ordinal` (1-based). Ordinal 0 is treated as 1.
pub fn retry_delay_seconds(initial_interval_seconds: u32, ordinal: u32) -> u64 {
    let exponent = ordinal.saturating_sub(1);
    // 2^exponent overflows u64 past 63; by then the cap has long applied.
    let factor = 1u64.checked_shl(exponent).unwrap_or(u64::MAX);
    (initial_interval_seconds as u64)
        .saturating_mul(factor)
        .min(MAX_RETRY_DELAY_SECONDS)
}

/// Every delay an enabled retry policy implies, in order. Empty when retry
/// is disabled.
pub fn retry_schedule(retry: &RetryPolicy) -> Vec<u64> {
    if !retry.enabled {
        return Vec::new();
    }
    (1..=retry.max_retries)
        .map(|n| retry_delay_seconds(retry.initial_interval_seconds, n))
        .collect()
}

/// "5 s", "2 min", "1 h 30 min", "2 d": short, exact where it matters.
pub fn format_duration(seconds: u64) -> String {
    const MIN: u64 = 60;
    const HOUR: u64 = 3_600;
    const DAY: u64 = 86_400;
    let parts = [
        (seconds / DAY, "d"),
        ((seconds % DAY) / HOUR, "h"),
        ((seconds % HOUR) / MIN, "min"),
        (seconds % MIN, "s"),
    ];
    let shown: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n} {unit}"))
        .collect();
    if shown.is_empty() {
        "0 s".to_string()
    } else {
        shown.join(" ")
    }
}

/// The plain-language schedule a class policy implies, as the settings form
/// and the validate preview show it: "Retry after 5 s, 10 s, 20 s, then skip
/// to the next candidate."
pub fn describe(policy: &ClassPolicy) -> String {
    let outcome = match policy.on_exhausted {
        OnExhausted::Skip => "skip to the next candidate",
        OnExhausted::Stop => "stop for manual recovery",
    };
    let delays = retry_schedule(&policy.retry);
    let retry_part = if delays.is_empty() {
        None
    } else {
        let list: Vec<String> = delays.iter().map(|d| format_duration(*d)).collect();
        Some(format!("retry after {}, then {outcome}", list.join(", ")))
    };
    let main = match retry_part {
        Some(r) => r,
        None => format!("{outcome} immediately"),
    };
    let mut text = if policy.wait_for_reset.enabled {
        format!(
            "If the provider gives a trusted reset time within {}, wait for it and try once more; otherwise {main}.",
            format_duration(policy.wait_for_reset.max_wait_seconds as u64)
        )
    } else {
        format!("{main}.")
    };
    // Sentence case: the first letter is always ASCII here.
    text[..1].make_ascii_uppercase();
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn doubles_from_the_initial_interval() {
        let r = RetryPolicy {
            enabled: true,
            max_retries: 3,
            initial_interval_seconds: 5,
        };
        assert_eq!(retry_schedule(&r), vec![5, 10, 20]);
    }

    #[test]
    fn caps_each_delay_at_a_day() {
        let r = RetryPolicy {
            enabled: true,
            max_retries: 10,
            initial_interval_seconds: 3_600,
        };
        let s = retry_schedule(&r);
        assert_eq!(&s[..6], &[3_600, 7_200, 14_400, 28_800, 57_600, 86_400]);
        assert!(s[5..].iter().all(|d| *d == 86_400));
    }

    #[test]
    fn disabled_retry_has_no_schedule() {
        assert!(retry_schedule(&RetryPolicy::default()).is_empty());
    }

    #[test]
    fn formats_durations() {
        assert_eq!(format_duration(5), "5 s");
        assert_eq!(format_duration(90), "1 min 30 s");
        assert_eq!(format_duration(3_600), "1 h");
        assert_eq!(format_duration(604_800), "7 d");
        assert_eq!(format_duration(0), "0 s");
    }

    #[test]
    fn describes_the_schedule_in_words() {
        let mut p = ClassPolicy::default();
        assert_eq!(describe(&p), "Skip to the next candidate immediately.");
        p.retry = RetryPolicy {
            enabled: true,
            max_retries: 3,
            initial_interval_seconds: 5,
        };
        assert_eq!(
            describe(&p),
            "Retry after 5 s, 10 s, 20 s, then skip to the next candidate."
        );
        p.on_exhausted = OnExhausted::Stop;
        p.wait_for_reset.enabled = true;
        p.wait_for_reset.max_wait_seconds = 300;
        assert_eq!(
            describe(&p),
            "If the provider gives a trusted reset time within 5 min, wait for it and try once more; otherwise retry after 5 s, 10 s, 20 s, then stop for manual recovery."
        );
    }

    proptest! {
        #[test]
        fn schedule_is_monotone_and_capped(initial in any::<u32>(), ordinal in any::<u32>()) {
            let here = retry_delay_seconds(initial, ordinal);
            let next = retry_delay_seconds(initial, ordinal.saturating_add(1));
            prop_assert!(here <= next);
            prop_assert!(next <= MAX_RETRY_DELAY_SECONDS);
        }

        #[test]
        fn first_delay_is_the_initial_interval(initial in 1u32..=86_400) {
            prop_assert_eq!(retry_delay_seconds(initial, 1), initial as u64);
        }
    }
}
