//! SQLite's group-commit writer: a thread of its own with one synchronous
//! connection, which runs each batch ([`super::group`]) from `BEGIN` to
//! `COMMIT` without leaving it.
//!
//! Through sqlx every statement is a hop to the connection's worker
//! thread and back — two thread switches — and a batch is several
//! statements per member, run one after another under SQLite's single
//! writer: the hops, not SQLite, bounded committed decisions
//! (docs/architecture.md, "How a transition is stored"). Here a batch is
//! one hop in (the queue) and one answer out per member, and its
//! statements are prepared once and kept.
//!
//! The statements are [`transition::statements`], the same list the
//! PostgreSQL store runs, with the same savepoint per member. The writer
//! holds the store's in-process write lock (the one sqlx's writers queue
//! on) for each batch, so the two never wait on each other inside SQLite.

use super::group::{self, Member, SAVEPOINT};
use super::sqlite_file::{open, Synchronous, Target};
use super::sqlite_log::Log;
use super::transition::{statements, Check, Miss, Param, GENERATION};
use super::{Commit, Result, StoreError};
use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{Connection, OptionalExtension};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Starts the writer thread on `queue` (and, for `synchronous=FULL`, its
/// flusher). A thread that cannot be started drops the queue, and the
/// transitions in it answer that the writer stopped.
pub(crate) fn start(target: Target) -> impl FnOnce(mpsc::UnboundedReceiver<Member>) {
    move |queue| {
        let flusher = match target.synchronous {
            Synchronous::Full => match Flusher::start(target.log.clone()) {
                Ok(f) => Some(f),
                Err(e) => {
                    tracing::error!(error = %e, "the SQLite flusher thread could not be started");
                    return;
                }
            },
            Synchronous::Normal => None,
        };
        let spawned = std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                let mut writer = Writer { target, conn: None };
                group::run_blocking(
                    queue,
                    |commits| writer.batch(&commits),
                    |answers, results| match &flusher {
                        Some(f) => f.deliver(answers, results),
                        None => group::answer(answers, results),
                    },
                );
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "the SQLite writer thread could not be started");
        }
    }
}

/// Commits `commits` together on a connection of their own, as the writer
/// would (for [`super::Store::commit_all`]), durable as the store's
/// setting says before it answers; blocking.
pub(crate) fn commit_once(target: Target, commits: &[Commit]) -> Vec<Result<i64>> {
    let flush = (target.synchronous == Synchronous::Full).then(|| target.log.clone());
    let results = Writer { target, conn: None }.batch(commits);
    match flush {
        Some(log) => durable(&log, results),
        None => results,
    }
}

/// `synchronous=FULL` without holding the writer up for the flush.
///
/// With FULL, SQLite flushes the log inside every `COMMIT`, while it
/// holds the write lock: batch after batch waits for the disk, so the
/// disk's flush time, not the work, bounds committed decisions. Instead
/// the writer commits without a flush (its connection is NORMAL), lets
/// the next batch begin, and hands the answers to this thread, which
/// flushes the log (`fdatasync`) and only then answers them — one flush
/// for every batch that committed meanwhile. The log is written in
/// order, so a flush makes every earlier commit durable, and a
/// transaction whose flush failed or never happened is simply lost by a
/// machine crash, as with FULL. No answer leaves before its transition is
/// on the disk; what a later transaction built on an earlier one is
/// answered after it, by the same log order. Readers can see a
/// transition a moment before it is durable (never a caller acting on
/// its answer).
struct Flusher {
    queue: std::sync::mpsc::Sender<(group::Answers, Vec<Result<i64>>)>,
}

impl Flusher {
    fn start(log: Arc<Log>) -> std::io::Result<Flusher> {
        let (queue, taken) = std::sync::mpsc::channel::<(group::Answers, Vec<Result<i64>>)>();
        std::thread::Builder::new()
            .name("sqlite-flusher".into())
            .spawn(move || {
                while let Ok(first) = taken.recv() {
                    let mut pending = vec![first];
                    pending.extend(taken.try_iter());
                    let flushed = log.flush();
                    for (answers, results) in pending {
                        group::answer(answers, after_flush(&flushed, results));
                    }
                }
            })?;
        Ok(Flusher { queue })
    }

    fn deliver(&self, answers: group::Answers, results: Vec<Result<i64>>) {
        // The flusher ends only when this sender is dropped: sending
        // cannot fail while the writer runs.
        let _ = self.queue.send((answers, results));
    }
}

/// `results` once the log is flushed: as they are, or every member
/// unavailable when the flush failed (what committed may not be durable).
fn durable(log: &Log, results: Vec<Result<i64>>) -> Vec<Result<i64>> {
    if results.iter().all(|r| r.is_err()) {
        return results;
    }
    after_flush(&log.flush(), results)
}

fn after_flush(flushed: &std::io::Result<()>, results: Vec<Result<i64>>) -> Vec<Result<i64>> {
    match flushed {
        Ok(()) => results,
        Err(e) => {
            tracing::error!(error = %e, "flushing the SQLite log failed; the batch is not durable");
            group::failed_batch(
                results.len(),
                &StoreError::Unavailable(format!("flushing the database log failed: {e}")),
            )
        }
    }
}

struct Writer {
    target: Target,
    /// Opened on the first batch, and again after a batch failed as a
    /// whole (the file may have been replaced, or the disk filled).
    conn: Option<Connection>,
}

impl Writer {
    fn batch(&mut self, commits: &[Commit]) -> Vec<Result<i64>> {
        let lock = self.target.lock.clone();
        let _turn = lock.blocking_lock();
        let outcome = self.connection().and_then(|c| try_batch(c, commits));
        match outcome {
            Ok(answers) => answers,
            Err(e) => {
                tracing::warn!(error = %e, members = commits.len(), "a batch of route transitions failed");
                // A failed COMMIT can leave the transaction open (a
                // deferred constraint) or end it (a full disk); either
                // way nothing of it may stay, and the connection starts
                // afresh next time.
                if let Some(c) = self.conn.take() {
                    if !c.is_autocommit() {
                        let _ = c.execute_batch("ROLLBACK");
                    }
                }
                group::failed_batch(commits.len(), &e)
            }
        }
    }

    fn connection(&mut self) -> Result<&Connection> {
        if self.conn.is_none() {
            let c = open(&self.target).map_err(unavailable)?;
            // FULL is kept by flushing after the COMMIT (see [`Flusher`]).
            c.pragma_update(None, "synchronous", "NORMAL")
                .map_err(unavailable)?;
            self.conn = Some(c);
        }
        Ok(self.conn.as_ref().expect("just opened"))
    }
}

/// The batch's transaction; an error here fails every member.
fn try_batch(c: &Connection, commits: &[Commit]) -> Result<Vec<Result<i64>>> {
    c.execute_batch("BEGIN IMMEDIATE").map_err(unavailable)?;
    c.execute_batch(SAVEPOINT).map_err(unavailable)?;
    let mut answers = Vec::with_capacity(commits.len());
    for (i, commit) in commits.iter().enumerate() {
        let answer = apply(c, commit);
        if let Some(sql) = group::after_member(answer.is_ok(), i + 1 == commits.len()) {
            c.execute_batch(sql).map_err(unavailable)?;
        }
        answers.push(answer);
    }
    c.execute_batch("COMMIT").map_err(unavailable)?;
    Ok(answers)
}

/// One member, inside its savepoint: the transition's statements in order.
fn apply(c: &Connection, commit: &Commit) -> Result<i64> {
    for s in statements(commit)? {
        let mut statement = c.prepare_cached(s.sql).map_err(store_error)?;
        let params = rusqlite::params_from_iter(s.params.iter());
        match s.check {
            Check::EventId => {
                return statement
                    .query_row(params, |r| r.get(0))
                    .map_err(store_error)
            }
            Check::Any => {
                statement.execute(params).map_err(store_error)?;
            }
            Check::One(miss) => {
                if statement.execute(params).map_err(store_error)? != 1 {
                    let current = match miss {
                        Miss::Route => {
                            let id = commit.route.as_ref().map(|r| r.id.as_str());
                            c.prepare_cached(GENERATION)
                                .and_then(|mut q| q.query_row([id], |r| r.get(0)).optional())
                                .map_err(store_error)?
                        }
                        _ => None,
                    };
                    return Err(miss.error(current));
                }
            }
        }
    }
    Err(StoreError::Unavailable(
        "a transition without an event".into(),
    ))
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Param::Text(v) | Param::OptText(Some(v)) => ToSqlOutput::from(v),
            Param::Int(v) | Param::OptInt(Some(v)) => ToSqlOutput::from(v),
            Param::OptText(None) | Param::OptInt(None) => ToSqlOutput::Owned(Value::Null),
        })
    }
}

/// As sqlx maps them (`impl From<sqlx::Error> for StoreError`): a unique
/// or primary key violation is `AlreadyExists`, anything else leaves the
/// member (or the batch) unavailable.
fn store_error(e: rusqlite::Error) -> StoreError {
    match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY =>
        {
            StoreError::AlreadyExists
        }
        _ => unavailable(e),
    }
}

fn unavailable(e: rusqlite::Error) -> StoreError {
    StoreError::Unavailable(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_flush_leaves_every_member_unavailable() {
        let results = vec![Ok(7), Err(StoreError::AlreadyExists), Ok(9)];
        let lost = std::io::Error::other("EIO");
        let answered = after_flush(&Err(lost), results);
        assert_eq!(answered.len(), 3);
        for r in answered {
            match r {
                Err(StoreError::Unavailable(why)) => assert!(why.contains("flushing"), "{why}"),
                other => panic!("answered {other:?}"),
            }
        }
        let kept = after_flush(&Ok(()), vec![Ok(1), Err(StoreError::AlreadyExists)]);
        assert!(matches!(kept[..], [Ok(1), Err(StoreError::AlreadyExists)]));
    }

    #[test]
    fn the_writer_leaves_the_flush_to_the_flusher_and_every_other_connection_flushes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.db");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("PRAGMA journal_mode=WAL; CREATE TABLE t (x INTEGER)")
            .unwrap();
        let target = Target {
            log: Arc::new(Log::beside(&path)),
            path,
            synchronous: Synchronous::Full,
            read_only: false,
            lock: Arc::default(),
        };
        // The writer's own connection commits without a flush of its own.
        let mut writer = Writer {
            target: target.clone(),
            conn: None,
        };
        let own: i64 = writer
            .connection()
            .unwrap()
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            own, 1,
            "NORMAL on the writer's connection, FULL by the flush"
        );
        // Every other connection is FULL.
        let other: i64 = open(&target)
            .unwrap()
            .query_row("PRAGMA synchronous", [], |r| r.get(0))
            .unwrap();
        assert_eq!(other, 2);
    }
}
