//! SQLite's group-commit writer: a thread of its own with one synchronous
//! connection, which runs each batch ([`super::group`]) from `BEGIN` to
//! `COMMIT` without leaving it.
//!
//! Through sqlx every statement is a hop to the connection's worker
//! thread and back — two thread switches — and a batch is several
//! statements per member, run one after another under SQLite's single
//! writer: the hops, not SQLite, bounded committed decisions (README,
//! "Where decisions go"). Here a batch is one hop in (the queue) and one
//! answer out per member, and its statements are prepared once and kept.
//!
//! The statements are [`transition::statements`], the same list the
//! PostgreSQL store runs, with the same savepoint per member. The writer
//! holds the store's in-process write lock (the one sqlx's writers queue
//! on) for each batch, so the two never wait on each other inside SQLite.

use super::group::{self, Member, SAVEPOINT};
use super::transition::{statements, Check, Miss, Param, GENERATION};
use super::{Commit, Result, StoreError};
use rusqlite::types::{ToSqlOutput, Value};
use rusqlite::{Connection, OpenFlags, OptionalExtension};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Where the writer writes, and the lock it shares with the store's other
/// writers.
#[derive(Clone)]
pub(crate) struct Target {
    pub path: PathBuf,
    pub read_only: bool,
    pub lock: Arc<tokio::sync::Mutex<()>>,
}

/// Starts the writer thread on `queue`. A thread that cannot be started
/// drops the queue, and the transitions in it answer that the writer
/// stopped.
pub(crate) fn start(target: Target) -> impl FnOnce(mpsc::UnboundedReceiver<Member>) {
    move |queue| {
        let spawned = std::thread::Builder::new()
            .name("sqlite-writer".into())
            .spawn(move || {
                let mut writer = Writer { target, conn: None };
                group::run_blocking(queue, |commits| writer.batch(&commits));
            });
        if let Err(e) = spawned {
            tracing::error!(error = %e, "the SQLite writer thread could not be started");
        }
    }
}

/// Commits `commits` together on a connection of their own, as the writer
/// would (for [`super::Store::commit_all`]); blocking.
pub(crate) fn commit_once(target: Target, commits: &[Commit]) -> Vec<Result<i64>> {
    Writer { target, conn: None }.batch(commits)
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
            self.conn = Some(open(&self.target).map_err(unavailable)?);
        }
        Ok(self.conn.as_ref().expect("just opened"))
    }
}

/// The store's connection settings (`SqliteStore::connect_options`): WAL,
/// `synchronous=NORMAL`, foreign keys, a 5 s busy timeout. Also what
/// `kandev-recovery bench` measures the raw commit ceiling on.
pub(crate) fn open(target: &Target) -> rusqlite::Result<Connection> {
    let flags = if target.read_only {
        OpenFlags::SQLITE_OPEN_READ_ONLY
    } else {
        OpenFlags::SQLITE_OPEN_READ_WRITE
    };
    let c = Connection::open_with_flags(&target.path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    c.busy_timeout(Duration::from_secs(5))?;
    c.pragma_update(None, "synchronous", "NORMAL")?;
    c.pragma_update(None, "foreign_keys", "ON")?;
    // Every statement a transition can run, and the generation read.
    c.set_prepared_statement_cache_capacity(32);
    Ok(c)
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
