//! Leave-one-family-out figures for the embedded catalogue (method:
//! `classify::lofo`; results: catalogue/README.md).
//!
//!     cargo run -p classify --example leave_one_family_out [MIN_CASES] [FILE…]
//!
//! Without files, every `catalogue/corpus/*.jsonl` and
//! `catalogue/rounds/*.jsonl` (run from the repository root). Families with
//! fewer than MIN_CASES cases (default 10) are left out of the table.

use classify::catalogue::{Catalogue, CATALOGUE_SOURCE, RULE_SOURCES};
use classify::{fixtures, lofo, score};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let min_cases = match args.first().map(|a| a.parse::<usize>()) {
        Some(Ok(n)) => {
            args.remove(0);
            n
        }
        _ => 10,
    };
    let mut files: Vec<PathBuf> = args.into_iter().map(PathBuf::from).collect();
    if files.is_empty() {
        match score::corpus_files(Path::new("catalogue/corpus")) {
            Ok(f) => files.extend(f),
            Err(e) => {
                eprintln!("leave_one_family_out: {e}");
                return ExitCode::FAILURE;
            }
        }
        // Rounds not yet folded into the corpus, when there are any.
        files.extend(score::corpus_files(Path::new("catalogue/rounds")).unwrap_or_default());
    }
    let mut cases = Vec::new();
    for f in &files {
        match score::load(f) {
            Ok(c) => cases.extend(c),
            Err(e) => {
                eprintln!("leave_one_family_out: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let spec = match Catalogue::parse(CATALOGUE_SOURCE.1, RULE_SOURCES) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let fixtures = match fixtures::builtin_fixtures() {
        Ok(f) => f,
        Err(errors) => {
            for e in errors {
                eprintln!("fixtures: {e}");
            }
            return ExitCode::FAILURE;
        }
    };
    match lofo::leave_one_family_out(&spec, &fixtures, &cases, min_cases) {
        Ok(figures) => {
            println!(
                "{} cases from {} files; families with at least {min_cases} cases",
                cases.len(),
                files.len()
            );
            print!("{}", lofo::table(&figures));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
