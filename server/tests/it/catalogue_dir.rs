//! A catalogue directory at run time: the repository's `catalogue/` loads
//! as the embedded catalogue does, a broken copy names every problem with
//! its file and entry, and `kandev-recovery catalogue check DIR` says so
//! with its exit code; `catalogue score --catalogue DIR` scores with it.

use classify::{Catalogue, CatalogueFiles};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's catalogue directory.
pub fn repository_catalogue() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../catalogue")
}

/// A copy of the repository's catalogue (rules and fixtures, not the
/// corpora) in a fresh temporary directory.
pub fn catalogue_copy() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let from = repository_catalogue();
    std::fs::copy(
        from.join("catalogue.toml"),
        tmp.path().join("catalogue.toml"),
    )
    .expect("copy");
    for sub in ["rules", "fixtures"] {
        std::fs::create_dir(tmp.path().join(sub)).expect("mkdir");
        for e in std::fs::read_dir(from.join(sub)).expect("list") {
            let e = e.expect("entry");
            std::fs::copy(e.path(), tmp.path().join(sub).join(e.file_name())).expect("copy");
        }
    }
    tmp
}

/// Sets `catalogue.toml`'s version to `version`.
pub fn set_version(dir: &Path, version: &str) {
    let path = dir.join("catalogue.toml");
    let text: Vec<String> = std::fs::read_to_string(&path)
        .expect("read")
        .lines()
        .map(|l| {
            if l.starts_with("version = ") {
                format!("version = \"{version}\"")
            } else {
                l.to_owned()
            }
        })
        .collect();
    std::fs::write(&path, text.join("\n") + "\n").expect("write");
}

/// Adds a rule file with a rule naming a tier and a code that do not exist.
pub fn break_rules(dir: &Path) {
    std::fs::write(
        dir.join("rules/zz-broken.toml"),
        "about = \"broken\"\n\n[[rule]]\nid = \"broken.rule\"\ntier = \"no-such-tier\"\ncode = \"no_such_code\"\ntext = 'anything'\n",
    )
    .expect("write");
}

fn check(dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args(["catalogue", "check"])
        .arg(dir)
        .output()
        .expect("runs")
}

#[test]
fn the_repository_directory_loads_as_the_embedded_catalogue() {
    let dir = Catalogue::load_dir(&repository_catalogue()).expect("loads");
    let embedded = Catalogue::builtin();
    assert_eq!(dir.version(), embedded.version());
    // Every rule file in the directory is embedded too, and no other.
    assert_eq!(
        dir.rule_ids().collect::<Vec<_>>(),
        embedded.rule_ids().collect::<Vec<_>>()
    );
    let files = CatalogueFiles::read(&repository_catalogue()).expect("reads");
    assert!(files.rules.iter().all(|(n, _)| n.starts_with("rules/")));
    assert!(!files.fixtures.is_empty());
}

#[test]
fn a_broken_directory_names_every_problem() {
    let tmp = catalogue_copy();
    break_rules(tmp.path());
    let err = Catalogue::load_dir(tmp.path()).expect_err("rejected");
    let all = err.problems.join("\n");
    assert!(
        all.contains("rules/zz-broken.toml, rule `broken.rule`"),
        "{all}"
    );
    assert!(
        all.contains("no-such-tier") && all.contains("no_such_code"),
        "{all}"
    );

    let empty = tempfile::tempdir().expect("tempdir");
    let err = Catalogue::load_dir(empty.path()).expect_err("rejected");
    let all = err.problems.join("\n");
    assert!(all.contains("catalogue.toml: missing"), "{all}");
    assert!(all.contains("rules: missing"), "{all}");

    let err = Catalogue::load_dir(&empty.path().join("nothing-here")).expect_err("rejected");
    assert!(err.problems[0].contains("not a directory"), "{err}");
}

#[test]
fn catalogue_check_validates_a_directory() {
    let tmp = catalogue_copy();
    set_version(tmp.path(), "9.9.9-test");
    let out = check(tmp.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("catalogue 9.9.9-test:"), "{stdout}");
    assert!(stdout.contains(" 0 failed"), "{stdout}");

    break_rules(tmp.path());
    let out = check(tmp.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("rules/zz-broken.toml, rule `broken.rule`"),
        "{stderr}"
    );

    let out = check(&tmp.path().join("nothing-here"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a directory"));
}

#[test]
fn catalogue_check_fails_on_a_fixture_the_directory_gets_wrong() {
    let tmp = catalogue_copy();
    // A fixture expecting the wrong code for a plain DNS failure.
    std::fs::write(
        tmp.path().join("fixtures/zz-wrong.json"),
        r#"[{"id":"zz-wrong","evidence":{"items":[{"kind":"stderr","lines":["Error: getaddrinfo ENOTFOUND api.example.com"]}]},"expect":{"code":"provider_overloaded","rule":"net.dns"}}]"#,
    )
    .expect("write");
    let out = check(tmp.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("FAIL  zz-wrong (fixtures/zz-wrong.json)"),
        "{stdout}"
    );
}

fn score(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args(["catalogue", "score", "--gate"])
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn catalogue_score_reads_a_directory() {
    let tmp = catalogue_copy();
    // A rule only the copy has, and a one-case corpus only it gets right.
    std::fs::write(
        tmp.path().join("rules/zz-probe.toml"),
        "about = \"probe\"\n\n[[rule]]\nid = \"zz.probe\"\ntier = \"signature\"\ncode = \"cancelled\"\ntext = '\\bzz probe stopped by its caller\\b'\n",
    )
    .expect("write");
    let corpus = tmp.path().join("zz-probe.jsonl");
    std::fs::write(
        &corpus,
        r#"{"id":"zz-probe-1","evidence":{"items":[{"kind":"stderr","lines":["Error: zz probe stopped by its caller"]}]},"expect":{"class":"not_provider","code":"cancelled"}}"#,
    )
    .expect("write");

    let embedded = score(&[corpus.as_os_str()]);
    let stdout = String::from_utf8_lossy(&embedded.stdout);
    assert_eq!(embedded.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("0.000"), "{stdout}");

    let dir = score(&[
        "--catalogue".as_ref(),
        tmp.path().as_os_str(),
        corpus.as_os_str(),
    ]);
    let stdout = String::from_utf8_lossy(&dir.stdout);
    assert!(
        dir.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&dir.stderr)
    );
    assert!(stdout.contains("1.000"), "{stdout}");

    // Without files, the directory's own corpus/ is scored: the copy has
    // none, and a missing corpus is an error, never a pass.
    let out = score(&["--catalogue".as_ref(), tmp.path().as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("corpus"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    break_rules(tmp.path());
    let out = score(&[
        "--catalogue".as_ref(),
        tmp.path().as_os_str(),
        corpus.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("rules/zz-broken.toml, rule `broken.rule`"),
        "{stderr}"
    );
}
