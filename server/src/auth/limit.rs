//! Per-credential rate limits (evidence submission): a token bucket per
//! token or person, holding a minute's allowance and refilling steadily.
//! A runaway adapter is slowed down with 429 and `retry-after` instead of
//! filling the database; others are unaffected.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

pub struct RateLimit {
    per_minute: u32,
    buckets: Mutex<HashMap<String, Bucket>>,
}

struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    /// `per_minute` requests a minute, in bursts of up to as many.
    pub fn new(per_minute: u32) -> RateLimit {
        RateLimit {
            per_minute: per_minute.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one request for `key` at `now`; when none is left, answers
    /// the whole seconds until one is.
    pub fn take(&self, key: &str, now: Instant) -> Result<(), u64> {
        let capacity = f64::from(self.per_minute);
        let per_second = capacity / 60.0;
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        let bucket = buckets.entry(key.to_string()).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * per_second).min(capacity);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            Err(((1.0 - bucket.tokens) / per_second).ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_then_a_steady_rate_per_key() {
        let limit = RateLimit::new(60);
        let t0 = Instant::now();
        for _ in 0..60 {
            assert_eq!(limit.take("a", t0), Ok(()));
        }
        assert_eq!(limit.take("a", t0), Err(1));
        // Another token has its own allowance.
        assert_eq!(limit.take("b", t0), Ok(()));
        // One a second comes back.
        assert_eq!(limit.take("a", t0 + Duration::from_secs(1)), Ok(()));
        assert_eq!(limit.take("a", t0 + Duration::from_secs(1)), Err(1));
        let slow = RateLimit::new(6);
        for _ in 0..6 {
            slow.take("a", t0).unwrap();
        }
        assert_eq!(slow.take("a", t0), Err(10));
    }
}
