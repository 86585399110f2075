//! Labelled corpora of real failures, through the library scorer
//! (`server::classify::score`, the same measures as the shared `score.py`)
//! with the product's gate: ≥ 98 % exact (an `accept` alternative counts),
//! no false recovery, timing within max(1 s, 1 %) for ≥ 95 % of labelled
//! cases (an invented hint counts as wrong), no leaked secret, every
//! required field present.
//!
//! Two corpora: the shared public one (`../shared/corpus/public.jsonl`) and
//! the development corpus kept in the repository (`catalogue/corpus/*.jsonl`,
//! one file per family). A missing corpus fails; it is never skipped.

use server::classify::score::{self, Gate, Report};
use server::classify::Catalogue;
use std::path::{Path, PathBuf};

const PUBLIC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/public.jsonl"
);

const DEV: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../catalogue/corpus");

/// The families the development corpus is made of; each must be present.
const DEV_FAMILIES: [&str; 4] = ["agents", "apis", "gateways", "provenance"];

fn check(name: &str, report: &Report) {
    eprintln!("{name}:\n{report}");
    let failures = report.failures(&Gate::default());
    let misses: Vec<String> = report.misses.iter().map(|m| format!("  {m}")).collect();
    assert!(
        failures.is_empty(),
        "{name} is below the gate: {}\n{}",
        failures.join("; "),
        misses.join("\n")
    );
}

#[test]
fn public_corpus_meets_the_gates() {
    let files = vec![PathBuf::from(PUBLIC)];
    let report = score::score_files(Catalogue::builtin(), &files)
        .unwrap_or_else(|e| panic!("the public corpus must be present at {PUBLIC}: {e}"));
    let n = report.total().cases;
    assert!(n >= 100, "the public corpus looks truncated: {n} cases");
    check("public corpus", &report);
}

#[test]
fn development_corpus_meets_the_gates() {
    let files = score::corpus_files(Path::new(DEV))
        .unwrap_or_else(|e| panic!("the development corpus must be present at {DEV}: {e}"));
    let report = score::score_files(Catalogue::builtin(), &files)
        .unwrap_or_else(|e| panic!("the development corpus must load: {e}"));
    for family in DEV_FAMILIES {
        assert!(
            report.families.contains_key(family),
            "the development corpus lacks dev-{family}.jsonl in {DEV}"
        );
    }
    let n = report.total().cases;
    assert!(
        n >= 500,
        "the development corpus looks truncated: {n} cases"
    );
    check("development corpus", &report);
}
