//! Classifier throughput and per-envelope latency on one core, JSON
//! parsing included, over the public corpus (else the compiled-in
//! catalogue fixtures): the same work as `cargo bench --bench classify`.

use super::fixtures;
use super::stats::Summary;
use classify::{classify_at, Catalogue, Evidence};
use std::hint::black_box;
use std::time::Instant;

pub struct Figures {
    pub per_s: f64,
    /// Per envelope, in microseconds.
    pub latency_us: Summary,
    pub envelopes: usize,
    pub source: &'static str,
}

/// Parses and classifies one line; answers something that depends on the
/// result, so the work is not optimised away.
pub fn classify_one(
    catalogue: &Catalogue,
    line: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> usize {
    match Evidence::from_json_str(line) {
        Ok(ev) => classify_at(catalogue, &ev, now).safe_excerpt.len(),
        Err(_) => 0,
    }
}

/// `warm` rounds first (the catalogue and its automata are built lazily,
/// as in a long-running server), then `rounds` timed rounds, on the
/// calling thread only.
pub fn measure(warm: usize, rounds: usize) -> Figures {
    let catalogue = Catalogue::builtin();
    let (lines, source) = fixtures::envelopes();
    let now = fixtures::corpus_now();
    for _ in 0..warm {
        for l in &lines {
            black_box(classify_one(catalogue, l, now));
        }
    }
    let mut samples = Vec::with_capacity(lines.len() * rounds);
    let started = Instant::now();
    for _ in 0..rounds {
        for l in &lines {
            let t = Instant::now();
            black_box(classify_one(catalogue, black_box(l), now));
            samples.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    let total = started.elapsed().as_secs_f64();
    Figures {
        per_s: samples.len() as f64 / total,
        latency_us: Summary::of(samples.clone()),
        envelopes: lines.len(),
        source,
    }
}
