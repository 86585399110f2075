//! Crash safety: kill -9 the real binary with armed, claimed and
//! acknowledged schedules, restart it on the same database, and check that
//! armed schedules re-arm, a claim still within its lease survives the
//! restart (its caller acknowledges it afterwards), a claim whose lease
//! ran out unacknowledged stops its route once, nothing is dispatched
//! twice and nothing is lost.
//!
//! The restart itself stops nothing: a dispatch is ambiguous because its
//! lease ran out unacknowledged, not because some server restarted.

use crate::support::{overloaded, policy, Api, Engine, TestDb};
use serde_json::Value;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// One `kandev-recovery serve` process on the test clock (also used by
/// `paths`).
pub(crate) struct Server {
    pub(crate) child: Child,
    pub(crate) api: Api,
}

impl Drop for Server {
    /// A failing test must not leave a server behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) async fn spawn(db_url: &str) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .arg("serve")
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", db_url)
        .env("KANDEV_TEST_CLOCK", "1")
        .env("KANDEV_NO_SEED", "1")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start kandev-recovery");
    let api = Api::new(format!("http://127.0.0.1:{port}"));
    // A debug build builds its catalogue for seconds at start; more on a
    // busy machine.
    for _ in 0..600 {
        if let Ok(r) = reqwest::get(format!("{}/readyz", api.base)).await {
            if r.status().is_success() {
                return Server { child, api };
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the server did not become ready");
}

async fn fail(api: &Api, route: &Value) -> Value {
    api.fail(route, overloaded()).await["route"].clone()
}

async fn ambiguous_events(db: &TestDb, route_id: &str) -> usize {
    db.store
        .events_after(0, Some(route_id), 1_000)
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind == "route.ambiguous")
        .count()
}

async fn crash_and_restart(engine: Engine) {
    let db = TestDb::new(engine).await;
    // The spawned server checks tokens like any other: the tests' admin.
    crate::support::grant_admin(&db.store).await;
    let mut first = spawn(&db.url).await;
    let api = &first.api;
    let slow = api
        .profile(&[("Slow", policy(1, 3600, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let fast = api
        .profile(&[("Fast", policy(1, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let armed = api.route(&slow, "kanban").await;
    let leased = api.route(&fast, "kanban").await;
    let expiring = api.route(&fast, "utility").await;
    let acked = api.route(&fast, "office").await;
    let unclaimed = api.route(&fast, "workflow").await;
    for r in [&armed, &leased, &expiring, &acked, &unclaimed] {
        assert_eq!(fail(api, r).await["state"], "retry_wait");
    }
    api.advance(2.0).await;
    let id = |r: &Value| r["id"].as_str().unwrap().to_string();
    // A runner that will outlive the server, within a ten-minute lease…
    let held = api.claim_leased(&id(&leased), 600, 0).await;
    assert_eq!(held.len(), 1);
    // …and one that dies with it, on a five-second lease.
    assert_eq!(api.claim_leased(&id(&expiring), 5, 0).await.len(), 1);
    let acked_route = api.deliver(&id(&acked)).await;
    assert_eq!(acked_route["state"], "retrying");
    let armed_before = api.snapshot(&id(&armed)).await;

    // kill -9: no graceful shutdown, no cleanup.
    first.child.kill().unwrap();
    first.child.wait().unwrap();

    let mut second = spawn(&db.url).await;
    let api = &second.api;
    // Armed: still waiting, same deadline, re-armed.
    let a = api.snapshot(&id(&armed)).await;
    assert_eq!(
        (a["state"].as_str(), &a["pending"]),
        (Some("retry_wait"), &armed_before["pending"])
    );
    // Claimed and still within its lease: the restart did not stop it, and
    // its caller acknowledges now.
    let b = api.snapshot(&id(&leased)).await;
    assert_eq!(
        (b["state"].as_str(), &b["reason"]),
        (Some("retrying"), &Value::Null),
        "a restart does not stop a dispatch whose lease still runs: {b}"
    );
    let (status, b) = api.ack(&held[0]).await;
    assert_eq!(
        (status, b["state"].as_str()),
        (200, Some("retrying")),
        "{b}"
    );
    // Claimed and never acknowledged: once its lease has run out it is
    // ambiguous, stopped for a person, once, and never re-offered.
    api.advance(10.0).await;
    let e = api.snapshot(&id(&expiring)).await;
    assert_eq!(
        (e["state"].as_str(), e["reason"].as_str()),
        (Some("action_required"), Some("ambiguous_dispatch"))
    );
    assert!(
        api.claim(&id(&expiring)).await.is_empty(),
        "an ambiguous dispatch is never re-offered"
    );
    // Acknowledged: unchanged.
    let c = api.snapshot(&id(&acked)).await;
    assert_eq!(
        (c["state"].as_str(), &c["generation"]),
        (Some("retrying"), &acked_route["generation"])
    );
    // Never claimed: provably undispatched, claimable exactly once.
    assert_eq!(api.claim(&id(&unclaimed)).await.len(), 1);
    assert!(api.claim(&id(&unclaimed)).await.is_empty());
    // The armed schedule fires after restart, once.
    api.advance(3600.0).await;
    assert_eq!(api.claim(&id(&armed)).await.len(), 1);
    assert!(api.claim(&id(&armed)).await.is_empty());

    // The acknowledged-within-lease route never went ambiguous; the
    // expired one did, exactly once.
    assert_eq!(ambiguous_events(&db, &id(&leased)).await, 0);
    assert_eq!(
        api.snapshot(&id(&leased)).await["state"],
        "retrying",
        "an acknowledged dispatch's lease running out later changes nothing"
    );
    assert_eq!(ambiguous_events(&db, &id(&expiring)).await, 1);
    // Nothing was dispatched twice.
    for r in [&armed, &leased, &expiring, &acked, &unclaimed] {
        let ds = db.store.list_dispatches(&id(r)).await.unwrap();
        assert_eq!(ds.len(), 1, "{}: {ds:?}", r["id"]);
    }
    second.child.kill().unwrap();
    second.child.wait().unwrap();
}

#[tokio::test]
async fn sqlite_crash_and_restart() {
    crash_and_restart(Engine::Sqlite).await
}

#[tokio::test]
async fn postgres_crash_and_restart() {
    crash_and_restart(Engine::Postgres).await
}
