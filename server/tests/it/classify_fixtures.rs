//! The catalogue's fixtures, one table: every fixture gets its expected code,
//! rule and timing, no fixture leaks, and every rule decides at least one
//! fixture (rule ids in classifications are fixture-backed).

use classify::catalogue::{CATALOGUE_SOURCE, RULE_SOURCES};
use classify::fixtures::{self, FIXTURE_SOURCES};
use classify::Catalogue;
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn every_fixture_classifies_as_expected() {
    let catalogue = Catalogue::builtin();
    let all = fixtures::builtin_fixtures().unwrap_or_else(|e| panic!("fixtures: {e:#?}"));
    assert!(all.len() >= 150, "only {} fixtures", all.len());
    let mut failures = Vec::new();
    for f in &all {
        let (_, problems) = fixtures::check(catalogue, f);
        if !problems.is_empty() {
            failures.push(format!("{} ({}): {}", f.id, f.file, problems.join("; ")));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures failed:\n{}",
        failures.len(),
        all.len(),
        failures.join("\n")
    );
}

#[test]
fn every_rule_decides_a_fixture() {
    let catalogue = Catalogue::builtin();
    let all = fixtures::builtin_fixtures().unwrap_or_else(|e| panic!("fixtures: {e:#?}"));
    let decided: BTreeSet<String> = all
        .iter()
        .filter_map(|f| fixtures::check(catalogue, f).0)
        .map(|c| c.classifier_rule)
        .collect();
    let orphans: Vec<&str> = catalogue
        .rule_ids()
        .filter(|id| !decided.contains(*id))
        .collect();
    assert!(orphans.is_empty(), "rules without a fixture: {orphans:?}");
}

#[test]
fn every_catalogue_file_is_embedded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalogue");
    let listed = |dir: &str, ext: &str| -> BTreeSet<String> {
        std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("{}: {e}", root.join(dir).display()))
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(ext))
            .map(|n| format!("{dir}/{n}"))
            .collect()
    };
    let rules: BTreeSet<String> = RULE_SOURCES.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        listed("rules", ".toml"),
        rules,
        "rule files on disk vs embedded"
    );
    let fixtures: BTreeSet<String> = FIXTURE_SOURCES.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        listed("fixtures", ".json"),
        fixtures,
        "fixture files on disk vs embedded"
    );
    let on_disk = std::fs::read_to_string(root.join("catalogue.toml")).expect("catalogue.toml");
    assert_eq!(on_disk, CATALOGUE_SOURCE.1);
}
