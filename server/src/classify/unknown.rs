//! A bounded in-memory log of evidence the catalogue did not recognise, so
//! the catalogue can grow from real failures (`GET /api/v1/catalogue/unknown`).
//!
//! Only sanitised excerpts are kept (never raw evidence). Entries are
//! de-duplicated by their excerpt with digits folded (`exit code 1` and
//! `exit code 2` are one entry), counted, and bounded: when full, the entry
//! seen longest ago is dropped and counted in `evicted`.

use super::classifier::Classification;
use app::policy::ErrorClass;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::Mutex;

/// Default number of distinct excerpts kept.
pub const DEFAULT_UNKNOWN_CAPACITY: usize = 256;

/// One distinct unrecognised excerpt.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct UnknownEntry {
    pub safe_excerpt: String,
    pub count: u64,
    pub first_seen: DateTime<Utc>,
    pub last_seen: DateTime<Utc>,
    /// `fallback.unmatched`, `fallback.conflict` or an explicit near-miss rule.
    pub classifier_rule: String,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    pub catalogue_version: String,
}

/// A copy of the log, most frequent first.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct UnknownSnapshot {
    pub capacity: usize,
    pub evicted: u64,
    pub entries: Vec<UnknownEntry>,
}

#[derive(Debug, Default)]
struct Inner {
    entries: HashMap<String, UnknownEntry>,
    evicted: u64,
}

/// The log; cheap to share behind an `Arc` in server state.
#[derive(Debug)]
pub struct UnknownLog {
    capacity: usize,
    inner: Mutex<Inner>,
}

impl Default for UnknownLog {
    fn default() -> Self {
        UnknownLog::new(DEFAULT_UNKNOWN_CAPACITY)
    }
}

impl UnknownLog {
    pub fn new(capacity: usize) -> UnknownLog {
        UnknownLog {
            capacity: capacity.max(1),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// Records `c` if it is unclassified; returns whether it was recorded.
    pub fn record(&self, c: &Classification) -> bool {
        if c.class != ErrorClass::Unclassified {
            return false;
        }
        let key = fold_digits(&c.safe_excerpt);
        let mut inner = match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        if let Some(e) = inner.entries.get_mut(&key) {
            e.count += 1;
            if c.occurred_at > e.last_seen {
                e.last_seen = c.occurred_at;
            }
            if c.occurred_at < e.first_seen {
                e.first_seen = c.occurred_at;
            }
            return true;
        }
        if inner.entries.len() >= self.capacity {
            let oldest = inner
                .entries
                .iter()
                .min_by(|a, b| (a.1.last_seen, a.0).cmp(&(b.1.last_seen, b.0)))
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                inner.entries.remove(&k);
                inner.evicted += 1;
            }
        }
        inner.entries.insert(
            key,
            UnknownEntry {
                safe_excerpt: c.safe_excerpt.clone(),
                count: 1,
                first_seen: c.occurred_at,
                last_seen: c.occurred_at,
                classifier_rule: c.classifier_rule.clone(),
                provider_id: c.provider_id.clone(),
                model_id: c.model_id.clone(),
                catalogue_version: c.catalogue_version.clone(),
            },
        );
        true
    }

    /// The entries, most frequent first, then most recent, then by excerpt.
    pub fn snapshot(&self) -> UnknownSnapshot {
        let inner = match self.inner.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        let mut entries: Vec<UnknownEntry> = inner.entries.values().cloned().collect();
        entries.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then(b.last_seen.cmp(&a.last_seen))
                .then(a.safe_excerpt.cmp(&b.safe_excerpt))
        });
        UnknownSnapshot {
            capacity: self.capacity,
            evicted: inner.evicted,
            entries,
        }
    }
}

fn fold_digits(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_digits = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{classify_line, Catalogue};

    fn unknown(text: &str, at: &str) -> Classification {
        let line =
            format!(r#"{{"occurred_at":"{at}","items":[{{"kind":"stderr","lines":["{text}"]}}]}}"#);
        classify_line(Catalogue::builtin(), &line, Utc::now()).unwrap()
    }

    #[test]
    fn dedupes_counts_and_bounds() {
        let log = UnknownLog::new(2);
        assert!(log.record(&unknown("mystery failure 1", "2026-11-30T12:00:00Z")));
        assert!(log.record(&unknown("mystery failure 2", "2026-11-30T12:00:01Z")));
        assert!(log.record(&unknown("other oddity", "2026-11-30T12:00:02Z")));
        assert!(log.record(&unknown("third thing", "2026-11-30T12:00:03Z")));
        let snap = log.snapshot();
        assert_eq!(snap.entries.len(), 2);
        assert_eq!(snap.evicted, 1);
        assert!(snap
            .entries
            .iter()
            .all(|e| !e.safe_excerpt.contains("mystery")));
    }
}
