//! The SQLite file as the store opens it outside sqlx: how durable a
//! commit is ([`Synchronous`], read off the URL), the file with its
//! settings and shared write lock ([`Target`]), and how a synchronous
//! connection to it is opened ([`open`]).
//!
//! The store (`sqlite.rs`), its writer thread (`sqlite_writer.rs`) and its
//! inline readers (`sqlite_reads.rs`) all open the file this one way. It
//! is a module of its own so that each of them depends on it rather than
//! on one another.

use super::sqlite_log::Log;
use super::{Result, StoreError};
use rusqlite::{Connection, OpenFlags};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How durable a SQLite commit is: the `synchronous=` setting of a
/// `sqlite://` URL (`full`, the default, or `normal`), which every
/// connection to the file is opened with.
///
/// With `full` a commit returns only once the write-ahead log is flushed
/// to the disk, so what was answered survives a power loss or an OS crash.
/// That is the default because an answer is acted on: a claimed dispatch
/// launches an agent, and a claim lost to an OS crash would be dispatched
/// again after it — a prompt replayed, which this service exists to
/// prevent. Group commit ([`super::group`]) shares one flush among every
/// transition of a batch. `normal` skips the flush (WAL is still safe
/// across a crash of this process, not of the machine) and suits a
/// machine whose disk flushes slowly, when losing the last moments is
/// acceptable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Synchronous {
    #[default]
    Full,
    Normal,
}

impl Synchronous {
    /// Splits the setting off a `sqlite://` URL (sqlx does not know it):
    /// the URL without it, and the setting (the default when absent).
    pub fn take_from(url: &str) -> Result<(String, Synchronous)> {
        let Some((base, query)) = url.split_once('?') else {
            return Ok((url.to_string(), Synchronous::default()));
        };
        let mut synchronous = Synchronous::default();
        let mut kept = Vec::new();
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some((key, value)) if key.eq_ignore_ascii_case("synchronous") => {
                    synchronous = match value.to_ascii_lowercase().as_str() {
                        "full" => Synchronous::Full,
                        "normal" => Synchronous::Normal,
                        _ => {
                            return Err(StoreError::Unavailable(format!(
                                "bad SQLite URL `{url}`: synchronous must be `full` or \
                                 `normal`, not `{value}`"
                            )))
                        }
                    }
                }
                _ => kept.push(pair),
            }
        }
        let rest = if kept.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        Ok((rest, synchronous))
    }

    /// The URL's setting, as `take_from` reads it.
    pub fn query(self) -> &'static str {
        match self {
            Synchronous::Full => "synchronous=full",
            Synchronous::Normal => "synchronous=normal",
        }
    }

    /// The value of SQLite's `PRAGMA synchronous`.
    pub(crate) fn pragma(self) -> &'static str {
        match self {
            Synchronous::Full => "FULL",
            Synchronous::Normal => "NORMAL",
        }
    }
}

/// The file the writer thread writes and the inline readers read, and the
/// lock the writer shares with the store's other writers.
#[derive(Clone)]
pub(crate) struct Target {
    pub path: PathBuf,
    /// How durable a commit is, as the store's other connections have it.
    pub synchronous: Synchronous,
    pub read_only: bool,
    pub lock: Arc<tokio::sync::Mutex<()>>,
    /// The log the store flushes itself with `synchronous=FULL`, shared by
    /// the writer's flusher and `sqlite_writer::commit_once` (and asked by
    /// the store whether a flush has failed).
    pub log: Arc<Log>,
}

/// The store's connection settings (`SqliteStore::connect_options`): WAL,
/// the URL's `synchronous` (FULL unless it says otherwise), foreign keys,
/// a 5 s busy timeout. Also what
/// `kandev-recovery bench` measures the raw commit ceiling on.
pub(crate) fn open(target: &Target) -> rusqlite::Result<Connection> {
    let flags = if target.read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
    };
    let c = Connection::open_with_flags(&target.path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    c.busy_timeout(Duration::from_secs(5))?;
    c.pragma_update(None, "synchronous", target.synchronous.pragma())?;
    c.pragma_update(None, "foreign_keys", "ON")?;
    // Every statement a transition can run, and the generation read.
    c.set_prepared_statement_cache_capacity(32);
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(url: &str) -> (String, Synchronous) {
        Synchronous::take_from(url).unwrap()
    }

    #[test]
    fn the_synchronous_setting_is_read_off_the_url_and_left_out_of_it() {
        let full = Synchronous::Full;
        assert_eq!(taken("sqlite://d/x.db"), ("sqlite://d/x.db".into(), full));
        assert_eq!(
            taken("sqlite://d/x.db?synchronous=NORMAL"),
            ("sqlite://d/x.db".into(), Synchronous::Normal)
        );
        assert_eq!(
            taken("sqlite://d/x.db?mode=rwc&synchronous=full&cache=private"),
            ("sqlite://d/x.db?mode=rwc&cache=private".into(), full)
        );
        let e = Synchronous::take_from("sqlite://x.db?synchronous=off")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("synchronous must be `full` or `normal`, not `off`"),
            "{e}"
        );
    }
}
