//! Several servers on one database, each a process of the real binary.
//!
//! On PostgreSQL: three servers fire 10,000 schedules exactly once between
//! them while one is killed (SIGKILL) mid-run; a rolling restart of all
//! three stops no route whose dispatch is acknowledged within its lease,
//! and stops the one that is not, once; an action on one server reaches an
//! event stream and a waiting claim on another within a second. On SQLite,
//! a second server on the same file is refused.
//!
//! These servers run on the real clock (no test clock: it is per process),
//! so the waits here are real, and short.

use crate::http_events::read_events;
use crate::support::{overloaded, policy, Api, Engine, TestDb};
use serde_json::{json, Value};
use sqlx::Connection;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One `kandev-recovery serve` process.
struct Instance {
    child: Child,
    api: Api,
}

impl Drop for Instance {
    /// A failing test must not leave a server behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn serve_command(db_url: &str, port: u16) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kandev-recovery"));
    c.arg("serve")
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", db_url)
        .env("KANDEV_NO_SEED", "1")
        .env("RUST_LOG", "warn")
        .env_remove("KANDEV_TEST_CLOCK")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    c
}

async fn start(db_url: &str) -> Instance {
    let port = free_port();
    let child = serve_command(db_url, port)
        .spawn()
        .expect("start kandev-recovery");
    let mut instance = Instance {
        child,
        api: Api::new(format!("http://127.0.0.1:{port}")),
    };
    let ready = format!("{}/readyz", instance.api.base);
    let since = Instant::now();
    while since.elapsed() < Duration::from_secs(60) {
        if let Ok(r) = reqwest::get(&ready).await {
            if r.status().is_success() {
                return instance;
            }
        }
        if let Ok(Some(status)) = instance.child.try_wait() {
            panic!("the server exited before it was ready: {status}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the server did not become ready within 60 s");
}

/// Three servers, started side by side (each spends seconds building its
/// catalogue in a debug build).
async fn start_three(db_url: &str) -> Vec<Instance> {
    let (a, b, c) = tokio::join!(start(db_url), start(db_url), start(db_url));
    vec![a, b, c]
}

impl Instance {
    /// kill -9: no shutdown at all.
    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, and wait for the graceful shutdown to finish.
    async fn stop(&mut self) {
        use nix::sys::signal::{kill, Signal};
        use nix::unistd::Pid;
        kill(Pid::from_raw(self.child.id() as i32), Signal::SIGTERM).unwrap();
        let since = Instant::now();
        while since.elapsed() < Duration::from_secs(30) {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(status.success(), "a graceful stop exits 0: {status}");
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the server did not stop within 30 s of SIGTERM");
    }
}

async fn scalar(conn: &mut sqlx::PgConnection, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(conn).await.unwrap()
}

/// Copies `template`'s rows in `table` `copies` times through a temporary
/// table (so columns other suites add come along), with `rewrite` (an
/// `UPDATE … SET` list over the copy's columns and `g`, the copy's number)
/// applied to each copy.
async fn copy_rows(
    tx: &mut sqlx::PgConnection,
    table: &str,
    filter: &str,
    template: &str,
    copies: i64,
    rewrite: &str,
) {
    for sql in [
        format!(
            "CREATE TEMP TABLE copy_{table} ON COMMIT DROP AS SELECT t.*, g FROM {table} t, \
             generate_series(1, {copies}) AS g WHERE {filter} = '{template}'"
        ),
        format!("UPDATE copy_{table} SET {rewrite}"),
        format!("ALTER TABLE copy_{table} DROP COLUMN g"),
        format!("INSERT INTO {table} SELECT * FROM copy_{table}"),
    ] {
        sqlx::query(&sql).execute(&mut *tx).await.unwrap();
    }
}

/// Three servers, 10,000 schedules falling due within three seconds, one
/// server killed mid-run: every schedule fires exactly once, none is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_three_servers_fire_every_schedule_once_through_a_crash() {
    const ROUTES: i64 = 10_000;
    let db = TestDb::with_prefix(Engine::Postgres, "scaleout").await;
    // The servers check tokens: the test acts as the administrator.
    crate::support::grant_admin(&db.store).await;
    let mut servers = start_three(&db.url).await;
    let api = &servers[0].api;
    // One route as the service writes it, waiting on a retry an hour out.
    let profile = api
        .profile(&[(
            "Claude",
            policy(1, 3600, 0, "stop"),
            policy(0, 0, 0, "stop"),
        )])
        .await;
    let route = api.route(&profile, "kanban").await;
    let waiting = api.fail(&route, overloaded()).await["route"].clone();
    assert_eq!(waiting["state"], "retry_wait");
    assert_eq!(
        api.get("/api/v1/circuits").await["circuits"],
        json!([]),
        "no shared circuit holds the copies back"
    );
    let template = waiting["id"].as_str().unwrap().to_string();

    // 9,999 copies of its rows (route, attempt, armed schedule), and all
    // 10,000 schedules due 3 to 6 s from now by the database's clock.
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let mut tx = sqlx::Connection::begin(&mut conn).await.unwrap();
    let copies = ROUTES - 1;
    copy_rows(
        &mut tx,
        "routes",
        "id",
        &template,
        copies,
        "id = id || '-' || g",
    )
    .await;
    copy_rows(
        &mut tx,
        "attempts",
        "route_id",
        &template,
        copies,
        "route_id = route_id || '-' || g",
    )
    .await;
    copy_rows(
        &mut tx,
        "schedules",
        "route_id",
        &template,
        copies,
        "id = id || '-' || g, route_id = route_id || '-' || g",
    )
    .await;
    let spread = "UPDATE schedules SET deadline = \
        (FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000))::BIGINT \
        + 3000 + (hashtext(id) & 2047) * 3000 / 2048 WHERE state = 'armed'";
    sqlx::query(spread).execute(&mut *tx).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        scalar(
            &mut conn,
            "SELECT COUNT(*) FROM schedules WHERE state = 'armed'"
        )
        .await,
        ROUTES
    );

    // Kill one server once a fifth of the schedules have fired.
    let since = Instant::now();
    let fired_sql = "SELECT COUNT(*) FROM schedules WHERE state = 'fired'";
    while scalar(&mut conn, fired_sql).await < ROUTES / 5 {
        assert!(
            since.elapsed() < Duration::from_secs(60),
            "firing did not get going"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let held_at_kill = scalar(
        &mut conn,
        "SELECT COUNT(*) FROM schedules WHERE state = 'armed' AND claimed_until IS NOT NULL \
         AND claimed_until > (FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000))::BIGINT",
    )
    .await;
    servers[1].kill();
    let fired_at_kill = scalar(&mut conn, fired_sql).await;
    let killed = since.elapsed();
    // A guard against a hang, not the figure (printed below): three
    // debug-build servers sharing two cores with other builds have taken
    // 80 to 118 s.
    while scalar(&mut conn, fired_sql).await < ROUTES {
        assert!(
            since.elapsed() < Duration::from_secs(300),
            "only {} of {ROUTES} fired within 300 s",
            scalar(&mut conn, fired_sql).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "{ROUTES} schedules fired by three servers in {:.1} s (counted from the copy, \
         the first due 3 s in); one killed at {:.1} s with {fired_at_kill} fired and \
         {held_at_kill} claimed",
        since.elapsed().as_secs_f64(),
        killed.as_secs_f64()
    );

    // The audit: per route, one attempt, one dispatch (pending, at the
    // route's generation), its schedule fired, and nothing else.
    let audit = format!(
        "SELECT COUNT(*) FROM routes r WHERE r.id LIKE '{template}%' AND NOT ( \
         r.state = 'retrying' \
         AND (SELECT COUNT(*) FROM attempts a WHERE a.route_id = r.id) = 1 \
         AND (SELECT COUNT(*) FROM dispatches d WHERE d.route_id = r.id) = 1 \
         AND (SELECT COUNT(*) FROM dispatches d WHERE d.route_id = r.id \
              AND d.state = 'pending' AND d.generation = r.generation) = 1 \
         AND (SELECT COUNT(*) FROM schedules s WHERE s.route_id = r.id) = 1 \
         AND (SELECT COUNT(*) FROM schedules s WHERE s.route_id = r.id AND s.state = 'fired') = 1)"
    );
    assert_eq!(
        scalar(&mut conn, &audit).await,
        0,
        "routes failing the audit"
    );
    assert_eq!(
        scalar(
            &mut conn,
            &format!("SELECT COUNT(*) FROM routes WHERE id LIKE '{template}%'")
        )
        .await,
        ROUTES
    );
    assert_eq!(
        scalar(&mut conn, "SELECT COUNT(*) FROM dispatches").await,
        ROUTES,
        "exactly one dispatch per schedule"
    );
    assert_eq!(
        scalar(
            &mut conn,
            "SELECT COUNT(*) FROM events WHERE kind = 'route.fired'"
        )
        .await,
        ROUTES,
        "one firing per schedule"
    );
    assert_eq!(
        scalar(
            &mut conn,
            "SELECT COUNT(*) FROM schedules WHERE state <> 'fired'"
        )
        .await,
        0,
        "none lost or voided"
    );
}

/// Three servers restarted one after the other (SIGTERM, start again)
/// while runners hold dispatch leases: every dispatch acknowledged within
/// its lease — during a restart, through another server, or after all of
/// them restarted — goes on; the one never acknowledged stops its route
/// for a person, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_rolling_restart_stops_no_healthy_work() {
    let db = TestDb::with_prefix(Engine::Postgres, "scaleout").await;
    // The servers check tokens: the test acts as the administrator.
    crate::support::grant_admin(&db.store).await;
    let mut servers = start_three(&db.url).await;
    let profile = servers[0]
        .api
        .profile(&[("Claude", policy(1, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let mut routes = Vec::new();
    for i in 0..6 {
        let api = &servers[i % 3].api;
        let route = api.route(&profile, "kanban").await;
        assert_eq!(
            api.fail(&route, overloaded()).await["route"]["state"],
            "retry_wait"
        );
        routes.push(route["id"].as_str().unwrap().to_string());
    }
    // Runners claim as the retries fall due (a second on): five on a
    // minute's lease, the last on three seconds (its runner dies).
    let mut claims = Vec::new();
    for (i, id) in routes.iter().enumerate() {
        let lease = if i == 5 { 3 } else { 60 };
        let ds = servers[i % 3].api.claim_leased(id, lease, 30).await;
        assert_eq!(ds.len(), 1, "{id}: {ds:?}");
        claims.push(ds[0].clone());
    }
    let acknowledge = |api: &Api, i: usize| {
        let (api, claim) = (Api::new(api.base.clone()), claims[i].clone());
        async move {
            let (status, route) = api.ack(&claim).await;
            assert_eq!(
                (status, route["state"].as_str()),
                (200, Some("retrying")),
                "acknowledged within its lease: {route}"
            );
        }
    };
    for i in 0..3 {
        servers[i].stop().await;
        // While it is down, a runner acknowledges through the next server.
        acknowledge(&servers[(i + 1) % 3].api, i).await;
        servers[i] = start(&db.url).await;
    }
    // Two dispatches stayed claimed through every restart: still leased,
    // still acknowledgeable.
    acknowledge(&servers[0].api, 3).await;
    acknowledge(&servers[1].api, 4).await;

    // The runner that died: its three seconds run out, and one of the
    // servers stops its route.
    let api = &servers[2].api;
    let since = Instant::now();
    loop {
        let r = api.snapshot(&routes[5]).await;
        if r["state"] == "action_required" {
            assert_eq!(r["reason"], "ambiguous_dispatch");
            break;
        }
        assert!(
            since.elapsed() < Duration::from_secs(15),
            "the expired lease was not noticed: {r}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Give every server a lease check or two to do anything wrong.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    let ambiguous: Vec<(String, i64)> = sqlx::query_as(
        "SELECT route_id, COUNT(*) FROM events WHERE kind = 'route.ambiguous' GROUP BY route_id",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    assert_eq!(
        ambiguous,
        vec![(routes[5].clone(), 1)],
        "stopped once, alone"
    );
    for id in &routes[..5] {
        let r = api.snapshot(id).await;
        assert_eq!(r["state"], "retrying", "{id}: {r}");
    }
    let dispatches: i64 = scalar(&mut conn, "SELECT COUNT(*) FROM dispatches").await;
    assert_eq!(dispatches, 6, "nothing re-sent");
}

/// An action on one server reaches an event stream on another within a
/// second, and a claim long-polling on the other is handed the dispatch
/// the action made — woken by the database's notification, not a poll
/// (streams and claims fall back to polling only every 5 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_commits_on_one_server_wake_streams_and_claims_on_another() {
    let db = TestDb::with_prefix(Engine::Postgres, "scaleout").await;
    // The servers check tokens: the test acts as the administrator.
    crate::support::grant_admin(&db.store).await;
    let (a, b) = tokio::join!(start(&db.url), start(&db.url));
    let profile = a
        .api
        .profile(&[(
            "Claude",
            policy(1, 3600, 0, "stop"),
            policy(0, 0, 0, "stop"),
        )])
        .await;
    let mut stream = crate::support::client()
        .get(format!("{}/api/v1/events", b.api.base))
        .send()
        .await
        .unwrap();
    for round in 0..3 {
        let acted = Instant::now();
        let route = a.api.route(&profile, "kanban").await;
        let events = read_events(&mut stream, 1).await;
        let took = acted.elapsed();
        assert_eq!(
            (events[0].1.as_str(), &events[0].2["route"]["id"]),
            ("route.created", &route["id"]),
            "round {round}"
        );
        assert!(
            took < Duration::from_secs(1),
            "round {round}: the event reached the other server's stream after {took:?}"
        );
    }

    let route = a.api.route(&profile, "kanban").await;
    let waiting = a.api.fail(&route, overloaded()).await["route"].clone();
    assert_eq!(waiting["state"], "retry_wait");
    let id = waiting["id"].as_str().unwrap().to_string();
    let claim = {
        let (api, id) = (Api::new(b.api.base.clone()), id.clone());
        tokio::spawn(async move { api.claim_leased(&id, 60, 30).await })
    };
    // Let the claim reach B and start waiting (no dispatch exists yet), so
    // what hands it the dispatch is the wake-up, not its first look.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!claim.is_finished(), "the claim is waiting");
    let acted = Instant::now();
    let retried = a
        .api
        .post_ok(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "retry_now", "expected_generation": waiting["generation"]}),
        )
        .await;
    assert_eq!(retried["state"], "retrying");
    let handed = claim.await.unwrap();
    let took = acted.elapsed();
    assert_eq!(handed.len(), 1, "{handed:?}");
    assert_eq!(handed[0]["route_id"], id.as_str());
    assert!(
        took < Duration::from_secs(1),
        "the waiting claim on the other server got the dispatch after {took:?}"
    );
    let events: Vec<Value> = read_events(&mut stream, 3)
        .await
        .into_iter()
        .map(|(_, kind, _)| Value::from(kind))
        .collect();
    assert_eq!(
        events,
        ["route.created", "route.failure", "route.action"],
        "every commit, in order"
    );
}

/// SQLite is one server per file: a second is refused at start, saying
/// why and pointing to PostgreSQL, while the database still opens for a
/// short-lived command beside the running server; the lock goes with the
/// server's process, however it ends.
#[tokio::test]
async fn sqlite_a_second_server_on_one_file_is_refused() {
    let db = TestDb::new(Engine::Sqlite).await;
    let mut first = start(&db.url).await;
    let mut second = serve_command(&db.url, free_port());
    second.stderr(Stdio::piped());
    // Awaited, not waited for on a blocking thread: a second server that
    // is not refused is killed when the timeout drops it, so the test
    // fails (a blocking `output()` would keep running, and the test's
    // runtime waits for its blocking threads when it shuts down: a hang).
    let out = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::from(second)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .expect("the second server is refused at once, not left running")
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("already serving the SQLite database")
            && stderr.contains("one server per file")
            && stderr.contains("PostgreSQL"),
        "the refusal says why and what to use instead: {stderr}"
    );
    first.api.get("/readyz").await;
    let beside = server::store::connect(&db.url).await.unwrap();
    assert!(beside.list_profiles().await.unwrap().is_empty());
    drop(beside);

    first.kill();
    let again = start(&db.url).await;
    again.api.get("/readyz").await;
}
