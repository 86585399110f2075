//! The cargo-fuzz crate (`server/fuzz`, run by `scripts/fuzz`) compiles the
//! classifier's sources, the runner's output readers and `app`'s policy
//! core by path with dependency lists of its own, outside this workspace,
//! so nothing else builds it: a crate those sources start using must be
//! added there too, or the fuzzer stops building unnoticed. (What the
//! targets check is replayed by `fuzz_findings`, against the real modules.)

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Dependency names of a manifest's `[dependencies]`, as code spells them.
fn dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).expect("manifest readable");
    let doc: toml::Table = toml::from_str(&text).expect("manifest parses");
    doc.get("dependencies")
        .and_then(|d| d.as_table())
        .expect("a [dependencies] table")
        .keys()
        .map(|k| k.replace('-', "_"))
        .collect()
}

/// Whether `source` names crate `name` in a path (`name::…`) not preceded by
/// an identifier character or `::` (so `server::classify::…` does not count
/// for a crate called `classify`).
fn mentions(source: &str, name: &str) -> bool {
    let needle = format!("{name}::");
    source.match_indices(&needle).any(|(at, _)| {
        let before = &source[..at];
        !before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':')
    })
}

/// The crates of `known` that the Rust sources under `paths` (files or
/// directories, read recursively) name.
fn used_by(paths: &[PathBuf], known: &BTreeSet<String>) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let mut todo = paths.to_vec();
    while let Some(path) = todo.pop() {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("sources") {
                todo.push(entry.expect("directory entry").path());
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            let source = std::fs::read_to_string(&path).expect("source readable");
            // `app`'s derives under its `ssr` feature (utoipa's schemas) are
            // not compiled by the stand-in, which has no such feature.
            let compiled: String = source
                .lines()
                .filter(|l| !l.contains("cfg_attr(feature = \"ssr\""))
                .collect::<Vec<_>>()
                .join("\n");
            used.extend(known.iter().filter(|d| mentions(&compiled, d)).cloned());
        }
    }
    used
}

#[test]
fn the_fuzz_crate_lists_every_crate_the_classifier_uses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = dependencies(&root.join("Cargo.toml"));
    let fuzz = dependencies(&root.join("fuzz/Cargo.toml"));
    // The classifier's modules nest (`catalogue/`, `matcher/`, `evidence/`):
    // every directory below them is read.
    let used = used_by(
        &[
            root.join("src/classify"),
            root.join("src/runner/format"),
            root.join("src/runner/config.rs"),
            root.join("src/runner/envelope.rs"),
        ],
        &server,
    );
    assert!(
        used.contains("serde_json") && used.contains("memchr") && used.contains("toml"),
        "the scan found too little: {used:?}"
    );
    let missing: Vec<_> = used.difference(&fuzz).collect();
    assert!(
        missing.is_empty(),
        "server/fuzz/Cargo.toml lacks {missing:?}, which the sources it compiles use"
    );
}

#[test]
fn the_policy_stand_in_lists_every_crate_the_policy_core_uses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let app_root = root.join("../app");
    let app = dependencies(&app_root.join("Cargo.toml"));
    let shim = dependencies(&root.join("fuzz/policy-shim/Cargo.toml"));
    let used = used_by(
        &[app_root.join("src/policy"), app_root.join("src/names.rs")],
        &app,
    );
    assert!(
        used.contains("serde_json") && used.contains("strum"),
        "the scan found too little: {used:?}"
    );
    let missing: Vec<_> = used.difference(&shim).collect();
    assert!(
        missing.is_empty(),
        "server/fuzz/policy-shim/Cargo.toml lacks {missing:?}, which app/src/policy uses"
    );
}
