//! Labelled corpora of real failures, through the library scorer
//! (`classify::score`, the same measures as the shared `score.py`)
//! with the product's gate: ≥ 98 % exact (an `accept` alternative counts),
//! no false recovery, timing within max(1 s, 1 %) for ≥ 95 % of labelled
//! cases (an invented hint counts as wrong), no leaked secret, every
//! required field present.
//!
//! Two corpora: the shared public one (`../shared/corpus/public.jsonl`) and
//! the development corpus kept in the repository (`catalogue/corpus/*.jsonl`,
//! one file per family). A missing corpus fails; it is never skipped.
//!
//! Among the repository's files, `holdout-*.jsonl` are held-out sets: real
//! failures from sources the catalogue had not been built from, labelled
//! before they were first scored (their figures are in docs/catalogue.md).
//! Each also meets the held-out targets on its own (≥ 95 % exact,
//! no false recovery, timing ≥ 95 %, no leak), so a later change that
//! fits the development families at the held-out set's expense fails.

use classify::score::{self, Gate, Report};
use classify::Catalogue;
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

#[test]
fn held_out_sets_meet_the_held_out_targets() {
    let files: Vec<PathBuf> = score::corpus_files(Path::new(DEV))
        .unwrap_or_else(|e| panic!("the development corpus must be present at {DEV}: {e}"))
        .into_iter()
        .filter(|p| score::family_of(p).starts_with("holdout-"))
        .collect();
    assert!(!files.is_empty(), "no holdout-*.jsonl in {DEV}");
    let gate = Gate {
        min_exact: 0.95,
        ..Gate::default()
    };
    for file in files {
        let report = score::score_files(Catalogue::builtin(), std::slice::from_ref(&file))
            .unwrap_or_else(|e| panic!("{} must load: {e}", file.display()));
        let n = report.total().cases;
        assert!(n >= 100, "{} looks truncated: {n} cases", file.display());
        eprintln!("{}:\n{report}", file.display());
        let failures = report.failures(&gate);
        let misses: Vec<String> = report.misses.iter().map(|m| format!("  {m}")).collect();
        assert!(
            failures.is_empty(),
            "{} is below the held-out targets: {}\n{}",
            file.display(),
            failures.join("; "),
            misses.join("\n")
        );
    }
}
