//! Problems found while loading a catalogue, each with where it lies: the
//! file, the entry (a code, a rule, a timing profile, a tier) and the
//! field. Reading and compiling collect every problem instead of stopping at
//! the first, so `catalogue check` names them all at once.

use std::fmt;

/// Every problem found while loading a catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueError {
    /// Each problem as `where: what is wrong`, in the order found (see
    /// [`Location`] for the `where`).
    pub problems: Vec<String>,
}

impl fmt::Display for CatalogueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "invalid catalogue ({} problems):", self.problems.len())?;
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for CatalogueError {}

/// Where in the catalogue's files a problem lies, shown as
/// `rules/openai.toml, rule `openai.rate_limit`, field `tier``.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    file: String,
    /// The entry inside the file, already worded (``code `rate_limited` ``).
    entry: Option<String>,
    field: Option<&'static str>,
}

impl Location {
    /// A whole file (a file that does not parse, or a problem of all of it).
    pub(crate) fn file(name: &str) -> Location {
        Location {
            file: name.to_owned(),
            entry: None,
            field: None,
        }
    }

    /// One entry of `file`: `kind` is what it is (`code`, `rule`, …),
    /// `name` its key or id.
    pub(crate) fn entry(file: &str, kind: &str, name: &str) -> Location {
        Location {
            file: file.to_owned(),
            entry: Some(format!("{kind} `{name}`")),
            field: None,
        }
    }

    /// The same place, narrowed to one field.
    pub(crate) fn field(&self, field: &'static str) -> Location {
        Location {
            field: Some(field),
            ..self.clone()
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(entry) = &self.entry {
            write!(f, ", {entry}")?;
        }
        if let Some(field) = self.field {
            write!(f, ", field `{field}`")?;
        }
        Ok(())
    }
}

/// The problems collected so far.
#[derive(Debug, Default)]
pub(crate) struct Problems(Vec<String>);

impl Problems {
    /// Records that `what` is wrong at `at`.
    pub(crate) fn push(&mut self, at: &Location, what: impl fmt::Display) {
        self.0.push(format!("{at}: {what}"));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn into_error(self) -> CatalogueError {
        CatalogueError { problems: self.0 }
    }
}
