//! Classifier throughput and latency over the public corpus, JSON parsing
//! included: `cargo bench -p server --bench classify`.
//!
//! Criterion reports envelopes per second (throughput in elements). After
//! it, a plain timing loop prints per-envelope latency percentiles (p50,
//! p99, max), since criterion summarises iterations, not single calls.
//!
//! `CLASSIFY_PROFILE_ROUNDS=n` skips criterion and only runs `n` warm rounds
//! over the corpus, for load-independent instruction counts:
//! `CLASSIFY_PROFILE_ROUNDS=20 valgrind --tool=callgrind target/release/deps/classify-…`
//! (`CLASSIFY_PROFILE_PARSE_ONLY=1` leaves classification out, to split the
//! count between JSON parsing and classifying).
//!
//! `CLASSIFY_PER_ENVELOPE=1` prints the slowest envelopes instead.

use chrono::{DateTime, Utc};
use classify::{Catalogue, Evidence};
use criterion::{black_box, criterion_group, Criterion, Throughput};
use server::bench::classifier::classify_one;
use server::bench::fixtures;
use std::time::Instant;

/// The allocator the `kandev-recovery` binary uses, so the figures are the
/// product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The public corpus's envelopes (else the catalogue fixtures), shared
/// with `kandev-recovery bench`.
fn envelopes() -> Vec<String> {
    let (lines, source) = fixtures::envelopes();
    if source != "public corpus" {
        eprintln!(
            "corpus not found at {}; benchmarking the {source} instead",
            fixtures::CORPUS
        );
    }
    lines
}

fn now() -> DateTime<Utc> {
    fixtures::corpus_now()
}

fn throughput(c: &mut Criterion) {
    let catalogue = Catalogue::builtin();
    let lines = envelopes();
    let now = now();
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(lines.len() as u64));
    group.bench_function("public_corpus_parse_and_classify", |b| {
        b.iter(|| {
            let mut n = 0;
            for l in &lines {
                n += classify_one(catalogue, black_box(l), now);
            }
            black_box(n)
        })
    });
    group.finish();
}

fn latency_report() {
    let catalogue = Catalogue::builtin();
    let lines = envelopes();
    let now = now();
    // Warm the lazily built DFA caches first, as a long-running server would.
    for _ in 0..50 {
        for l in &lines {
            black_box(classify_one(catalogue, l, now));
        }
    }
    let rounds = 400;
    let mut samples = Vec::with_capacity(lines.len() * rounds);
    let start = Instant::now();
    for _ in 0..rounds {
        for l in &lines {
            let t = Instant::now();
            black_box(classify_one(catalogue, l, now));
            samples.push(t.elapsed().as_nanos() as u64);
        }
    }
    let total = start.elapsed();
    samples.sort_unstable();
    let pct = |p: f64| samples[((samples.len() as f64 - 1.0) * p) as usize] as f64 / 1000.0;
    println!(
        "latency over {} envelope classifications (one core, JSON parsing included): \
         p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs; {:.0} envelopes/s",
        samples.len(),
        pct(0.50),
        pct(0.99),
        *samples.last().unwrap_or(&0) as f64 / 1000.0,
        samples.len() as f64 / total.as_secs_f64()
    );
}

criterion_group!(benches, throughput);

/// A fixed amount of work for callgrind: one warm-up round (the catalogue
/// and the regex caches are built lazily), then `rounds` measured rounds.
fn profile_rounds(rounds: usize, parse_only: bool) {
    let catalogue = Catalogue::builtin();
    let lines = envelopes();
    let now = now();
    let run = |l: &str| {
        if parse_only {
            Evidence::from_json_str(l).map_or(0, |e| e.items.len())
        } else {
            classify_one(catalogue, l, now)
        }
    };
    for l in &lines {
        black_box(run(black_box(l)));
    }
    for _ in 0..rounds {
        for l in &lines {
            black_box(run(black_box(l)));
        }
    }
    println!(
        "profiled {} envelopes x {rounds} rounds{}",
        lines.len(),
        if parse_only { " (parse only)" } else { "" }
    );
}

/// Mean time per envelope, each classified 2,000 times in a row (warm
/// caches), slowest first: where to look when the throughput drops.
fn slowest_envelopes() {
    let catalogue = Catalogue::builtin();
    let lines = envelopes();
    let now = now();
    let mut times: Vec<(f64, &String)> = lines
        .iter()
        .map(|l| {
            for _ in 0..50 {
                black_box(classify_one(catalogue, l, now));
            }
            let start = Instant::now();
            for _ in 0..2000 {
                black_box(classify_one(catalogue, black_box(l), now));
            }
            (start.elapsed().as_secs_f64() / 2000.0 * 1e6, l)
        })
        .collect();
    let mean = times.iter().map(|t| t.0).sum::<f64>() / times.len().max(1) as f64;
    times.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("mean {mean:.2} µs per envelope (warm); slowest:");
    for (us, l) in times.iter().take(20) {
        let head: String = l.chars().take(120).collect();
        println!("{us:>7.2} µs {:>5} B  {head}", l.len());
    }
}

fn main() {
    if std::env::var_os("CLASSIFY_PER_ENVELOPE").is_some() {
        slowest_envelopes();
        return;
    }
    if let Some(rounds) = std::env::var("CLASSIFY_PROFILE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        profile_rounds(
            rounds,
            std::env::var_os("CLASSIFY_PROFILE_PARSE_ONLY").is_some(),
        );
        return;
    }
    benches();
    latency_report();
    Criterion::default().configure_from_args().final_summary();
}
