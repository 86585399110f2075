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
//!   once a flush fails, every later one fails too (every route
//!   transition answers unavailable, and so does every write through the
//!   pool, which SQLite flushes itself: its flush would succeed without
//!   the lost pages; `/readyz` says why) until the
//!   service is restarted, as PostgreSQL stops on a failed flush of its
//!   own log. Only the flush itself: a log that could not be looked at or
//!   opened fails that one flush, having lost nothing.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

pub(crate) struct Log {
    path: PathBuf,
    /// The log file as opened, with its device and inode.
    held: Mutex<Option<(File, (u64, u64))>>,
    /// The first flush that failed, in words; final. Outside the lock the
    /// flush holds, so `/readyz` never waits on a stalled disk to ask.
    failed: OnceLock<String>,
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
            held: Mutex::default(),
            failed: OnceLock::new(),
        }
    }

    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Makes every commit written to the log so far durable. A log that is
    /// gone was checkpointed into the database file, which the checkpoint
    /// flushed: nothing to do.
    ///
    /// Only a failed flush is final. Failing to look at or open the log
    /// (too many open files, a permission, a passing network file system
    /// error) loses nothing the kernel held: that flush fails, its batch
    /// answers unavailable, and the next one tries again.
    pub(crate) fn flush(&self) -> io::Result<()> {
        if let Some(why) = self.failure() {
            return Err(io::Error::other(why));
        }
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        match flush_held(&self.path, &mut held) {
            Ok(()) => Ok(()),
            Err(Failure::Looking(e)) => Err(e),
            Err(Failure::Flushing(e)) => {
                let _ = self.failed.set(e.to_string());
                *held = None;
                Err(e)
            }
        }
    }

    /// Why writes cannot be trusted any more, once a flush has failed.
    pub(crate) fn failure(&self) -> Option<String> {
        self.failed.get().map(String::as_str).map(failed_before)
    }
}

fn failed_before(first: &str) -> String {
    format!(
        "a flush of the database log failed ({first}); what was committed since may not be \
         on the disk, so route transitions stay refused: restart the service once the disk is \
         sound"
    )
}

/// Why [`flush_held`] failed.
enum Failure {
    /// The log could not be looked at or opened: nothing was lost.
    Looking(io::Error),
    /// The flush itself failed: what the log held may be lost.
    Flushing(io::Error),
}

fn flush_held(path: &Path, held: &mut Option<(File, (u64, u64))>) -> Result<(), Failure> {
    let on_disk = match std::fs::metadata(path) {
        Ok(m) => Some((m.dev(), m.ino())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(Failure::Looking(e)),
    };
    if held.as_ref().map(|(_, id)| *id) != on_disk {
        // The file held (if any) is no longer the log: flushed once more
        // before it is let go, in case something other than a checkpoint
        // removed it.
        if let Some((old, _)) = held.take() {
            old.sync_data().map_err(Failure::Flushing)?;
        }
        if on_disk.is_none() {
            return Ok(());
        }
        let file = match File::open(path) {
            Ok(f) => f,
            // Checkpointed and removed between the two looks.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Failure::Looking(e)),
        };
        let m = file.metadata().map_err(Failure::Looking)?;
        // As SQLite does, a directory that cannot be opened or flushed
        // (some file systems refuse either) does not fail the flush.
        if let Some(dir) = path.parent().and_then(|d| File::open(d).ok()) {
            let _ = dir.sync_all();
        }
        *held = Some((file, (m.dev(), m.ino())));
    }
    match held {
        Some((file, _)) => file.sync_data().map_err(Failure::Flushing),
        None => Ok(()),
    }
}

#[cfg(test)]
impl Log {
    /// The inode of the file held, if any.
    fn held_inode(&self) -> Option<u64> {
        let held = self.held.lock().unwrap();
        held.as_ref().map(|(_, (_, ino))| *ino)
    }

    /// As if a flush had failed with `e`.
    pub(crate) fn fail_with(&self, e: &io::Error) {
        self.failed.set(e.to_string()).unwrap();
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
    fn a_log_that_cannot_be_looked_at_fails_that_flush_only() {
        let dir = tempfile::tempdir().unwrap();
        // A real failure, not a simulated one: a path through a file.
        std::fs::write(dir.path().join("file"), b"").unwrap();
        let log = Log::beside(&dir.path().join("file/x.db"));
        log.flush().expect_err("not a directory");
        // Nothing the kernel held was lost: not final.
        assert_eq!(log.failure(), None);
        std::fs::remove_file(dir.path().join("file")).unwrap();
        log.flush().unwrap();
    }
}
