//! The log of evidence the catalogue did not recognise, so the catalogue
//! can grow from real failures (`GET /api/v1/catalogue/unknown`).
//!
//! It lives in the database, not in the process: it survives restarts and
//! every instance on one database answers with the same log. Only the
//! classifier's sanitised excerpt is stored (never raw evidence). Entries
//! are de-duplicated by their excerpt with digits folded (`exit code 1` and
//! `exit code 2` are one entry), counted, and bounded: past the capacity,
//! the entries seen longest ago are dropped and counted in `evicted`.
//!
//! Recording is one upsert on the failure path, plus a bounded delete only
//! when a new entry takes the log over its capacity. On PostgreSQL two
//! instances inserting new entries at the same moment can overshoot the
//! bound by one each until the next new entry trims it.

use crate::clock::from_ms;
use crate::store::{DynStore, Result, UnknownRow};
use chrono::{DateTime, Utc};
use classify::Classification;
use domain::policy::ErrorClass;
use serde::Serialize;

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

/// The log over the shared store; cheap to clone.
#[derive(Clone)]
pub struct UnknownLog {
    store: DynStore,
    capacity: usize,
}

impl UnknownLog {
    pub fn new(store: DynStore, capacity: usize) -> UnknownLog {
        UnknownLog {
            store,
            capacity: capacity.max(1),
        }
    }

    /// Records `c` if it is unclassified; answers whether it was recorded.
    pub async fn record(&self, c: &Classification) -> Result<bool> {
        let Some(row) = row_of(c) else {
            return Ok(false);
        };
        self.store
            .record_unknown(&row, i64::try_from(self.capacity).unwrap_or(i64::MAX))
            .await?;
        Ok(true)
    }

    /// The entries, most frequent first, then most recent, then by excerpt.
    pub async fn snapshot(&self) -> Result<UnknownSnapshot> {
        let (rows, evicted) = self
            .store
            .unknown_evidence(i64::try_from(self.capacity).unwrap_or(i64::MAX))
            .await?;
        let mut entries: Vec<UnknownEntry> = rows.into_iter().map(entry_of).collect();
        // Sorted here, not only in SQL: PostgreSQL collates text by locale,
        // SQLite by bytes, and both engines must answer alike.
        entries.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then(b.last_seen.cmp(&a.last_seen))
                .then(a.safe_excerpt.cmp(&b.safe_excerpt))
        });
        Ok(UnknownSnapshot {
            capacity: self.capacity,
            evicted: u64::try_from(evicted).unwrap_or(0),
            entries,
        })
    }
}

/// The stored row for an unclassified classification; `None` for any other.
fn row_of(c: &Classification) -> Option<UnknownRow> {
    if c.class != ErrorClass::Unclassified {
        return None;
    }
    let at = c.occurred_at.timestamp_millis();
    Some(UnknownRow {
        key: fold_digits(&c.safe_excerpt),
        safe_excerpt: c.safe_excerpt.clone(),
        count: 1,
        first_seen: at,
        last_seen: at,
        classifier_rule: c.classifier_rule.clone(),
        provider_id: c.provider_id.clone(),
        model_id: c.model_id.clone(),
        catalogue_version: c.catalogue_version.clone(),
    })
}

fn entry_of(r: UnknownRow) -> UnknownEntry {
    UnknownEntry {
        safe_excerpt: r.safe_excerpt,
        count: u64::try_from(r.count).unwrap_or(0),
        first_seen: from_ms(r.first_seen),
        last_seen: from_ms(r.last_seen),
        classifier_rule: r.classifier_rule,
        provider_id: r.provider_id,
        model_id: r.model_id,
        catalogue_version: r.catalogue_version,
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
    use classify::{classify_line, Catalogue};

    fn classify(line: &str) -> Classification {
        classify_line(Catalogue::builtin(), line, Utc::now()).unwrap()
    }

    #[test]
    fn digit_runs_fold_to_one_key() {
        for (text, key) in [
            ("exit code 1", "exit code #"),
            ("exit code 255", "exit code #"),
            ("a1b22c333", "a#b#c#"),
            ("no digits", "no digits"),
            ("", ""),
        ] {
            assert_eq!(fold_digits(text), key, "{text}");
        }
    }

    #[test]
    fn only_unclassified_evidence_makes_a_row() {
        let unknown = classify(
            r#"{"occurred_at":"2026-11-30T12:00:00Z","items":[{"kind":"stderr","lines":["mystery failure 7"]}]}"#,
        );
        let row = row_of(&unknown).expect("unclassified makes a row");
        assert_eq!(row.key, fold_digits(&unknown.safe_excerpt));
        assert_eq!(row.safe_excerpt, unknown.safe_excerpt);
        assert_eq!(row.count, 1);
        assert_eq!(row.first_seen, 1_796_040_000_000);
        assert_eq!(row.last_seen, row.first_seen);
        let known = classify(r#"{"items":[{"kind":"acp_error","code":-32800}]}"#);
        assert_eq!(row_of(&known), None);
    }
}
