//! Group commit: route transitions share transactions.
//!
//! A transition is a handful of short statements and one durable commit.
//! Committed one by one, the path is bound by latency: under SQLite's one
//! writer every statement's hop to the connection's thread, and on
//! PostgreSQL every commit's WAL flush, sits on the critical path of every
//! transition behind it. So [`Store::commit`](super::Store::commit) queues
//! the transition for the store's one writer task ([`GroupCommit`]), which
//! takes whatever is queued — up to [`MAX_BATCH`] — and commits it in one
//! transaction, each member under its own `SAVEPOINT`:
//!
//! - a member whose route or circuit moved on, or one of whose statements
//!   fails, is rolled back to its savepoint and answers its own error,
//!   alone; the members after it see the database as if it never ran;
//! - members commit in the order they were queued, so two transitions of
//!   one route in one batch are fenced exactly as if committed one after
//!   the other;
//! - answers go back only after the batch's `COMMIT`, so callers arm
//!   timers and publish events only for what is durable, and a stale
//!   answer's re-read sees the transition that beat it;
//! - a failed `COMMIT` (or a failure outside every savepoint) fails every
//!   member ([`failed_batch`]): nothing of the batch is visible, nothing
//!   is scheduled.
//!
//! Under no load a batch is one transition, committed at once: nothing
//! waits for a batch to fill.

use super::{Commit, Result, StoreError};
use std::future::Future;
use tokio::sync::{mpsc, oneshot};

/// The most transitions one batch commits: enough to absorb a burst from
/// many clients, few enough that a batch holding SQLite's write lock (or
/// PostgreSQL's event-order lock) never keeps another writer out for long.
pub(crate) const MAX_BATCH: usize = 64;

/// The longest PostgreSQL's writer (and an SQLite store without a file of
/// its own: in memory, or a test's read-only view) waits for one batch (a batch takes milliseconds; a
/// slow database, seconds); the SQLite file's writer thread is bounded by
/// its busy timeout on a local disk instead. A database host that vanished
/// without closing the socket would hold the writer — and every transition
/// queued behind it — until the OS gave up on the connection, many minutes
/// later; the batch is given up first. Whether it committed is not known
/// then, so every member answers unavailable, as for a failed `COMMIT`.
pub(crate) const BATCH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The savepoint each member runs under (one at a time, so one name).
pub(crate) const SAVEPOINT: &str = "SAVEPOINT member";
/// A member committed: keep its writes, open the next member's savepoint.
pub(crate) const NEXT: &str = "RELEASE SAVEPOINT member; SAVEPOINT member";
/// A member failed: undo its writes. The savepoint stays, marking the
/// same state again, for the next member.
pub(crate) const ROLL_BACK: &str = "ROLLBACK TO SAVEPOINT member";

/// What follows a member's statements: keep them and open the next
/// member's savepoint, undo them, or nothing (the last member's savepoint
/// goes with the COMMIT).
pub(crate) fn after_member(committed: bool, last: bool) -> Option<&'static str> {
    match (committed, last) {
        (true, true) => None,
        (true, false) => Some(NEXT),
        (false, _) => Some(ROLL_BACK),
    }
}

/// A queued transition and where its answer goes.
pub(crate) struct Member {
    commit: Commit,
    answer: oneshot::Sender<Result<i64>>,
}

/// The queue to a store's writer task, which is started by the first
/// commit (so a store can be made outside a runtime) and again if the
/// runtime that ran it has ended (a store outliving a test's runtime).
#[derive(Default)]
pub(crate) struct GroupCommit {
    queue: std::sync::Mutex<Option<mpsc::UnboundedSender<Member>>>,
}

impl GroupCommit {
    /// Queues `commit` and waits for its answer; `start` spawns a writer
    /// on the receiving end when none is running.
    pub(crate) async fn commit(
        &self,
        commit: &Commit,
        start: impl FnOnce(mpsc::UnboundedReceiver<Member>),
    ) -> Result<i64> {
        let (answer, answered) = oneshot::channel();
        let member = Member {
            commit: commit.clone(),
            answer,
        };
        {
            let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            let unsent = match queue.as_ref() {
                Some(q) => q.send(member).err().map(|e| e.0),
                None => Some(member),
            };
            // No writer yet, or its runtime ended and took it along.
            if let Some(member) = unsent {
                let (q, r) = mpsc::unbounded_channel();
                start(r);
                // Its receiver is alive (held by the writer just started).
                let _ = q.send(member);
                *queue = Some(q);
            }
        }
        answered.await.unwrap_or_else(|_| {
            Err(StoreError::Unavailable(
                "the store's writer stopped before the transition was committed".into(),
            ))
        })
    }
}

/// The writer task: takes everything queued (at least one transition, at
/// most [`MAX_BATCH`]), commits it with `batch` and answers each member,
/// until the store is dropped.
pub(crate) async fn run<F, Fut>(mut queue: mpsc::UnboundedReceiver<Member>, mut batch: F)
where
    F: FnMut(Vec<Commit>) -> Fut,
    Fut: Future<Output = Vec<Result<i64>>>,
{
    let mut taken = Vec::with_capacity(MAX_BATCH);
    while queue.recv_many(&mut taken, MAX_BATCH).await > 0 {
        if let Some((commits, answers)) = still_wanted(&mut taken) {
            answer(answers, batch(commits).await);
        }
    }
}

/// [`run`] on a thread of its own, with a synchronous `batch` (SQLite's
/// writer, see [`super::sqlite_writer`]): the same batches, until the
/// store is dropped; each batch's answers go to `deliver` (which answers
/// them, at once or once they are durable).
pub(crate) fn run_blocking(
    mut queue: mpsc::UnboundedReceiver<Member>,
    mut batch: impl FnMut(Vec<Commit>) -> Vec<Result<i64>>,
    mut deliver: impl FnMut(Answers, Vec<Result<i64>>),
) {
    let mut taken = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = queue.blocking_recv() {
        taken.push(first);
        while taken.len() < MAX_BATCH {
            match queue.try_recv() {
                Ok(m) => taken.push(m),
                Err(_) => break,
            }
        }
        if let Some((commits, answers)) = still_wanted(&mut taken) {
            deliver(answers, batch(commits));
        }
    }
}

/// Where a batch's answers go, in member order.
pub(crate) type Answers = Vec<oneshot::Sender<Result<i64>>>;

/// The taken members whose callers still wait, split into the batch and
/// where its answers go; `None` when nobody waits.
fn still_wanted(taken: &mut Vec<Member>) -> Option<(Vec<Commit>, Answers)> {
    // A caller that stopped waiting before its turn is not committed:
    // as before group commit, a transition abandoned before it began
    // leaves nothing behind.
    taken.retain(|m| !m.answer.is_closed());
    if taken.is_empty() {
        return None;
    }
    Some(taken.drain(..).map(|m| (m.commit, m.answer)).unzip())
}

pub(crate) fn answer(answers: Answers, results: Vec<Result<i64>>) {
    for (answer, result) in answers.into_iter().zip(results) {
        // A caller that hung up meanwhile no longer wants the answer.
        let _ = answer.send(result);
    }
}

/// The answers of a batch whose transaction failed as a whole (its
/// `COMMIT`, `BEGIN` or a savepoint statement): every member, including
/// those that had succeeded or failed alone — their verdicts were made
/// against writes that are gone now.
pub(crate) fn failed_batch(members: usize, error: &StoreError) -> Vec<Result<i64>> {
    let detail = match error {
        StoreError::Unavailable(detail) => detail.clone(),
        other => other.to_string(),
    };
    (0..members)
        .map(|_| {
            Err(StoreError::Unavailable(format!(
                "{detail} (the transaction this transition was committed in, with others, did not finish)"
            )))
        })
        .collect()
}

/// What one announcement says for a batch: its last event, the earliest
/// deadline any member armed, and whether any made a dispatch. Waiters read the
/// database when woken, so one announcement per batch wakes everyone a
/// member concerns. `None` when no member committed.
pub(crate) fn announcement<'a>(
    members: impl IntoIterator<Item = (&'a Commit, &'a Result<i64>)>,
) -> Option<super::Announcement> {
    members
        .into_iter()
        .filter_map(|(c, r)| r.as_ref().ok().map(|id| (c, *id)))
        .fold(None, |acc: Option<super::Announcement>, (c, id)| {
            let a = acc.unwrap_or(super::Announcement {
                event_id: id,
                schedule: None,
                dispatch: false,
            });
            let deadline = c.schedule.as_ref().map(|s| s.deadline);
            Some(super::Announcement {
                event_id: a.event_id.max(id),
                schedule: match (a.schedule, deadline) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                },
                dispatch: a.dispatch || c.dispatch.is_some(),
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Announcement, DispatchRow, ScheduleRow};

    fn with(schedule: Option<i64>, dispatch: bool) -> Commit {
        Commit {
            schedule: schedule.map(|deadline| ScheduleRow {
                id: "s".into(),
                route_id: "r".into(),
                generation: 1,
                kind: "retry".into(),
                deadline,
                state: "armed".into(),
                created_at: 0,
                circuit: None,
            }),
            dispatch: dispatch.then(|| DispatchRow {
                id: "d".into(),
                route_id: "r".into(),
                generation: 1,
                invocation_id: "i".into(),
                prompt_generation: 1,
                candidate_index: 0,
                candidate_id: "c".into(),
                candidate_label: "C".into(),
                caller_kind: "utility".into(),
                reason: "retry".into(),
                state: "pending".into(),
                lease_until: None,
                created_at: 0,
                claimed_at: None,
                acked_at: None,
                resume: None,
            }),
            ..Commit::default()
        }
    }

    #[test]
    fn a_batch_announces_its_last_event_and_what_its_committed_members_did() {
        let (plain, later, sooner, dispatched, stale_sooner) = (
            with(None, false),
            with(Some(5_000), false),
            with(Some(2_000), false),
            with(None, true),
            with(Some(1_000), false),
        );
        let stale = || Err(StoreError::StaleGeneration { current: 3 });
        // The failed members armed a dispatch and the soonest schedule,
        // neither committed: no `d`, and the earliest committed deadline.
        let batch = [
            (&plain, Ok(7)),
            (&later, Ok(9)),
            (&sooner, Ok(8)),
            (&dispatched, stale()),
            (&stale_sooner, stale()),
        ];
        assert_eq!(
            announcement(batch.iter().map(|(c, r)| (*c, r))),
            Some(Announcement {
                event_id: 9,
                schedule: Some(2_000),
                dispatch: false
            })
        );
        let none: [(&Commit, Result<i64>); 1] = [(&dispatched, Err(StoreError::NotFound))];
        assert_eq!(announcement(none.iter().map(|(c, r)| (*c, r))), None);
    }

    #[test]
    fn a_failed_batch_fails_every_member_as_unavailable() {
        let answers = failed_batch(3, &StoreError::Unavailable("disk full".into()));
        assert_eq!(answers.len(), 3);
        for a in answers {
            match a {
                // The cause first, once: the error already says the database is unavailable.
                Err(StoreError::Unavailable(m)) => assert!(m.starts_with("disk full ("), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }

    fn numbered(n: i64) -> Commit {
        Commit {
            event_kind: n.to_string(),
            ..Commit::default()
        }
    }

    /// A writer whose batches answer each member with its event kind's
    /// number, and which records the batches it was given.
    fn numbering_writer(
        seen: std::sync::Arc<std::sync::Mutex<Vec<Vec<i64>>>>,
    ) -> impl FnOnce(mpsc::UnboundedReceiver<Member>) {
        move |queue| {
            tokio::spawn(run(queue, move |commits: Vec<Commit>| {
                let numbers: Vec<i64> = commits
                    .iter()
                    .map(|c| c.event_kind.parse().expect("a number"))
                    .collect();
                seen.lock().unwrap().push(numbers.clone());
                async move { numbers.into_iter().map(Ok).collect() }
            }));
        }
    }

    #[tokio::test]
    async fn queued_members_share_a_batch_in_order_and_each_gets_its_own_answer() {
        let group = GroupCommit::default();
        let seen = std::sync::Arc::default();
        let (one, two, three) = (numbered(1), numbered(2), numbered(3));
        let (a, b, c) = tokio::join!(
            group.commit(&one, numbering_writer(std::sync::Arc::clone(&seen))),
            group.commit(&two, |_| unreachable!("one writer")),
            group.commit(&three, |_| unreachable!("one writer")),
        );
        assert_eq!((a.ok(), b.ok(), c.ok()), (Some(1), Some(2), Some(3)));
        assert_eq!(*seen.lock().unwrap(), vec![vec![1, 2, 3]]);
    }

    #[tokio::test]
    async fn a_transition_whose_caller_left_before_its_batch_is_not_committed() {
        use futures::FutureExt;
        let group = GroupCommit::default();
        let seen = std::sync::Arc::default();
        // Queued, then abandoned before the writer ever ran (one thread).
        let (left, kept) = (numbered(1), numbered(2));
        assert!(group
            .commit(&left, numbering_writer(std::sync::Arc::clone(&seen)))
            .now_or_never()
            .is_none());
        let kept = group.commit(&kept, |_| unreachable!("one writer")).await;
        assert_eq!(kept.ok(), Some(2));
        assert_eq!(*seen.lock().unwrap(), vec![vec![2]]);
    }

    #[tokio::test]
    async fn a_writer_whose_runtime_ended_is_replaced() {
        let group = std::sync::Arc::new(GroupCommit::default());
        let seen = std::sync::Arc::default();
        // The first writer runs on a runtime of its own, which then ends.
        let first = {
            let (group, seen) = (group.clone(), std::sync::Arc::clone(&seen));
            std::thread::spawn(move || {
                tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap()
                    .block_on(async {
                        let one = numbered(1);
                        group.commit(&one, numbering_writer(seen)).await
                    })
            })
            .join()
            .unwrap()
        };
        assert_eq!(first.ok(), Some(1));
        let two = numbered(2);
        let second = group.commit(&two, numbering_writer(seen.clone())).await;
        assert_eq!(second.ok(), Some(2));
        assert_eq!(*seen.lock().unwrap(), vec![vec![1], vec![2]]);
    }
}
