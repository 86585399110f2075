//! Group commit, on both engines: transitions committed together in one
//! transaction still each succeed or fail alone (a stale generation, a
//! failed statement), a batch whose COMMIT fails fails every member and
//! leaves nothing behind, and many tasks committing at once still give
//! each route strictly increasing generations and one row per transition.
//! `commit_all` is the batch the store's writer commits; `commit` from
//! many tasks goes through the writer's queue.

use crate::fault_proxy::FaultProxy;
use crate::support::{table_counts, Engine, TableCounts, TestDb};
use server::store::{AttemptRow, Commit, DynStore, RouteRow, ScheduleRow, StoreError};
use sqlx::Connection;
use std::collections::BTreeMap;
use std::sync::Arc;

fn route(id: &str, generation: i64) -> RouteRow {
    RouteRow {
        id: id.into(),
        profile_id: "p".into(),
        caller_kind: "kanban".into(),
        caller_ref: "t".into(),
        state: "retry_wait".into(),
        generation,
        cycle: 1,
        candidate_index: 0,
        candidate_id: "c0".into(),
        candidate_label: "Claude".into(),
        invocation_id: "inv".into(),
        prompt_generation: 1,
        effects: 0,
        provider_session_id: None,
        memory: "{}".into(),
        pending: None,
        last_failure: None,
        reason: None,
        created_at: 1_000,
        updated_at: 1_000 + generation,
    }
}

fn attempt(route_id: &str, generation: i64) -> AttemptRow {
    AttemptRow {
        route_id: route_id.into(),
        seq: 0,
        generation,
        cycle: 1,
        candidate_index: 0,
        candidate_id: "c0".into(),
        candidate_label: "Claude".into(),
        invocation_id: "inv".into(),
        code: "provider_overloaded".into(),
        class: "transient".into(),
        catalogue_version: "1.0.0".into(),
        classifier_rule: "anthropic.overloaded".into(),
        safe_excerpt: "HTTP 529".into(),
        http_status: Some(529),
        policy: "{}".into(),
        decision: "retry".into(),
        retry_ordinal: 1,
        deadline: Some(9_000),
        outcome: "retry_wait".into(),
        created_at: 2_000,
        classification: None,
        detail: Some("{\"late_effect\":\"tool_call\"}".into()),
    }
}

fn schedule(id: &str, route_id: &str, generation: i64) -> ScheduleRow {
    ScheduleRow {
        id: id.into(),
        route_id: route_id.into(),
        generation,
        kind: "retry".into(),
        deadline: 9_000,
        state: "armed".into(),
        created_at: 2_000,
        circuit: None,
    }
}

/// Opens route `id` at generation 1.
fn open(id: &str) -> Commit {
    Commit {
        route: Some(route(id, 1)),
        event_kind: "route.created".into(),
        event_payload: "1".into(),
        ..Commit::default()
    }
}

/// Moves route `id` from `from` to `from + 1`, with an attempt and a
/// schedule (named `schedule_id`) of the new generation; the event's
/// payload is the new generation.
fn advance(id: &str, from: i64, schedule_id: &str) -> Commit {
    Commit {
        expected_generation: Some(from),
        route: Some(route(id, from + 1)),
        attempt: Some(attempt(id, from + 1)),
        schedule: Some(schedule(schedule_id, id, from + 1)),
        event_kind: "route.failure".into(),
        event_payload: (from + 1).to_string(),
        ..Commit::default()
    }
}

async fn generation(s: &DynStore, id: &str) -> Option<i64> {
    s.get_route(id).await.unwrap().map(|r| r.generation)
}

async fn kinds_after(s: &DynStore, after: i64) -> Vec<(String, String)> {
    s.events_after(after, None, 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| (e.route_id, e.kind))
        .collect()
}

/// A batch whose members each move a different route on and only add rows
/// (what most batches are; PostgreSQL commits it table by table): every
/// member commits with its own attempt (numbered after the route's
/// earlier ones), schedule, swept older schedule and event, the events in
/// member order.
async fn a_plain_batch_commits_every_member_with_its_own_rows(engine: Engine) {
    let db = TestDb::new(engine).await;
    let s = &db.store;
    let ids = ["a", "b", "c", "d"];
    for answer in s.commit_all(&ids.map(open)).await {
        answer.unwrap();
    }
    // Each route gets an attempt and an armed schedule at generation 2.
    let first = ids.map(|id| advance(id, 1, &format!("{id}-2")));
    for answer in s.commit_all(&first).await {
        answer.unwrap();
    }
    let before = s.last_event_id().await.unwrap();
    // Then all four move on together, sweeping their generation-2 schedules.
    let second: Vec<Commit> = ids
        .iter()
        .map(|id| Commit {
            void_pending: true,
            ..advance(id, 2, &format!("{id}-3"))
        })
        .collect();
    let answers: Vec<i64> = s
        .commit_all(&second)
        .await
        .into_iter()
        .map(|a| a.unwrap())
        .collect();
    assert!(
        answers.windows(2).all(|w| w[0] < w[1]),
        "event ids follow the members: {answers:?}"
    );
    let events = s.events_after(before, None, 100).await.unwrap();
    assert_eq!(
        events
            .iter()
            .map(|e| (e.id, e.route_id.as_str()))
            .collect::<Vec<_>>(),
        answers.iter().copied().zip(ids).collect::<Vec<_>>()
    );
    for id in ids {
        assert_eq!(generation(s, id).await, Some(3));
        let seqs: Vec<(i64, i64)> = s
            .list_attempts(id)
            .await
            .unwrap()
            .iter()
            .map(|a| (a.seq, a.generation))
            .collect();
        assert_eq!(seqs, [(2, 3), (1, 2)], "{id}");
    }
    let due: Vec<String> = s
        .due_schedules(i64::MAX, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    let mut expected: Vec<String> = ids.iter().map(|id| format!("{id}-3")).collect();
    expected.sort();
    let mut due_sorted = due.clone();
    due_sorted.sort();
    assert_eq!(due_sorted, expected, "only the new schedules stay armed");
}

/// A member that lost the race — to the store as it was, or to an earlier
/// member of its own batch — answers StaleGeneration with the generation
/// it lost to, and writes nothing; the members around it commit.
async fn a_stale_member_fails_alone_and_writes_nothing(engine: Engine) {
    let db = TestDb::new(engine).await;
    let s = &db.store;
    for answer in s.commit_all(&[open("a"), open("b")]).await {
        answer.unwrap();
    }
    let before = s.last_event_id().await.unwrap();
    let answers = s
        .commit_all(&[
            advance("a", 1, "a-2"),
            // The member before it moved `a` on: stale within the batch.
            advance("a", 1, "a-2-lost"),
            // Stale against what was stored: `b` is at 1, not 5.
            advance("b", 5, "b-6-lost"),
            advance("b", 1, "b-2"),
        ])
        .await;
    assert_eq!(answers.len(), 4);
    assert!(answers[0].is_ok(), "{:?}", answers[0]);
    assert!(
        matches!(answers[1], Err(StoreError::StaleGeneration { current: 2 })),
        "{:?}",
        answers[1]
    );
    assert!(
        matches!(answers[2], Err(StoreError::StaleGeneration { current: 1 })),
        "{:?}",
        answers[2]
    );
    assert!(answers[3].is_ok(), "{:?}", answers[3]);
    let (first, last) = (*answers[0].as_ref().unwrap(), *answers[3].as_ref().unwrap());
    assert!(
        before < first && first < last,
        "{before} < {first} < {last}"
    );
    assert_eq!(generation(s, "a").await, Some(2));
    assert_eq!(generation(s, "b").await, Some(2));
    // One attempt, one schedule, one event per committed member, no more.
    assert_eq!(s.list_attempts("a").await.unwrap().len(), 1);
    assert_eq!(s.list_attempts("b").await.unwrap().len(), 1);
    let armed: Vec<String> = s
        .due_schedules(i64::MAX, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.id)
        .collect();
    assert_eq!(armed, ["a-2", "b-2"]);
    assert_eq!(
        kinds_after(s, before).await,
        [
            ("a".to_string(), "route.failure".to_string()),
            ("b".to_string(), "route.failure".to_string())
        ]
    );
}

/// A member whose statement fails in the database (its schedule's id is
/// taken) is rolled back to its savepoint — its route update included —
/// and answers the error; the transaction goes on (on PostgreSQL a failed
/// statement would otherwise abort it) and the members after it commit.
async fn a_failed_statement_fails_only_its_member(engine: Engine) {
    let db = TestDb::new(engine).await;
    let s = &db.store;
    for answer in s.commit_all(&[open("a"), open("b"), open("c")]).await {
        answer.unwrap();
    }
    s.commit(&advance("a", 1, "taken")).await.unwrap();
    let before = s.last_event_id().await.unwrap();
    let answers = s
        .commit_all(&[
            advance("b", 1, "b-2"),
            advance("c", 1, "taken"),
            advance("a", 2, "a-3"),
        ])
        .await;
    assert!(answers[0].is_ok(), "{:?}", answers[0]);
    assert!(
        matches!(answers[1], Err(StoreError::AlreadyExists)),
        "{:?}",
        answers[1]
    );
    assert!(answers[2].is_ok(), "{:?}", answers[2]);
    assert_eq!(generation(s, "c").await, Some(1), "its route update too");
    assert!(s.list_attempts("c").await.unwrap().is_empty());
    assert_eq!(generation(s, "b").await, Some(2));
    assert_eq!(generation(s, "a").await, Some(3));
    assert_eq!(
        kinds_after(s, before)
            .await
            .into_iter()
            .map(|(r, _)| r)
            .collect::<Vec<_>>(),
        ["b", "a"]
    );
}

/// A trigger that makes any transaction which wrote an event of kind
/// `doomed` fail at COMMIT: a deferred foreign key to a row that never
/// exists, checked only when the transaction commits.
async fn doom_commits(db: &TestDb, engine: Engine) {
    let statements: &[&str] = match engine {
        Engine::Sqlite => &[
            "CREATE TABLE doom_parent (id INTEGER PRIMARY KEY)",
            "CREATE TABLE doom_child (p INTEGER REFERENCES doom_parent (id) \
             DEFERRABLE INITIALLY DEFERRED)",
            "CREATE TRIGGER doom AFTER INSERT ON events WHEN NEW.kind = 'doomed' \
             BEGIN INSERT INTO doom_child (p) VALUES (42); END",
        ],
        Engine::Postgres => &[
            "CREATE TABLE doom_parent (id BIGINT PRIMARY KEY)",
            "CREATE TABLE doom_child (p BIGINT REFERENCES doom_parent (id) \
             DEFERRABLE INITIALLY DEFERRED)",
            "CREATE FUNCTION doom() RETURNS trigger AS $$ BEGIN \
             INSERT INTO doom_child (p) VALUES (42); RETURN NEW; END $$ LANGUAGE plpgsql",
            "CREATE TRIGGER doom AFTER INSERT ON events FOR EACH ROW \
             WHEN (NEW.kind = 'doomed') EXECUTE FUNCTION doom()",
        ],
    };
    match engine {
        Engine::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
            for sql in statements {
                sqlx::query(sql).execute(&mut c).await.unwrap();
            }
        }
        Engine::Postgres => {
            let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
            for sql in statements {
                sqlx::query(sql).execute(&mut c).await.unwrap();
            }
        }
    }
}

/// The batch's COMMIT fails: every member answers Unavailable, including
/// those whose own statements all succeeded, and nothing of the batch is
/// visible; the store commits normally afterwards.
async fn a_failed_commit_fails_every_member_and_writes_nothing(engine: Engine) {
    let db = TestDb::new(engine).await;
    let s = &db.store;
    doom_commits(&db, engine).await;
    s.commit(&open("a")).await.unwrap();
    let before = s.last_event_id().await.unwrap();
    let doomed = Commit {
        event_kind: "doomed".into(),
        ..open("x")
    };
    let answers = s
        .commit_all(&[advance("a", 1, "a-2"), doomed, open("b")])
        .await;
    assert_eq!(answers.len(), 3);
    for a in &answers {
        assert!(matches!(a, Err(StoreError::Unavailable(_))), "{a:?}");
    }
    assert_eq!(generation(s, "a").await, Some(1));
    assert_eq!(generation(s, "x").await, None);
    assert_eq!(generation(s, "b").await, None);
    assert!(s.list_attempts("a").await.unwrap().is_empty());
    assert!(s.due_schedules(i64::MAX, 10).await.unwrap().is_empty());
    assert_eq!(s.last_event_id().await.unwrap(), before);
    // Through the writer's queue as well: the doomed transition fails.
    let queued = s
        .commit(&Commit {
            event_kind: "doomed".into(),
            ..open("y")
        })
        .await;
    assert!(
        matches!(queued, Err(StoreError::Unavailable(_))),
        "{queued:?}"
    );
    // A plain batch (PostgreSQL sends it as one statement committed on its
    // own) whose commit fails: refused, so tried again member by member,
    // where the commit fails again: every member unavailable, nothing of
    // it written.
    s.commit(&open("c")).await.unwrap();
    let plain = s
        .commit_all(&[
            advance("c", 1, "c-2"),
            Commit {
                event_kind: "doomed".into(),
                ..advance("a", 1, "a-2")
            },
        ])
        .await;
    for a in &plain {
        assert!(matches!(a, Err(StoreError::Unavailable(_))), "{a:?}");
    }
    assert_eq!(generation(s, "c").await, Some(1));
    assert!(s.list_attempts("c").await.unwrap().is_empty());
    // Nothing is left half-open: the next batch commits.
    s.commit(&advance("a", 1, "a-2")).await.unwrap();
    assert_eq!(generation(s, "a").await, Some(2));
    assert_eq!(generation(s, "y").await, None);
}

/// Many tasks move a few shared routes on at once through `commit`, each
/// re-reading and trying again when it loses the race: every route ends
/// at one generation per committed transition, with one attempt and one
/// event per transition, its events' generations strictly increasing, and
/// every answer a distinct event id.
async fn concurrent_commits_keep_generations_strictly_increasing(engine: Engine) {
    const ROUTES: usize = 4;
    const TASKS: usize = 32;
    const EACH: usize = 6;
    let db = TestDb::new(engine).await;
    let s = db.store.clone();
    let names: Vec<String> = (0..ROUTES).map(|i| format!("r{i}")).collect();
    for n in &names {
        s.commit(&open(n)).await.unwrap();
    }
    let start = s.last_event_id().await.unwrap();
    let names = Arc::new(names);
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let (s, names) = (s.clone(), names.clone());
        tasks.push(tokio::spawn(async move {
            let mut committed = Vec::new();
            for k in 0..EACH {
                let id = &names[(t + k) % ROUTES];
                loop {
                    let from = generation(&s, id).await.expect("opened");
                    match s.commit(&advance(id, from, &format!("{id}-{t}-{k}"))).await {
                        Ok(event) => {
                            committed.push((id.clone(), from + 1, event));
                            break;
                        }
                        Err(StoreError::StaleGeneration { current }) => {
                            assert!(current > from, "{current} after {from}")
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
            }
            committed
        }));
    }
    let mut committed = Vec::new();
    for t in tasks {
        committed.extend(t.await.unwrap());
    }
    assert_eq!(committed.len(), TASKS * EACH);
    let mut ids: Vec<i64> = committed.iter().map(|(_, _, e)| *e).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), TASKS * EACH, "every answer its own event");
    let mut per_route: BTreeMap<String, usize> = BTreeMap::new();
    for (id, _, _) in &committed {
        *per_route.entry(id.clone()).or_default() += 1;
    }
    let events = s.events_after(start, None, 1_000).await.unwrap();
    assert_eq!(events.len(), TASKS * EACH, "one event per transition");
    for id in names.iter() {
        let n = per_route[id];
        assert_eq!(generation(&s, id).await, Some(1 + n as i64), "{id}");
        let attempts = s.list_attempts(id).await.unwrap();
        assert_eq!(attempts.len(), n, "{id}: one attempt per transition");
        // Newest first: seq and generation both strictly decreasing.
        for pair in attempts.windows(2) {
            assert!(pair[0].seq > pair[1].seq && pair[0].generation > pair[1].generation);
        }
        let generations: Vec<i64> = events
            .iter()
            .filter(|e| &e.route_id == id)
            .map(|e| e.payload.parse().unwrap())
            .collect();
        assert_eq!(generations, (2..=1 + n as i64).collect::<Vec<_>>(), "{id}");
    }
    // What each caller was told is what is stored.
    for (id, g, event) in &committed {
        let e = events.iter().find(|e| e.id == *event).expect("its event");
        assert_eq!((&e.route_id, e.payload.parse::<i64>().unwrap()), (id, *g));
    }
}

/// On PostgreSQL every batch is announced once, after it committed: its
/// last event, and whether any committed member armed a schedule or made
/// a dispatch claimable; a batch in which nothing committed says nothing.
/// (SQLite has no listener: its one server wakes waiters in-process.)
#[tokio::test]
async fn a_batch_is_announced_once_with_what_its_members_did_on_postgres() {
    use server::store::{Announcement, DispatchRow, Heard};
    let db = TestDb::new(Engine::Postgres).await;
    let s = &db.store;
    let mut listener = s
        .commit_listener()
        .await
        .unwrap()
        .expect("PostgreSQL listens");
    for answer in s.commit_all(&[open("a"), open("b")]).await {
        answer.unwrap();
    }
    let opened = listener.recv().await.unwrap();
    let stale = s.commit_all(&[advance("a", 7, "lost")]).await;
    assert!(matches!(stale[0], Err(StoreError::StaleGeneration { .. })));
    // The stale member would have made a dispatch: it must not be announced.
    let lost_dispatch = Commit {
        dispatch: Some(DispatchRow {
            id: "lost".into(),
            route_id: "b".into(),
            generation: 10,
            invocation_id: "inv".into(),
            prompt_generation: 1,
            candidate_index: 0,
            candidate_id: "c0".into(),
            candidate_label: "Claude".into(),
            caller_kind: "kanban".into(),
            reason: "retry".into(),
            state: "pending".into(),
            lease_until: None,
            created_at: 2_000,
            claimed_at: None,
            acked_at: None,
            resume: None,
        }),
        ..advance("b", 9, "lost")
    };
    let answers = s.commit_all(&[advance("a", 1, "a-2"), lost_dispatch]).await;
    assert!(matches!(
        answers[1],
        Err(StoreError::StaleGeneration { current: 1 })
    ));
    let a2 = *answers[0].as_ref().unwrap();
    let heard = listener.recv().await.unwrap();
    let Heard::Commit(Announcement { event_id, .. }) = opened else {
        panic!("{opened:?}")
    };
    assert!(event_id < a2);
    // The stale-only batch sent nothing: the next thing heard is this one.
    assert_eq!(
        heard,
        Heard::Commit(Announcement {
            event_id: a2,
            schedule: Some(9_000),
            dispatch: false
        })
    );
}

/// A plain batch on PostgreSQL takes the event-order lock before it locks
/// any route's row, as every writer does (else two writers could each
/// wait for what the other holds): while another transaction holds that
/// lock, the batch waits without holding its routes, and commits once the
/// lock is let go.
#[tokio::test]
async fn a_plain_batch_takes_the_event_order_lock_before_its_routes_on_postgres() {
    let db = TestDb::new(Engine::Postgres).await;
    let s = db.store.clone();
    for answer in s.commit_all(&[open("a"), open("b")]).await {
        answer.unwrap();
    }
    let mut holder = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
    sqlx::query("SELECT pg_advisory_xact_lock(7261001)")
        .execute(&mut holder)
        .await
        .unwrap();
    let batch = {
        let s = s.clone();
        tokio::spawn(async move {
            s.commit_all(&[advance("a", 1, "a-2"), advance("b", 1, "b-2")])
                .await
        })
    };
    // Until the batch reaches the lock and waits there (it cannot finish).
    let mut other = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let waiting = "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted \
                   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    let since = std::time::Instant::now();
    loop {
        let n: i64 = sqlx::query_scalar(waiting)
            .fetch_one(&mut other)
            .await
            .unwrap();
        if n > 0 {
            break;
        }
        assert!(
            since.elapsed() < std::time::Duration::from_secs(60),
            "the batch never waited for the lock"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(!batch.is_finished());
    // Waiting, it holds neither route.
    sqlx::query("BEGIN").execute(&mut other).await.unwrap();
    let locked: Vec<String> = sqlx::query_scalar(
        "SELECT id FROM routes WHERE id IN ('a', 'b') ORDER BY id FOR UPDATE NOWAIT",
    )
    .fetch_all(&mut other)
    .await
    .expect("the waiting batch holds no route");
    assert_eq!(locked, ["a", "b"]);
    sqlx::query("ROLLBACK").execute(&mut other).await.unwrap();
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    for answer in batch.await.unwrap() {
        answer.unwrap();
    }
    assert_eq!(generation(&s, "a").await, Some(2));
    assert_eq!(generation(&s, "b").await, Some(2));
}

/// Route `id` from generation 1 to 2, consuming schedule `id-1`: a batch
/// committed member by member (consuming a schedule is not plain).
fn consuming(id: &str) -> Commit {
    Commit {
        fire_schedule: Some(format!("{id}-1")),
        ..advance(id, 1, &format!("{id}-2"))
    }
}

/// Waits (up to 20 s) until `count` counts a session of this database in
/// the state it asks for.
async fn until_a_session_is(url: &str, count: &str, what: &str) {
    let mut other = sqlx::PgConnection::connect(url).await.unwrap();
    let since = std::time::Instant::now();
    while sqlx::query_scalar::<_, i64>(count)
        .fetch_one(&mut other)
        .await
        .unwrap()
        == 0
    {
        assert!(
            since.elapsed() < std::time::Duration::from_secs(20),
            "{what}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// Routes `a` and `b`, opened.
async fn opened(s: &DynStore) {
    for answer in s.commit_all(&[open("a"), open("b")]).await {
        answer.unwrap();
    }
}

/// `b` moved on, in a plain batch of its own (it waits for whatever
/// holds the event-order lock).
fn next_batch(s: &DynStore) -> tokio::task::JoinHandle<Vec<Result<i64, StoreError>>> {
    let s = s.clone();
    tokio::spawn(async move { s.commit_all(&[advance("b", 1, "b-2")]).await })
}

/// A transaction of its own holding route `a`'s row (`ROLLBACK` lets it go).
async fn holding_route_a(url: &str) -> sqlx::PgConnection {
    let mut holder = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
    sqlx::query("SELECT 1 FROM routes WHERE id = 'a' FOR UPDATE")
        .execute(&mut holder)
        .await
        .unwrap();
    holder
}

/// Waits until a session of this database waits for a row lock.
async fn until_a_batch_waits_for_a_row(url: &str) {
    until_a_session_is(
        url,
        "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' \
         AND datname = current_database()",
        "the batch never waited for the route's row",
    )
    .await;
}

/// A batch committed member by member that is stuck (here on a route row
/// another transaction holds) is cancelled by PostgreSQL after the
/// writer's `statement_timeout` (25 s): its member answers unavailable
/// alone, and the event-order lock it held goes with it, so the next batch
/// commits while the row is still held. Without the timeout the writer
/// would give the batch up at 30 s and leave it waiting, the lock held,
/// for every batch after it. About 25 s.
#[tokio::test]
async fn a_stuck_batch_is_cancelled_and_lets_the_next_commit_on_postgres() {
    let db = TestDb::new(Engine::Postgres).await;
    let s = db.store.clone();
    opened(&s).await;
    let mut holder = holding_route_a(&db.url).await;
    let stuck = {
        let s = s.clone();
        tokio::spawn(async move { s.commit_all(&[consuming("a")]).await })
    };
    until_a_batch_waits_for_a_row(&db.url).await;
    let next = next_batch(&s);
    let bound = std::time::Duration::from_secs(60);
    let answers = tokio::time::timeout(bound, stuck)
        .await
        .expect("the stuck batch answers")
        .unwrap();
    match &answers[..] {
        [Err(StoreError::Unavailable(m))] => {
            assert!(m.contains("statement timeout"), "{m}")
        }
        other => panic!("the stuck member answered {other:?}"),
    }
    let answers = tokio::time::timeout(bound, next)
        .await
        .expect("the next batch commits while the row is still held")
        .unwrap();
    assert!(matches!(answers[..], [Ok(_)]), "{answers:?}");
    assert_eq!(generation(&s, "b").await, Some(2));
    sqlx::query("ROLLBACK").execute(&mut holder).await.unwrap();
    assert_eq!(generation(&s, "a").await, Some(1));
}

/// A server whose host stops mid-batch — its requests frozen right after
/// the batch took the event-order lock, its socket left open — does not
/// hold that lock for every other server on the database: PostgreSQL ends
/// the idle transaction after 25 s (`idle_in_transaction_session_timeout`,
/// set by the batch for itself), and another server's batch commits. The
/// stopped server's member answers unavailable. Without the setting the
/// other server waits as long as TCP keeps the dead session. About 25 s.
#[tokio::test]
async fn a_batch_whose_server_stopped_mid_transaction_lets_others_commit_on_postgres() {
    let db = TestDb::new(Engine::Postgres).await;
    let direct = db.store.clone();
    opened(&direct).await;
    let proxy = FaultProxy::start(crate::faults::socket_of(&db.url)).await;
    let stopping = server::store::connect(&proxy.url_through(&db.url))
        .await
        .unwrap();
    // What a batch sends right after taking the lock (see `group`).
    proxy.freeze_requests_at(b"SAVEPOINT member");
    let stuck = tokio::spawn(async move { stopping.commit_all(&[consuming("a")]).await });
    until_a_session_is(
        &db.url,
        "SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'idle in transaction' \
         AND datname = current_database()",
        "the batch never stopped inside its transaction",
    )
    .await;
    let next = next_batch(&direct);
    let bound = std::time::Duration::from_secs(60);
    let answers = tokio::time::timeout(bound, next)
        .await
        .expect("another server's batch commits once PostgreSQL ends the idle one")
        .unwrap();
    assert!(matches!(answers[..], [Ok(_)]), "{answers:?}");
    assert_eq!(generation(&direct, "b").await, Some(2));
    let answers = tokio::time::timeout(bound, stuck)
        .await
        .expect("the stopped server's batch answers")
        .unwrap();
    assert!(
        matches!(answers[..], [Err(StoreError::Unavailable(_))]),
        "{answers:?}"
    );
    assert_eq!(generation(&direct, "a").await, Some(1));
}

/// A plain batch stuck in the middle of its one statement — the
/// event-order lock taken, then waiting on a route row another transaction
/// holds — is cancelled by PostgreSQL after the writer's connection's
/// `statement_timeout` (25 s): its member answers unavailable, nothing of
/// it is written, and the lock goes with the statement, so another
/// server's batch commits while the row is still held. The writer goes on
/// with a new connection: the same transition commits once the row is let
/// go. Without the timeout the writer would give the batch up only at 30 s
/// and leave the statement holding the lock for every server. About 25 s.
#[tokio::test]
async fn a_plain_batch_stuck_mid_statement_is_cancelled_and_lets_others_commit_on_postgres() {
    let db = TestDb::new(Engine::Postgres).await;
    let s = db.store.clone();
    opened(&s).await;
    let mut holder = holding_route_a(&db.url).await;
    let last = s.last_event_id().await.unwrap();
    // Through the writer's queue: its own connection, set-based (plain).
    let stuck = {
        let s = s.clone();
        tokio::spawn(async move { s.commit(&advance("a", 1, "a-2")).await })
    };
    until_a_batch_waits_for_a_row(&db.url).await;
    // The other server's statement waits for the event-order lock until
    // the stuck one is cancelled, under the same 25 s statement timeout:
    // started right behind it, it would have only the gap between the two
    // starts (milliseconds) to commit in once the lock goes, and be
    // cancelled too on a busy machine. Five seconds behind, it has five.
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    let other_server = server::store::connect(&db.url).await.unwrap();
    let other = {
        let other_server = other_server.clone();
        tokio::spawn(async move { other_server.commit(&advance("b", 1, "b-2")).await })
    };
    let bound = std::time::Duration::from_secs(60);
    match tokio::time::timeout(bound, stuck)
        .await
        .expect("the stuck batch answers")
        .unwrap()
    {
        Err(StoreError::Unavailable(m)) => assert!(m.contains("statement timeout"), "{m}"),
        other => panic!("the stuck member answered {other:?}"),
    }
    let answer = tokio::time::timeout(bound, other)
        .await
        .expect("another server's batch commits while the row is still held")
        .unwrap();
    assert!(answer.is_ok(), "{answer:?}");
    assert_eq!(generation(&s, "b").await, Some(2));
    sqlx::query("ROLLBACK").execute(&mut holder).await.unwrap();
    assert_eq!(generation(&s, "a").await, Some(1));
    assert_eq!(
        kinds_after(&s, last).await,
        [("b".to_string(), "route.failure".to_string())],
        "nothing of the cancelled batch was written"
    );
    tokio::time::timeout(bound, s.commit(&advance("a", 1, "a-2")))
        .await
        .expect("the writer goes on after a cancelled batch")
        .unwrap();
    assert_eq!(generation(&s, "a").await, Some(2));
}

/// The writer's set-based batches find their routes by key however the
/// table has grown since their plan was made: after it has run the batch
/// statement six times while `routes` held eight rows (PostgreSQL's
/// generic plan, left to itself, scans so small a table whole), and the
/// table has grown to 20,008 rows that nothing analysed, `routes` is not
/// scanned once more. With `plan_cache_mode = force_generic_plan` alone on
/// the writer's connection (without ruling out sequential scans and hash
/// and merge joins, `WRITER_PLANS`) every batch reads every route, with
/// the event-order lock held.
#[tokio::test]
async fn a_plain_batch_finds_its_routes_by_key_after_the_table_grew_on_postgres() {
    let db = TestDb::new(Engine::Postgres).await;
    let s = db.store.clone();
    let mut admin = sqlx::PgConnection::connect(&db.url).await.unwrap();
    // An analysis would make PostgreSQL plan the statement again anyway.
    sqlx::query("ALTER TABLE routes SET (autovacuum_enabled = false)")
        .execute(&mut admin)
        .await
        .unwrap();
    let ids: Vec<String> = (0..8).map(|i| format!("r{i}")).collect();
    for id in &ids {
        s.commit(&open(id)).await.unwrap();
    }
    // One at a time: six batches through the writer's own connection.
    for id in &ids[..6] {
        s.commit(&advance(id, 1, &format!("{id}-2"))).await.unwrap();
    }
    sqlx::query(
        "INSERT INTO routes SELECT grown.* FROM routes AS r, generate_series(1, 20000) AS g, \
         LATERAL jsonb_populate_record(r, jsonb_build_object('id', 'grown-' || g)) AS grown \
         WHERE r.id = 'r0'",
    )
    .execute(&mut admin)
    .await
    .unwrap();
    let before = table_counts(&mut admin, "routes", |c| {
        c.updated >= 6 && c.inserted >= 20_008
    })
    .await;
    for id in &ids[..4] {
        s.commit(&advance(id, 2, &format!("{id}-3"))).await.unwrap();
    }
    let after = table_counts(&mut admin, "routes", |c| c.updated >= 10).await;
    assert_eq!(
        after.seq_scans - before.seq_scans,
        0,
        "four batches after the table grew scanned `routes` whole"
    );
    // Nor read it whole by an index.
    assert!(
        after.fetched_by_index - before.fetched_by_index < 100,
        "four batches after the table grew read {} routes",
        after.fetched_by_index - before.fetched_by_index
    );
    assert_eq!(generation(&s, "r3").await, Some(3));
}

/// The same for the sweeps: after the writer has swept while `schedules`
/// and `dispatches` were small, and each has grown by 20,000 open rows of
/// other routes that nothing analysed, a batch that sweeps reads only its
/// own routes' rows. As a join (the statement before `OFFSET 0`), the
/// writer's one plan read every armed schedule and every open dispatch
/// for every batch that swept, with the event-order lock held.
#[tokio::test]
async fn a_sweeping_batch_finds_its_routes_rows_by_key_after_the_tables_grew_on_postgres() {
    let db = TestDb::new(Engine::Postgres).await;
    let s = db.store.clone();
    let mut admin = sqlx::PgConnection::connect(&db.url).await.unwrap();
    for table in ["schedules", "dispatches"] {
        sqlx::query(&format!(
            "ALTER TABLE {table} SET (autovacuum_enabled = false)"
        ))
        .execute(&mut admin)
        .await
        .unwrap();
    }
    let sweeping = |id: &str, from: i64| Commit {
        void_pending: true,
        ..advance(id, from, &format!("{id}-{}", from + 1))
    };
    let ids: Vec<String> = (0..8).map(|i| format!("r{i}")).collect();
    for id in &ids {
        s.commit(&open(id)).await.unwrap();
    }
    for id in &ids[..6] {
        s.commit(&sweeping(id, 1)).await.unwrap();
    }
    sqlx::query(
        "INSERT INTO schedules SELECT grown.* FROM schedules AS x, generate_series(1, 20000) AS g, \
         LATERAL jsonb_populate_record(x, jsonb_build_object('id', 'grown-' || g, \
         'route_id', 'grown-' || g)) AS grown WHERE x.id = 'r0-2'",
    )
    .execute(&mut admin)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO dispatches (id, route_id, generation, invocation_id, prompt_generation, \
         candidate_index, candidate_id, candidate_label, caller_kind, reason, state, created_at) \
         SELECT 'grown-' || g, 'grown-' || g, 1, 'i', 1, 0, 'c', 'C', 'kanban', 'retry', \
         'pending', 0 FROM generate_series(1, 20000) AS g",
    )
    .execute(&mut admin)
    .await
    .unwrap();
    let schedules = table_counts(&mut admin, "schedules", |c| c.inserted >= 20_006).await;
    let dispatches = table_counts(&mut admin, "dispatches", |c| c.inserted >= 20_000).await;
    for id in &ids[..4] {
        s.commit(&sweeping(id, 2)).await.unwrap();
    }
    // Each swept its route's schedule of generation 2: four rows updated.
    let schedules_after = table_counts(&mut admin, "schedules", |c| c.updated >= 4).await;
    let dispatches_after = table_counts(&mut admin, "dispatches", |_| true).await;
    let read = |before: &TableCounts, after: &TableCounts| {
        after.fetched_by_index - before.fetched_by_index
    };
    assert!(
        read(&schedules, &schedules_after) < 100,
        "four sweeping batches read {} schedules",
        read(&schedules, &schedules_after)
    );
    assert!(
        read(&dispatches, &dispatches_after) < 100,
        "four sweeping batches read {} dispatches",
        read(&dispatches, &dispatches_after)
    );
    let void: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM schedules WHERE state = 'void' AND id LIKE 'r%-2'",
    )
    .fetch_one(&mut admin)
    .await
    .unwrap();
    assert_eq!(void, 4, "each batch swept its route's older schedule");
}

on_both_engines!(
    flavor = multi_thread;
    a_plain_batch_commits_every_member_with_its_own_rows,
    a_stale_member_fails_alone_and_writes_nothing,
    a_failed_statement_fails_only_its_member,
    a_failed_commit_fails_every_member_and_writes_nothing,
    concurrent_commits_keep_generations_strictly_increasing
);
