//! A fixed amount of classifier work for callgrind, built with only this
//! crate and its dependencies in release (the server's bench needs the whole
//! server): `cargo build --release -p classify --example profile`, then
//!
//! ```text
//! CLASSIFY_PROFILE_ROUNDS=10 valgrind --tool=callgrind target/release/examples/profile
//! CLASSIFY_PROFILE_ROUNDS=40 valgrind --tool=callgrind target/release/examples/profile
//! ```
//!
//! One warm-up round (the catalogue and its automata are built lazily, as in
//! a long-running server), then `CLASSIFY_PROFILE_ROUNDS` rounds (default 10)
//! over the public corpus's envelopes, each parsed from its JSON line and
//! classified, as `server/benches/classify.rs` does. The difference between
//! two counts divided by the extra rounds times the envelopes is the
//! per-envelope cost, set-up left out; the set-up is what a 0-round run
//! counts.
//!
//! `CLASSIFY_PROFILE_CORPUS` names another JSONL file (lines
//! `{"evidence": …}` or bare envelopes); `CLASSIFY_PROFILE_DUMP=1` prints each
//! line's classification as JSON instead (`catalogue_version` left out), to
//! compare two builds' answers line for line.

use chrono::{DateTime, Utc};
use classify::{classify_at, Catalogue, Evidence};
use std::hint::black_box;

/// The allocator the `kandev-recovery` binary uses, so the counts are the
/// product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CORPUS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../catalogue/corpus/holdout-public.jsonl"
);

/// Each line's envelope as the JSON text an adapter would send.
fn envelopes(path: &str) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .map(|v| match v.get("evidence") {
            Some(e) => e.to_string(),
            None => v.to_string(),
        })
        .collect()
}

fn classify_one(catalogue: &Catalogue, line: &str, now: DateTime<Utc>) -> usize {
    match Evidence::from_json_str(line) {
        Ok(ev) => classify_at(catalogue, &ev, now).safe_excerpt.len(),
        Err(_) => 0,
    }
}

fn main() {
    let path = std::env::var("CLASSIFY_PROFILE_CORPUS").unwrap_or_else(|_| CORPUS.to_owned());
    let rounds: usize = std::env::var("CLASSIFY_PROFILE_ROUNDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let lines = envelopes(&path);
    let now: DateTime<Utc> = "2026-11-30T12:00:00Z".parse().expect("a fixed time");
    let catalogue = Catalogue::builtin();
    if std::env::var_os("CLASSIFY_PROFILE_DUMP").is_some() {
        for l in &lines {
            let out = match Evidence::from_json_str(l) {
                Ok(ev) => {
                    let mut v = serde_json::to_value(classify_at(catalogue, &ev, now))
                        .expect("a classification serialises");
                    if let Some(o) = v.as_object_mut() {
                        o.remove("catalogue_version");
                    }
                    v.to_string()
                }
                Err(e) => format!("error: {e}"),
            };
            println!("{out}");
        }
        return;
    }
    for l in &lines {
        black_box(classify_one(catalogue, black_box(l), now));
    }
    for _ in 0..rounds {
        for l in &lines {
            black_box(classify_one(catalogue, black_box(l), now));
        }
    }
    println!("profiled {} envelopes x {rounds} rounds", lines.len());
}
