//! The cargo-fuzz crate (`server/fuzz`, run by `scripts/fuzz`) compiles the
//! classifier's sources by path with a dependency list of its own, outside
//! this workspace, so nothing else builds it: a crate the classifier starts
//! using must be added there too, or the fuzzer stops building unnoticed.

use std::collections::BTreeSet;
use std::path::Path;

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

#[test]
fn the_fuzz_crate_lists_every_crate_the_classifier_uses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let server = dependencies(&root.join("Cargo.toml"));
    let fuzz = dependencies(&root.join("fuzz/Cargo.toml"));
    let mut used = BTreeSet::new();
    // The classifier's modules nest (`catalogue/`, `matcher/`, `evidence/`):
    // every directory below src/classify is read.
    let mut dirs = vec![root.join("src/classify")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("classify sources") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let source = std::fs::read_to_string(&path).expect("source readable");
                used.extend(server.iter().filter(|d| mentions(&source, d)).cloned());
            }
        }
    }
    assert!(
        used.contains("serde_json") && used.contains("memchr"),
        "the scan found too little: {used:?}"
    );
    let missing: Vec<_> = used.difference(&fuzz).collect();
    assert!(
        missing.is_empty(),
        "server/fuzz/Cargo.toml lacks {missing:?}, which src/classify uses"
    );
}
