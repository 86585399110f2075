//! The log of evidence the catalogue did not recognise, so the catalogue
//! can grow from real failures (`GET /api/v1/catalogue/unknown`).
//!
//! It lives in the database, not in the process: it survives restarts and
//! every instance on one database answers with the same log. Only the
//! classifier's sanitised excerpt is stored (never raw evidence), with the
//! sanitised skeleton of the latest sighting's envelope
//! (`classify::skeleton`: item kinds, statuses, header names, exits,
//! agent, provider, model, phase, a bounded excerpt per item) and links to
//! the latest route attempts it was seen in. Entries
//! are de-duplicated by their excerpt with digits folded (`exit code 1` and
//! `exit code 2` are one entry), counted, and bounded: past the capacity,
//! the entries seen longest ago are dropped and counted in `evicted`.
//!
//! Recording is one upsert on the failure path, plus a bounded delete only
//! when a new entry takes the log over its capacity. On PostgreSQL two
//! instances inserting new entries at the same moment can overshoot the
//! bound by one each until the next new entry trims it.

use crate::clock::from_ms;
use crate::store::{DynStore, Result, UnknownRow, UnknownSightingRow};
use classify::{Catalogue, Classification, Evidence};
use domain::catalogue::{EvidenceSkeleton, UnknownAttempt, UnknownDetail};
pub use domain::catalogue::{UnknownEntry, UnknownSnapshot};
use domain::policy::ErrorClass;
use std::collections::HashMap;

/// Default number of distinct excerpts kept.
pub const DEFAULT_UNKNOWN_CAPACITY: usize = 256;

/// Where a sighting came from: the route attempt its failure report made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttemptRef<'a> {
    pub route_id: &'a str,
    pub seq: i64,
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
        self.record_sighting(c, None, None).await
    }

    /// [`UnknownLog::record`], keeping the sanitised skeleton of
    /// `evidence` (never the evidence) and the route attempt it came from.
    pub async fn record_sighting(
        &self,
        c: &Classification,
        evidence: Option<&Evidence>,
        attempt: Option<AttemptRef<'_>>,
    ) -> Result<bool> {
        let Some(mut row) = row_of(c) else {
            return Ok(false);
        };
        if let Some(ev) = evidence {
            let s = classify::skeleton::skeleton(ev);
            row.agent = s.agent.clone();
            row.skeleton = serde_json::to_string(&s).ok();
        }
        self.store
            .record_unknown(
                &row,
                i64::try_from(self.capacity).unwrap_or(i64::MAX),
                attempt.map(|a| (a.route_id, a.seq)),
            )
            .await?;
        Ok(true)
    }

    /// The entries, most frequent first, then most recent, then by excerpt.
    pub async fn snapshot(&self) -> Result<UnknownSnapshot> {
        let (snapshot, _) = self.read().await?;
        Ok(snapshot)
    }

    /// One entry, by its id, with its skeleton; `None` when the log has
    /// no such entry (never was, or evicted).
    pub async fn detail(&self, id: &str) -> Result<Option<UnknownDetail>> {
        let (snapshot, mut skeletons) = self.read().await?;
        Ok(snapshot
            .entries
            .into_iter()
            .find(|e| e.id == id)
            .map(|entry| UnknownDetail {
                skeleton: skeletons.remove(&entry.id),
                entry,
            }))
    }

    /// Every entry with its skeleton (if it has one), as the log orders them.
    pub async fn with_skeletons(&self) -> Result<Vec<(UnknownEntry, Option<EvidenceSkeleton>)>> {
        let (snapshot, mut skeletons) = self.read().await?;
        Ok(snapshot
            .entries
            .into_iter()
            .map(|e| {
                let s = skeletons.remove(&e.id);
                (e, s)
            })
            .collect())
    }

    /// What `catalogue` makes of every logged entry.
    pub async fn reclassify(
        &self,
        catalogue: &Catalogue,
    ) -> Result<domain::catalogue::UnknownReclassification> {
        Ok(classify::skeleton::reclassify(
            catalogue,
            &self.with_skeletons().await?,
        ))
    }

    /// The log (bounded by its capacity) with each entry's attempts, and
    /// the skeletons by entry id.
    async fn read(&self) -> Result<(UnknownSnapshot, HashMap<String, EvidenceSkeleton>)> {
        let (rows, evicted) = self
            .store
            .unknown_evidence(i64::try_from(self.capacity).unwrap_or(i64::MAX))
            .await?;
        let mut attempts: HashMap<String, Vec<UnknownAttempt>> = HashMap::new();
        for s in self.store.unknown_sightings().await? {
            let UnknownSightingRow {
                key,
                route_id,
                attempt_seq,
                seen_at,
            } = s;
            attempts.entry(key).or_default().push(UnknownAttempt {
                route_id,
                attempt_seq,
                seen_at: from_ms(seen_at),
            });
        }
        let mut skeletons = HashMap::new();
        let mut entries: Vec<UnknownEntry> = rows
            .into_iter()
            .map(|r| {
                let seen = attempts.remove(&r.key).unwrap_or_default();
                // A skeleton this version cannot read is left out, not fatal.
                let skeleton = r
                    .skeleton
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<EvidenceSkeleton>(s).ok());
                let e = entry_of(r, seen);
                if let Some(s) = skeleton {
                    skeletons.insert(e.id.clone(), s);
                }
                e
            })
            .collect();
        // Sorted here, not only in SQL: PostgreSQL collates text by locale,
        // SQLite by bytes, and both engines must answer alike.
        entries.sort_by(|a, b| {
            b.count
                .cmp(&a.count)
                .then(b.last_seen.cmp(&a.last_seen))
                .then(a.safe_excerpt.cmp(&b.safe_excerpt))
        });
        Ok((
            UnknownSnapshot {
                capacity: self.capacity,
                evicted: u64::try_from(evicted).unwrap_or(0),
                entries,
            },
            skeletons,
        ))
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
        agent: None,
        skeleton: None,
    })
}

fn entry_of(r: UnknownRow, attempts: Vec<UnknownAttempt>) -> UnknownEntry {
    UnknownEntry {
        id: signature(&r.key),
        safe_excerpt: r.safe_excerpt,
        count: u64::try_from(r.count).unwrap_or(0),
        first_seen: from_ms(r.first_seen),
        last_seen: from_ms(r.last_seen),
        classifier_rule: r.classifier_rule,
        agent: r.agent,
        provider_id: r.provider_id,
        model_id: r.model_id,
        catalogue_version: r.catalogue_version,
        attempts,
    }
}

/// An entry's id: its folded excerpt hashed (64-bit FNV-1a, 16 hex
/// digits). Stable across processes, engines and versions, short enough
/// to type; the log holds a few hundred entries, so a collision is
/// practically impossible (and would only make two entries share a link).
pub fn signature(key: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
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
        classify_line(Catalogue::builtin(), line, chrono::Utc::now()).unwrap()
    }

    #[test]
    fn signatures_are_stable_and_short() {
        assert_eq!(signature(""), "cbf29ce484222325");
        assert_eq!(signature("exit code #"), signature("exit code #"));
        assert_ne!(signature("exit code #"), signature("exit code"));
        assert_eq!(signature("anything at all").len(), 16);
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
