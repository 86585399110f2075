//! The catalogue in force: the embedded one, or a catalogue directory
//! (`serve --catalogue DIR`) that a reload — SIGHUP, or `POST
//! /api/v1/catalogue/reload` — reads again and swaps in whole, or keeps
//! the old one and says why.
//!
//! A swap is atomic: a classification takes the catalogue in force once
//! (an `Arc`), so it is made with one version from start to end, and the
//! version it records is the one that made it. Reloads queue behind one
//! another, so two at once cannot both "win" with different files.

use crate::meters;
use chrono::{DateTime, Utc};
use classify::{Catalogue, CatalogueError};
use domain::catalogue::{CatalogueInForce, CatalogueReload, CatalogueSource};
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

/// A catalogue as the service holds it: the embedded one lives for the
/// whole process; a loaded one until the last classification using it ends.
#[derive(Clone)]
enum Held {
    Embedded(&'static Catalogue),
    Loaded(Arc<Catalogue>),
}

/// The catalogue in force at one moment, with where it came from.
#[derive(Clone)]
pub struct InForce {
    catalogue: Held,
    source: CatalogueSource,
    directory: Option<PathBuf>,
    loaded_at: DateTime<Utc>,
}

impl Deref for InForce {
    type Target = Catalogue;
    fn deref(&self) -> &Catalogue {
        match &self.catalogue {
            Held::Embedded(c) => c,
            Held::Loaded(c) => c,
        }
    }
}

impl InForce {
    /// The wire form: version, source, directory, load time, rule count.
    pub fn in_force(&self) -> CatalogueInForce {
        CatalogueInForce {
            version: self.version().to_owned(),
            source: self.source,
            directory: self.directory.as_ref().map(|d| d.display().to_string()),
            loaded_at: self.loaded_at,
            rule_count: self.rule_ids().count() as u64,
        }
    }
}

/// Why a reload kept the old catalogue.
#[derive(Debug)]
pub enum ReloadError {
    /// The server runs the embedded catalogue: there is nothing to read.
    Embedded,
    /// The directory did not load; the old catalogue stays in force.
    Invalid {
        kept_version: String,
        error: CatalogueError,
    },
}

impl std::fmt::Display for ReloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReloadError::Embedded => f.write_str(
                "this server runs the embedded catalogue; start it with --catalogue DIR to reload one",
            ),
            ReloadError::Invalid {
                kept_version,
                error,
            } => write!(
                f,
                "the catalogue directory did not load; version {kept_version} stays in force: {}",
                error.problems.join("; ")
            ),
        }
    }
}

/// The catalogue in force and how to reload it; cheap to clone.
#[derive(Clone)]
pub struct Catalogues {
    current: Arc<RwLock<InForce>>,
    /// One reload at a time (reading and compiling takes a while).
    reloading: Arc<Mutex<()>>,
}

impl Catalogues {
    /// The embedded catalogue, for good.
    pub fn embedded() -> Catalogues {
        Catalogues::holding(InForce {
            catalogue: Held::Embedded(Catalogue::builtin()),
            source: CatalogueSource::Embedded,
            directory: None,
            loaded_at: Utc::now(),
        })
    }

    /// The catalogue directory `dir`, loaded and validated now; every
    /// problem when it does not load.
    pub fn from_dir(dir: &Path) -> Result<Catalogues, CatalogueError> {
        Ok(Catalogues::holding(load(dir)?))
    }

    /// `serve --catalogue`: the directory when given, else the embedded one.
    pub fn open(dir: Option<&Path>) -> Result<Catalogues, CatalogueError> {
        match dir {
            Some(dir) => Catalogues::from_dir(dir),
            None => Ok(Catalogues::embedded()),
        }
    }

    fn holding(c: InForce) -> Catalogues {
        Catalogues {
            current: Arc::new(RwLock::new(c)),
            reloading: Arc::new(Mutex::new(())),
        }
    }

    /// The catalogue in force now. Hold it for one classification, not
    /// longer: a reload does not change what a holder sees.
    pub fn current(&self) -> InForce {
        self.current
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Reads the directory again: swaps it in when it loads, else keeps the
    /// catalogue in force and says why. Blocking (files and compiling): call
    /// it off the async runtime's threads.
    pub fn reload(&self) -> Result<CatalogueReload, ReloadError> {
        let _one = self
            .reloading
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let old = self.current();
        let Some(dir) = old.directory.clone() else {
            tracing::warn!("catalogue reload asked for: {}", ReloadError::Embedded);
            return Err(ReloadError::Embedded);
        };
        match load(&dir) {
            Ok(new) => {
                metrics::counter!(meters::CATALOGUE_RELOADS, "outcome" => "loaded").increment(1);
                let answer = CatalogueReload {
                    in_force: new.in_force(),
                    previous_version: old.version().to_owned(),
                };
                *self
                    .current
                    .write()
                    .unwrap_or_else(|poisoned| poisoned.into_inner()) = new;
                tracing::info!(
                    version = %answer.in_force.version,
                    previous = %answer.previous_version,
                    directory = %dir.display(),
                    "catalogue reloaded"
                );
                Ok(answer)
            }
            Err(error) => {
                metrics::counter!(meters::CATALOGUE_RELOADS, "outcome" => "rejected").increment(1);
                let e = ReloadError::Invalid {
                    kept_version: old.version().to_owned(),
                    error,
                };
                tracing::warn!(directory = %dir.display(), "catalogue reload rejected: {e}");
                Err(e)
            }
        }
    }
}

fn load(dir: &Path) -> Result<InForce, CatalogueError> {
    let catalogue = Catalogue::load_dir(dir)?;
    Ok(InForce {
        catalogue: Held::Loaded(Arc::new(catalogue)),
        source: CatalogueSource::Directory,
        // Absolute, so the answer says where it was read whatever the
        // working directory of whoever reads it.
        directory: Some(std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned())),
        loaded_at: Utc::now(),
    })
}
