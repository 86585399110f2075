//! Recorded generalisation rounds that are not yet folded into the
//! development corpus, and the floor each one is gated at.
//!
//! A round is scored once, before any rule is written from it, and that
//! first score is the figure that counts; it cannot meet the corpus gate
//! (98 %) on the day it is recorded. It is still gated: `rounds/floors.toml`
//! holds, per round file, the figures the catalogue has reached on it, and
//! `catalogue score --gate` fails when a change makes any of them worse. So
//! a rule written for one family cannot quietly undo what the catalogue
//! already gets right on failures it was never tuned for. Every round file
//! must have a floor and every floor a file, so a round cannot be dropped
//! from the gate by forgetting it.

use crate::score::{Gate, ScoreError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The floors file inside the rounds directory.
pub const FLOORS_FILE: &str = "floors.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FloorsFile {
    #[serde(default)]
    rounds: BTreeMap<String, Floor>,
}

/// One round's floor, as written in `floors.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Floor {
    min_exact: f64,
    max_false_recoveries: usize,
    min_timing: f64,
    max_leaks: usize,
}

/// Every round file in `dir` with the gate it must meet, sorted by file.
/// No directory, or one without round files and floors, is no rounds;
/// a round without a floor, a floor without a round, or a floor outside
/// 0..=1 is an error naming the file.
pub fn load(dir: &Path) -> Result<Vec<(PathBuf, Gate)>, ScoreError> {
    let floors_path = dir.join(FLOORS_FILE);
    let files = match crate::score::corpus_files(dir) {
        Ok(files) => files,
        Err(ScoreError::NoFiles(_)) => Vec::new(),
        Err(ScoreError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    let floors = match std::fs::read_to_string(&floors_path) {
        Ok(text) => parse(&text).map_err(|message| invalid(&floors_path, message))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(source) => {
            return Err(ScoreError::Read {
                path: floors_path.display().to_string(),
                source,
            })
        }
    };
    let mut out = Vec::new();
    for file in &files {
        let name = file_name(file);
        let Some(floor) = floors.get(&name) else {
            return Err(invalid(
                &floors_path,
                format!(
                    "round {name} has no floor: add [rounds.\"{name}\"] with its first score \
                     (min_exact, max_false_recoveries, min_timing, max_leaks)"
                ),
            ));
        };
        out.push((file.clone(), *floor));
    }
    let names: Vec<String> = files.iter().map(|f| file_name(f)).collect();
    if let Some(orphan) = floors.keys().find(|k| !names.contains(k)) {
        return Err(invalid(
            &floors_path,
            format!(
                "floor for {orphan}, but there is no such round file (a folded round's floor goes with it)"
            ),
        ));
    }
    Ok(out)
}

fn parse(text: &str) -> Result<BTreeMap<String, Gate>, String> {
    let file: FloorsFile = toml::from_str(text).map_err(|e| e.to_string())?;
    file.rounds
        .into_iter()
        .map(|(name, f)| {
            for (field, v) in [("min_exact", f.min_exact), ("min_timing", f.min_timing)] {
                if !(0.0..=1.0).contains(&v) {
                    return Err(format!(
                        "rounds.\"{name}\".{field}: {v} is not between 0 and 1"
                    ));
                }
            }
            Ok((
                name,
                Gate {
                    min_exact: f.min_exact,
                    max_false_recoveries: f.max_false_recoveries,
                    min_timing: f.min_timing,
                    max_leaks: f.max_leaks,
                },
            ))
        })
        .collect()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned()
}

fn invalid(path: &Path, message: String) -> ScoreError {
    ScoreError::Case {
        path: path.display().to_string(),
        line: 0,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory per test (tests run in parallel).
    fn dir_with(test: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kandev-rounds-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
        dir
    }

    const FLOOR: &str = "[rounds.\"r.jsonl\"]\nmin_exact = 0.8\nmax_false_recoveries = 1\nmin_timing = 0.5\nmax_leaks = 0\n";

    #[test]
    fn each_round_gets_its_floor() {
        let dir = dir_with("floor", &[("r.jsonl", "{}\n"), (FLOORS_FILE, FLOOR)]);
        let rounds = load(&dir).unwrap();
        assert_eq!(rounds.len(), 1);
        assert_eq!(rounds[0].0, dir.join("r.jsonl"));
        assert_eq!(rounds[0].1.min_exact, 0.8);
        assert_eq!(rounds[0].1.max_false_recoveries, 1);
    }

    #[test]
    fn a_round_without_a_floor_is_refused() {
        let dir = dir_with(
            "no-floor",
            &[
                ("r.jsonl", "{}\n"),
                ("s.jsonl", "{}\n"),
                (FLOORS_FILE, FLOOR),
            ],
        );
        let e = load(&dir).unwrap_err().to_string();
        assert!(e.contains("round s.jsonl has no floor"), "{e}");
    }

    #[test]
    fn a_floor_without_its_round_is_refused() {
        let dir = dir_with("orphan", &[(FLOORS_FILE, FLOOR)]);
        let e = load(&dir).unwrap_err().to_string();
        assert!(
            e.contains("floor for r.jsonl, but there is no such round file"),
            "{e}"
        );
    }

    #[test]
    fn a_floor_out_of_range_or_with_an_unknown_field_is_refused() {
        let bad = FLOOR.replace("0.8", "80");
        let dir = dir_with("range", &[("r.jsonl", "{}\n"), (FLOORS_FILE, &bad)]);
        let e = load(&dir).unwrap_err().to_string();
        assert!(e.contains("min_exact: 80 is not between 0 and 1"), "{e}");
        let typo = format!("{FLOOR}min_exakt = 1\n");
        std::fs::write(dir.join(FLOORS_FILE), typo).unwrap();
        assert!(load(&dir).is_err());
    }

    #[test]
    fn every_round_folded_is_no_rounds() {
        // Once every round has been folded into corpus/, the directory
        // keeps only floors.toml with the folded floors' history as
        // comments: nothing to gate, and not an error.
        let comments = "# Round 4 was folded into corpus/dev-round-4.jsonl.\n";
        let dir = dir_with("all-folded", &[(FLOORS_FILE, comments)]);
        assert!(load(&dir).unwrap().is_empty());
    }

    #[test]
    fn no_rounds_directory_is_no_rounds() {
        assert!(load(Path::new("/nonexistent/kandev/rounds"))
            .unwrap()
            .is_empty());
    }
}
