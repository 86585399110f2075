//! SQLite's write-ahead log as the store flushes it itself
//! (`synchronous=FULL`, see `sqlite_writer::Flusher`).
//!
//! Three things SQLite's own FULL does that a flush from outside must do
//! too, or be worse than it:
//!
//! - **One file, kept open.** Linux reports a failed write-back (the disk
//!   refused pages SQLite wrote into the page cache) once to each file
//!   description open when it happened; a file opened afterwards is not
//!   told. So the log is opened once and flushed through that one
//!   description, and is opened anew only when the path names another
//!   file (SQLite removed the log, having checkpointed it into the
//!   database, and started a new one).
//! - **A new log's directory entry.** A file created since the directory
//!   was last flushed may be missing from it after a crash, whatever was
//!   flushed into the file; SQLite flushes the directory on the first
//!   flush of a log it created (where the file system allows it), and so
//!   does this, on every log it opens.
//! - **A failed flush is final.** After a failed `fdatasync` the kernel
//!   may have dropped the pages it could not write and marked them clean:
//!   a later flush succeeds without them, and the log's checksum chain
//!   ends at the hole, so a crash would lose every commit after it. So
//!   once a flush fails, every later one fails too (every write answers
//!   unavailable, and `/readyz` says why) until the service is restarted,
//!   as PostgreSQL stops on a failed flush of its own log.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub(crate) struct Log {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The log file as opened, with its device and inode.
    held: Option<(File, (u64, u64))>,
    /// The first flush that failed, in words; final.
    failed: Option<String>,
}

impl Log {
    /// The log of the database at `db`: the file beside it, named with
    /// `-wal`.
    ///
    /// SQLite resolves a symbolic link to the database and keeps the log
    /// beside the file it points to, so the link is resolved here too: the
    /// log beside a link would never exist, and a flush of it would pass
    /// without flushing anything. (The file exists by the time the writer
    /// starts: the store opened and migrated it.)
    pub(crate) fn beside(db: &Path) -> Log {
        let db = std::fs::canonicalize(db).unwrap_or_else(|_| db.to_path_buf());
        let mut wal = db.into_os_string();
        wal.push("-wal");
        Log {
            path: PathBuf::from(wal),
            state: Mutex::default(),
        }
    }

    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Makes every commit written to the log so far durable. A log that is
    /// gone was checkpointed into the database file, which the checkpoint
    /// flushed: nothing to do.
    pub(crate) fn flush(&self) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(first) = &state.failed {
            return Err(io::Error::other(failed_before(first)));
        }
        let outcome = flush_held(&self.path, &mut state.held);
        if let Err(e) = &outcome {
            state.failed = Some(e.to_string());
            state.held = None;
        }
        outcome
    }

    /// Why writes cannot be trusted any more, once a flush has failed.
    pub(crate) fn failure(&self) -> Option<String> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.failed.as_deref().map(failed_before)
    }
}

fn failed_before(first: &str) -> String {
    format!(
        "a flush of the database log failed ({first}); what was committed since may not be \
         on the disk, so writes stay refused: restart the service once the disk is sound"
    )
}

fn flush_held(path: &Path, held: &mut Option<(File, (u64, u64))>) -> io::Result<()> {
    let on_disk = match std::fs::metadata(path) {
        Ok(m) => (m.dev(), m.ino()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            *held = None;
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    if held.as_ref().map(|(_, id)| *id) != Some(on_disk) {
        let file = match File::open(path) {
            Ok(f) => f,
            // Checkpointed and removed between the two looks.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                *held = None;
                return Ok(());
            }
            Err(e) => return Err(e),
        };
        let m = file.metadata()?;
        // As SQLite does, a directory that cannot be opened or flushed
        // (some file systems refuse either) does not fail the flush.
        if let Some(dir) = path.parent().and_then(|d| File::open(d).ok()) {
            let _ = dir.sync_all();
        }
        *held = Some((file, (m.dev(), m.ino())));
    }
    match held {
        Some((file, _)) => file.sync_data(),
        None => Ok(()),
    }
}

#[cfg(test)]
impl Log {
    /// The inode of the file held, if any.
    fn held_inode(&self) -> Option<u64> {
        let state = self.state.lock().unwrap();
        state.held.as_ref().map(|(_, (_, ino))| *ino)
    }

    /// As if a flush had failed with `e`.
    fn fail_with(&self, e: &io::Error) {
        self.state.lock().unwrap().failed = Some(e.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_is_the_file_beside_the_database_or_the_file_a_link_points_to() {
        let dir = tempfile::tempdir().unwrap();
        let dir_path = std::fs::canonicalize(dir.path()).unwrap();
        let db = dir_path.join("x.db");
        assert_eq!(Log::beside(&db).path(), dir_path.join("x.db-wal"));
        std::fs::create_dir(dir_path.join("real")).unwrap();
        std::fs::write(dir_path.join("real/y.db"), b"").unwrap();
        std::os::unix::fs::symlink(dir_path.join("real/y.db"), dir_path.join("link.db")).unwrap();
        assert_eq!(
            Log::beside(&dir_path.join("link.db")).path(),
            dir_path.join("real/y.db-wal")
        );
    }

    #[test]
    fn the_log_is_held_open_and_opened_again_only_when_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::beside(&dir.path().join("x.db"));
        // No log yet (or checkpointed away): nothing to flush, nothing held.
        log.flush().unwrap();
        assert_eq!(log.held_inode(), None);
        std::fs::write(log.path(), b"frames").unwrap();
        log.flush().unwrap();
        let first = log.held_inode().expect("held");
        // Written again in place (SQLite reuses its log): the same file.
        std::fs::write(log.path(), b"more frames").unwrap();
        log.flush().unwrap();
        assert_eq!(log.held_inode(), Some(first));
        // Removed and created anew: the new file is the one flushed.
        // (The old one is kept open meanwhile, so the two inodes differ.)
        std::fs::remove_file(log.path()).unwrap();
        std::fs::write(log.path(), b"new log").unwrap();
        log.flush().unwrap();
        let second = log.held_inode().expect("held");
        assert_ne!(second, first);
        assert_eq!(
            second,
            std::fs::metadata(log.path()).unwrap().ino(),
            "the file now at the path"
        );
        std::fs::remove_file(log.path()).unwrap();
        log.flush().unwrap();
        assert_eq!(log.held_inode(), None);
        assert_eq!(log.failure(), None);
    }

    #[test]
    fn a_failed_flush_is_final() {
        let dir = tempfile::tempdir().unwrap();
        let log = Log::beside(&dir.path().join("x.db"));
        std::fs::write(log.path(), b"frames").unwrap();
        log.flush().unwrap();
        log.fail_with(&io::Error::other("EIO"));
        for _ in 0..2 {
            let e = log.flush().expect_err("still failing");
            assert!(e.to_string().contains("EIO"), "{e}");
            assert!(e.to_string().contains("restart"), "{e}");
        }
        assert!(log.failure().is_some_and(|w| w.contains("EIO")));
    }

    #[test]
    fn a_log_that_cannot_be_looked_at_fails_the_flush_and_every_later_one() {
        let dir = tempfile::tempdir().unwrap();
        // A real failure, not a simulated one: a path through a file.
        std::fs::write(dir.path().join("file"), b"").unwrap();
        let log = Log::beside(&dir.path().join("file/x.db"));
        let first = log.flush().expect_err("not a directory");
        assert!(log.failure().is_some());
        // The cause gone, the flush still fails: it was final.
        std::fs::remove_file(dir.path().join("file")).unwrap();
        let later = log.flush().expect_err("final");
        assert!(later.to_string().contains(&first.to_string()), "{later}");
    }
}
