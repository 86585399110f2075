//! The CLI entry points: `classify` (JSONL in, JSONL out), `catalogue
//! check [DIR]` (validate a catalogue and run its fixtures) and `catalogue
//! score` (figures and gates over labelled corpora).

use super::catalogue::{Catalogue, CatalogueFiles};
use super::classifier::classify_line_with;
use super::fixtures;
use super::rounds;
use super::score::{self, Gate};
use chrono::{SubsecRound, Utc};
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Longest input line accepted, in bytes; longer lines get an error line.
pub const MAX_INPUT_LINE: usize = 16 << 20;

/// `kandev-recovery classify`: one classification per input line, same order.
/// A line that is not an envelope yields `{"error": …, "line": n}` and the
/// rest still classify. Blank lines are skipped. With `explain`, each
/// classification carries its `explain` object.
pub fn run_classify(explain: bool) -> ExitCode {
    let catalogue = match Catalogue::load_builtin() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let stdin = io::stdin();
    let stdout = io::stdout();
    let out = BufWriter::new(stdout.lock());
    match classify_stream_with(&catalogue, stdin.lock(), out, explain) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("classify: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The loop behind `classify`, over any reader and writer.
pub fn classify_stream<R: BufRead, W: Write>(
    catalogue: &Catalogue,
    input: R,
    out: W,
) -> io::Result<()> {
    classify_stream_with(catalogue, input, out, false)
}

/// [`classify_stream`], with each classification's `explain` object when
/// `explain` is set (`classify --explain`).
pub fn classify_stream_with<R: BufRead, W: Write>(
    catalogue: &Catalogue,
    mut input: R,
    mut out: W,
    explain: bool,
) -> io::Result<()> {
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        let n = Read::take(&mut input, MAX_INPUT_LINE as u64 + 1).read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        if buf.len() > MAX_INPUT_LINE && buf.last() != Some(&b'\n') {
            // Skip the rest of the over-long line.
            let mut sink = Vec::new();
            loop {
                sink.clear();
                let m = Read::take(&mut input, 1 << 20).read_until(b'\n', &mut sink)?;
                if m == 0 || sink.last() == Some(&b'\n') {
                    break;
                }
            }
            write_error(
                &mut out,
                line_no,
                "line_too_long",
                "input line exceeds the limit",
            )?;
            continue;
        }
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim();
        if text.is_empty() {
            line_no -= 1;
            continue;
        }
        match classify_line_with(catalogue, text, Utc::now().trunc_subsecs(3), explain) {
            Ok(c) => {
                serde_json::to_writer(&mut out, &c)?;
                out.write_all(b"\n")?;
            }
            Err(e) => write_error(&mut out, line_no, "invalid_envelope", &e.to_string())?,
        }
    }
    out.flush()
}

fn write_error<W: Write>(out: &mut W, line: u64, error: &str, message: &str) -> io::Result<()> {
    let v = serde_json::json!({"error": error, "line": line, "message": message});
    serde_json::to_writer(&mut *out, &v)?;
    out.write_all(b"\n")
}

/// `kandev-recovery catalogue check [DIR] [--verbose]`: loads and
/// validates the catalogue directory `DIR` (default: the embedded
/// catalogue), runs every fixture it holds, prints a report. Exit 1 on any
/// problem, each named with its file, entry and field.
pub fn run_catalogue_check(dir: Option<&Path>, verbose: bool) -> ExitCode {
    let (catalogue, fixtures) = match dir {
        None => (Catalogue::load_builtin(), fixtures::builtin_fixtures()),
        Some(dir) => match CatalogueFiles::read(dir) {
            Ok(files) => (files.compile(), fixtures::load(&files.fixture_sources())),
            Err(e) => {
                eprintln!("{}: {e}", dir.display());
                return ExitCode::FAILURE;
            }
        },
    };
    let catalogue = match catalogue {
        Ok(c) => c,
        Err(e) => {
            match dir {
                Some(dir) => eprintln!("{}: {e}", dir.display()),
                None => eprintln!("{e}"),
            }
            return ExitCode::FAILURE;
        }
    };
    let summary = catalogue.describe();
    println!(
        "catalogue {}: {} codes, {} rules in {} tiers ({})",
        summary.version,
        summary.codes.len(),
        summary.rule_count,
        summary.tiers.len(),
        summary
            .tiers
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(" > ")
    );
    let fixtures = match fixtures {
        Ok(f) => f,
        Err(errors) => {
            for e in errors {
                eprintln!("fixtures: {e}");
            }
            return ExitCode::FAILURE;
        }
    };
    let mut failed = 0;
    let mut used_rules = std::collections::BTreeSet::new();
    for f in &fixtures {
        let (c, problems) = fixtures::check(&catalogue, f);
        if let Some(c) = &c {
            used_rules.insert(c.classifier_rule.clone());
        }
        if problems.is_empty() {
            if verbose {
                let c = c.as_ref();
                println!(
                    "  ok    {:<48} {:<24} {}",
                    f.id,
                    c.map(|c| c.code.as_str()).unwrap_or(""),
                    c.map(|c| c.classifier_rule.as_str()).unwrap_or("")
                );
            }
        } else {
            failed += 1;
            println!("  FAIL  {} ({})", f.id, f.file);
            for p in problems {
                println!("          {p}");
            }
        }
    }
    let unused: Vec<&str> = catalogue
        .rule_ids()
        .filter(|id| !used_rules.contains(*id))
        .collect();
    if verbose && !unused.is_empty() {
        println!("rules without a deciding fixture ({}):", unused.len());
        for id in &unused {
            println!("  {id}");
        }
    }
    println!(
        "fixtures: {} passed, {} failed ({} of {} rules decide at least one fixture)",
        fixtures.len() - failed,
        failed,
        catalogue.rule_ids().count() - unused.len(),
        catalogue.rule_ids().count()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `kandev-recovery catalogue score [--catalogue DIR] [--gate] [FILE…]`:
/// prints figures per family, then per provider; with `--gate`, exit 1
/// below a threshold. With no files: `catalogue/corpus/` (or `DIR/corpus/`)
/// at the product gate and each round in `catalogue/rounds/` (or
/// `DIR/rounds/`) at its floor ([`rounds`]). A missing, unreadable or empty
/// corpus is always an error, never a pass; so is a broken `DIR`.
pub fn run_catalogue_score(
    files: &[PathBuf],
    dir: Option<&Path>,
    gate: bool,
    verbose: bool,
) -> ExitCode {
    // A directory is compiled from its files as `catalogue check DIR` and
    // `serve --catalogue DIR` do, so rules can be scored without a rebuild.
    let catalogue = match dir {
        None => Catalogue::load_builtin(),
        Some(dir) => CatalogueFiles::read(dir).and_then(|files| files.compile()),
    };
    let catalogue = match catalogue {
        Ok(c) => c,
        Err(e) => {
            match dir {
                Some(dir) => eprintln!("{}: {e}", dir.display()),
                None => eprintln!("{e}"),
            }
            return ExitCode::FAILURE;
        }
    };
    // With no files: the development corpus at the product's gate, then
    // every recorded round not yet folded into it at its own floor — the
    // directory's own `corpus/` and `rounds/` when one is given.
    let root = dir.unwrap_or(Path::new("catalogue"));
    let (files, rounds) = if files.is_empty() {
        let corpus = score::corpus_files(&root.join("corpus"));
        match corpus.and_then(|c| Ok((c, rounds::load(&root.join("rounds"))?))) {
            Ok(both) => both,
            Err(e) => {
                eprintln!("catalogue score: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        (files.to_vec(), Vec::new())
    };
    let report = match score::score_files(&catalogue, &files) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("catalogue score: {e}");
            return ExitCode::FAILURE;
        }
    };
    if verbose {
        for m in &report.misses {
            println!("  MISS {m}");
        }
    }
    print!("{report}");
    print!("\n{}", report.provider_table(8));
    let mut failures = report.failures(&Gate::default());
    if !failures.is_empty() {
        println!("below the gate: {}", failures.join("; "));
    }
    for (file, floor) in &rounds {
        let report = match score::score_files(&catalogue, std::slice::from_ref(file)) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("catalogue score: {e}");
                return ExitCode::FAILURE;
            }
        };
        let t = report.total();
        println!(
            "\nround {}: exact {:.3} (floor {}), false recoveries {} (at most {}), timing {}/{}, leaks {}",
            file.display(),
            t.exact_rate(),
            floor.min_exact,
            t.false_recoveries,
            floor.max_false_recoveries,
            t.timing_ok,
            t.timing_labelled,
            t.leaks
        );
        if verbose {
            for m in &report.misses {
                println!("  MISS {m}");
            }
        }
        let below = report.failures(floor);
        if !below.is_empty() {
            println!("below its floor: {}", below.join("; "));
            failures.extend(
                below
                    .into_iter()
                    .map(|b| format!("{}: {b}", file.display())),
            );
        }
    }
    if failures.is_empty() {
        return ExitCode::SUCCESS;
    }
    if gate {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
