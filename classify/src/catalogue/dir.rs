//! A catalogue directory on disk, laid out like `catalogue/` at the
//! repository root: `catalogue.toml`, `rules/*.toml` and, optionally,
//! `fixtures/*.json`. This is what `serve --catalogue DIR` loads (and
//! reloads) and `catalogue check DIR` validates, so a catalogue can change
//! without a rebuild. Reading collects every problem (a missing file, an
//! unreadable one, one too large) before compiling, like the compiler does.

use super::compiled::Catalogue;
use super::problems::{CatalogueError, Location, Problems};
use std::fs;
use std::path::{Path, PathBuf};

/// The largest file a catalogue directory may hold: the whole embedded
/// catalogue is a few hundred kilobytes, so anything near this is a
/// mistake (a corpus dropped into `rules/`), not a catalogue.
pub const MAX_FILE_BYTES: u64 = 8 << 20;

/// The files of a catalogue directory, read but not yet parsed. Names are
/// relative to the directory (`rules/openai.toml`), in name order.
#[derive(Debug, Clone, Default)]
pub struct CatalogueFiles {
    /// The directory they were read from.
    pub dir: PathBuf,
    pub catalogue_toml: String,
    pub rules: Vec<(String, String)>,
    /// Empty when the directory has no `fixtures/`.
    pub fixtures: Vec<(String, String)>,
}

impl CatalogueFiles {
    /// Reads `dir`: `catalogue.toml`, every `rules/*.toml` (at least one)
    /// and every `fixtures/*.json`. Every problem is named.
    pub fn read(dir: &Path) -> Result<CatalogueFiles, CatalogueError> {
        let mut problems = Problems::default();
        if !dir.is_dir() {
            problems.push(
                &Location::file(&dir.display().to_string()),
                "not a directory (or not readable)",
            );
            return Err(problems.into_error());
        }
        let catalogue_toml =
            read_file(&dir.join("catalogue.toml"), "catalogue.toml", &mut problems)
                .unwrap_or_default();
        let rules = read_all(dir, "rules", "toml", &mut problems);
        if rules.as_ref().is_some_and(Vec::is_empty) {
            problems.push(&Location::file("rules"), "holds no `*.toml` rule file");
        }
        let rules = rules.unwrap_or_else(|| {
            problems.push(
                &Location::file("rules"),
                "missing: the rules live in rules/*.toml",
            );
            Vec::new()
        });
        // Fixtures are optional: a deployment may ship rules alone.
        let fixtures = read_all(dir, "fixtures", "json", &mut problems).unwrap_or_default();
        if !problems.is_empty() {
            return Err(problems.into_error());
        }
        Ok(CatalogueFiles {
            dir: dir.to_owned(),
            catalogue_toml,
            rules,
            fixtures,
        })
    }

    /// Parses, validates and compiles the files.
    pub fn compile(&self) -> Result<Catalogue, CatalogueError> {
        let rules: Vec<(&str, &str)> = self
            .rules
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        Catalogue::from_sources(&self.catalogue_toml, &rules)
    }

    /// The fixtures as `fixtures::load` takes them.
    pub fn fixture_sources(&self) -> Vec<(&str, &str)> {
        self.fixtures
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect()
    }
}

impl Catalogue {
    /// Loads, validates and compiles the catalogue directory `dir` (its
    /// fixtures are not run: `catalogue check DIR` does that).
    pub fn load_dir(dir: &Path) -> Result<Catalogue, CatalogueError> {
        CatalogueFiles::read(dir)?.compile()
    }
}

/// Every `*.{ext}` file directly in `dir/sub`, by name; `None` when
/// `dir/sub` does not exist.
fn read_all(
    dir: &Path,
    sub: &str,
    ext: &str,
    problems: &mut Problems,
) -> Option<Vec<(String, String)>> {
    let path = dir.join(sub);
    if !path.exists() {
        return None;
    }
    let entries = match fs::read_dir(&path) {
        Ok(e) => e,
        Err(e) => {
            problems.push(&Location::file(sub), format!("cannot be listed: {e}"));
            return Some(Vec::new());
        }
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().map(|t| t.is_file()).unwrap_or(false))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(&format!(".{ext}")) && !n.starts_with('.'))
        .collect();
    // Name order, so a directory loads the same on every filesystem.
    names.sort();
    Some(
        names
            .into_iter()
            .filter_map(|n| {
                let name = format!("{sub}/{n}");
                read_file(&path.join(&n), &name, problems).map(|t| (name, t))
            })
            .collect(),
    )
}

/// One file's text, or a problem saying why not.
fn read_file(path: &Path, name: &str, problems: &mut Problems) -> Option<String> {
    let at = Location::file(name);
    match fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            problems.push(&at, "missing");
            return None;
        }
        Err(e) => {
            problems.push(&at, format!("cannot be read: {e}"));
            return None;
        }
        Ok(m) if m.len() > MAX_FILE_BYTES => {
            problems.push(
                &at,
                format!("{} bytes, over the {MAX_FILE_BYTES}-byte limit", m.len()),
            );
            return None;
        }
        Ok(_) => {}
    }
    match fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(t) => Some(t),
            Err(_) => {
                problems.push(&at, "is not UTF-8 text");
                None
            }
        },
        Err(e) => {
            problems.push(&at, format!("cannot be read: {e}"));
            None
        }
    }
}
