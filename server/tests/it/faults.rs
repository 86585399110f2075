//! Faults of the database under a running service (issue 17, item 5):
//! PostgreSQL going away and coming back under load (a proxy that cuts and
//! refuses connections, and a private cluster really stopped with pg_ctl),
//! a slow PostgreSQL (the proxy adding latency), SQLite on a full disk (a
//! small tmpfs, filled) and SQLite read-only.
//!
//! Under each: `/readyz` says what is wrong (503 with the cause) and
//! recovers by itself; writes are refused with 503 and the API's error
//! body; reads are served where the database can still read; no timer
//! fires while it cannot be recorded; and when the database is back,
//! everything due happens once — [`audit`] finds nothing lost or doubled,
//! and the failure reports the service accepted are exactly the attempts
//! stored.
//!
//! Waits are on conditions with generous limits (a loaded 2-core machine);
//! the durations printed are observations, never assertions.

use crate::fault_proxy::{audit, Db, FaultProxy, PrivateCluster, SmallDisk};
use crate::support::{
    grant_admin, overloaded, policy, serve, services, start_time, Api, Engine, TestDb, TestServer,
};
use serde_json::{json, Value};
use server::clock::{Clock, SharedClock};
use server::store::{self, DynStore};
use std::net::ToSocketAddrs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Waits until `readyz` answers `status`, up to `limit`; answers its body.
async fn readyz_becomes(base: &str, status: u16, limit: Duration) -> String {
    let since = Instant::now();
    let mut last = String::new();
    while since.elapsed() < limit {
        if let Ok(r) = reqwest::get(format!("{base}/readyz")).await {
            let got = r.status().as_u16();
            last = format!("{got} {}", r.text().await.unwrap_or_default());
            if got == status {
                return last;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("/readyz did not answer {status} within {limit:?}; last: {last}");
}

/// Waits until `done` holds, up to `limit`.
async fn until<F, Fut>(what: &str, limit: Duration, mut done: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let since = Instant::now();
    while !done().await {
        assert!(since.elapsed() < limit, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A write refused because the database cannot take it: 503 with the
/// API's error body, saying nothing changed.
fn assert_refused(status: u16, body: &Value, what: &str) {
    assert_eq!(status, 503, "{what}: {body}");
    assert_eq!(body["error"], "unavailable", "{what}: {body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap_or("")
            .contains("nothing was changed"),
        "{what}: {body}"
    );
}

/// The host:port a PostgreSQL URL names.
pub(crate) fn socket_of(url: &str) -> std::net::SocketAddr {
    let rest = &url[url.find("://").unwrap() + 3..];
    let rest = &rest[rest.find('@').map(|i| i + 1).unwrap_or(0)..];
    let host = &rest[..rest.find('/').unwrap_or(rest.len())];
    host.to_socket_addrs()
        .expect("a PostgreSQL address")
        .next()
        .expect("an address")
}

/// What one load worker saw.
#[derive(Default, Debug)]
struct Seen {
    /// Routes this worker opened, with whether its one failure report was
    /// applied (answered with a decision, or answered stale after a 503:
    /// the 503'd try had committed just before its connection was cut).
    routes: Vec<(String, bool)>,
    ok: usize,
    unavailable: usize,
    /// Anything but 2xx and 503: a bug under faults.
    other: Vec<String>,
}

/// Opens routes and reports one overloaded failure on each until `stop`,
/// retrying what the service refuses with 503 as a runner does; reads
/// each route back.
async fn load(base: String, profile: String, stop: Arc<AtomicBool>) -> Seen {
    let api = Api::new(base);
    let mut seen = Seen::default();
    let mut n = 0;
    let give_up = Instant::now() + Duration::from_secs(180);
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        let (st, route) = api
            .post(
                "/api/v1/routes",
                json!({"profile_id": profile, "caller": {"kind": "kanban", "ref": format!("load-{n}")}}),
            )
            .await;
        match st {
            201 => seen.ok += 1,
            503 => {
                assert_refused(st, &route, "opening a route");
                seen.unavailable += 1;
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
            _ => {
                seen.other.push(format!("create {st} {route}"));
                continue;
            }
        }
        let id = route["id"].as_str().unwrap().to_string();
        let mut refused_before = false;
        let applied = loop {
            assert!(Instant::now() < give_up, "the failure report never landed");
            let (st, answer) = api
                .post(
                    &format!("/api/v1/routes/{id}/failures"),
                    json!({
                        "generation": route["generation"], "invocation_id": route["invocation_id"],
                        "prompt_generation": route["prompt_generation"], "phase": "prompt",
                        "agent": "claude-code", "provider_id": "anthropic", "items": overloaded()
                    }),
                )
                .await;
            match st {
                200 => {
                    seen.ok += 1;
                    let stale = answer["decision"]["kind"] == "stale";
                    assert!(
                        !stale || refused_before,
                        "a first report answered stale: {answer}"
                    );
                    break true;
                }
                503 => {
                    assert_refused(st, &answer, "reporting a failure");
                    seen.unavailable += 1;
                    refused_before = true;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                _ => {
                    seen.other.push(format!("failure {st} {answer}"));
                    break false;
                }
            }
        };
        seen.routes.push((id.clone(), applied));
        let (st, _) = api
            .call(reqwest::Method::GET, &format!("/api/v1/routes/{id}"), None)
            .await;
        match st {
            200 => seen.ok += 1,
            503 => seen.unavailable += 1,
            _ => seen.other.push(format!("read {st}")),
        }
    }
    seen
}

/// After the database is back: every due schedule fires by itself, then
/// the audit holds and every accepted failure report is one stored attempt
/// — each route in `retrying` with exactly one dispatch.
async fn everything_happened_once(api: &Api, clock: &SharedClock, url: &str, seen: &[Seen]) {
    // Every retry is two seconds out on the test clock: make them all due.
    clock.advance(chrono::Duration::seconds(10));
    let mut db = Db::open(url).await;
    let since = Instant::now();
    loop {
        let armed = db
            .scalar("SELECT COUNT(*) FROM schedules WHERE state = 'armed'")
            .await;
        if armed == 0 {
            break;
        }
        assert!(
            since.elapsed() < Duration::from_secs(120),
            "{armed} schedules still armed after 120 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let problems = audit(url).await;
    assert!(problems.is_empty(), "the audit found: {problems:?}");
    let accepted: Vec<&(String, bool)> = seen
        .iter()
        .flat_map(|s| s.routes.iter())
        .filter(|(_, applied)| *applied)
        .collect();
    let attempts = db.scalar("SELECT COUNT(*) FROM attempts").await;
    assert_eq!(
        attempts,
        accepted.len() as i64,
        "accepted failure reports = attempts stored"
    );
    for (id, _) in &accepted {
        let r = api.snapshot(id).await;
        assert_eq!(r["state"], "retrying", "{id}: {r}");
        let dispatches = db
            .scalar(&format!(
                "SELECT COUNT(*) FROM dispatches WHERE route_id = '{id}'"
            ))
            .await;
        assert_eq!(dispatches, 1, "{id}: one dispatch");
    }
}

/// PostgreSQL stopped and restarted under load, as the service sees it: the
/// proxy in front of it cuts every connection and refuses new ones for a
/// while, with four clients opening routes and reporting failures and
/// retries falling due meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stopped_and_restarted_under_load() {
    let db = TestDb::with_prefix(Engine::Postgres, "faults").await;
    let url = db.url.clone();
    let proxy = FaultProxy::start(socket_of(&url)).await;
    let store = store::connect(&proxy.url_through(&url))
        .await
        .expect("connect through the proxy");
    // Four clients as fast as they can go: no per-token quota in the way.
    let s = TestServer::start_unlimited(db, store).await;
    let api = s.api();
    let profile = api
        .profile(&[("Claude", policy(1, 2, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;

    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..4)
        .map(|_| tokio::spawn(load(s.base.clone(), profile.clone(), stop.clone())))
        .collect();
    tokio::time::sleep(Duration::from_millis(1500)).await;

    proxy.down().await;
    let down = Instant::now();
    let why = readyz_becomes(&s.base, 503, Duration::from_secs(60)).await;
    let noticed = down.elapsed();
    assert!(why.contains("database unavailable"), "{why}");
    let (st, body) = api
        .post(
            "/api/v1/routes",
            json!({"profile_id": profile, "caller": {"kind": "kanban", "ref": "down"}}),
        )
        .await;
    assert_refused(st, &body, "a write while PostgreSQL is down");
    // Retries fall due while nothing can record their firing.
    s.clock.advance(chrono::Duration::seconds(5));
    tokio::time::sleep(Duration::from_secs(2)).await;

    proxy.up().await;
    let up = Instant::now();
    readyz_becomes(&s.base, 200, Duration::from_secs(60)).await;
    let recovered = up.elapsed();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::SeqCst);
    let mut seen = Vec::new();
    for w in workers {
        seen.push(w.await.expect("a load worker"));
    }
    let other: Vec<&String> = seen.iter().flat_map(|s| s.other.iter()).collect();
    assert!(
        other.is_empty(),
        "answers other than 2xx and 503: {other:?}"
    );
    let refused: usize = seen.iter().map(|s| s.unavailable).sum();
    assert!(refused > 0, "the load met the outage");

    everything_happened_once(&api, &s.clock, &url, &seen).await;
    println!(
        "postgres down under load: readyz 503 after {:.1} s, ready {:.1} s after it came back; \
         {} answers 2xx, {refused} 503, {} routes, audit clean",
        noticed.as_secs_f64(),
        recovered.as_secs_f64(),
        seen.iter().map(|s| s.ok).sum::<usize>(),
        seen.iter().map(|s| s.routes.len()).sum::<usize>(),
    );
}

/// The same with a real stop: a private PostgreSQL cluster stopped with
/// `pg_ctl stop -m fast` and started again. Where this machine cannot run
/// one (no server binaries, not root), the test fails saying why — the
/// proxy test above covers the service's side either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_private_cluster_really_stopped_and_started() {
    let cluster = tokio::task::block_in_place(PrivateCluster::create)
        .unwrap_or_else(|e| panic!("cannot run a private PostgreSQL cluster here: {e}"));
    let admin = cluster.admin_url();
    {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&admin).await.unwrap();
        sqlx::query("CREATE DATABASE faults")
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let url = format!("postgres://postgres@127.0.0.1:{}/faults", cluster.port);
    let store = store::connect(&url).await.unwrap();
    let clock = Clock::manual(start_time());
    let (addr, stop, handle) = serve(services(store.clone(), clock.clone())).await;
    let api = Api::new(format!("http://{addr}"));
    let profile = api
        .profile(&[("Claude", policy(1, 2, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let mut accepted = Vec::new();
    for _ in 0..3 {
        let route = api.route(&profile, "kanban").await;
        let answer = api.fail(&route, overloaded()).await;
        assert_eq!(answer["route"]["state"], "retry_wait");
        accepted.push(route["id"].as_str().unwrap().to_string());
    }

    // pg_ctl waits for the server; the runtime's other worker serves.
    tokio::task::block_in_place(|| cluster.stop()).expect("pg_ctl stop");
    let why = readyz_becomes(&api.base, 503, Duration::from_secs(60)).await;
    assert!(why.contains("database unavailable"), "{why}");
    let (st, body) = api
        .post(
            "/api/v1/routes",
            json!({"profile_id": profile, "caller": {"kind": "kanban", "ref": "down"}}),
        )
        .await;
    assert_refused(st, &body, "a write while PostgreSQL is stopped");
    clock.advance(chrono::Duration::seconds(5));
    tokio::time::sleep(Duration::from_secs(2)).await;

    let started = Instant::now();
    tokio::task::block_in_place(|| cluster.start()).expect("pg_ctl start");
    readyz_becomes(&api.base, 200, Duration::from_secs(60)).await;
    let recovered = started.elapsed();
    let seen = [Seen {
        routes: accepted.into_iter().map(|id| (id, true)).collect(),
        ..Seen::default()
    }];
    everything_happened_once(&api, &clock, &url, &seen).await;
    println!(
        "private cluster stopped and started: ready {:.1} s after pg_ctl start returned",
        recovered.as_secs_f64()
    );
    let _ = stop.send(());
    handle.await.unwrap();
    drop(store);
}

/// A slow PostgreSQL: 20 ms added to every packet each way still serves
/// every request and fires every timer once; at 5 s a packet `/readyz`
/// says the database does not answer, and is ready again as soon as the
/// latency is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_slow_database() {
    let db = TestDb::with_prefix(Engine::Postgres, "faults").await;
    let url = db.url.clone();
    let proxy = FaultProxy::start(socket_of(&url)).await;
    let store = store::connect(&proxy.url_through(&url)).await.unwrap();
    let s = TestServer::start_with(db, store).await;
    let api = s.api();
    proxy.set_latency(Duration::from_millis(20));
    let profile = api
        .profile(&[("Claude", policy(1, 2, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..4)
        .map(|_| tokio::spawn(load(s.base.clone(), profile.clone(), stop.clone())))
        .collect();
    tokio::time::sleep(Duration::from_secs(3)).await;
    readyz_becomes(&s.base, 200, Duration::from_secs(30)).await;
    stop.store(true, Ordering::SeqCst);
    let mut seen = Vec::new();
    for w in workers {
        seen.push(w.await.unwrap());
    }
    let refused: usize = seen.iter().map(|s| s.unavailable).sum();
    assert_eq!(refused, 0, "a slow database refuses nothing");
    assert!(seen.iter().all(|s| s.other.is_empty()), "{seen:?}");
    assert!(seen.iter().any(|s| !s.routes.is_empty()), "work was done");
    everything_happened_once(&api, &s.clock, &url, &seen).await;

    proxy.set_latency(Duration::from_secs(5));
    let why = readyz_becomes(&s.base, 503, Duration::from_secs(60)).await;
    assert!(why.contains("did not answer within"), "{why}");
    proxy.set_latency(Duration::ZERO);
    readyz_becomes(&s.base, 200, Duration::from_secs(60)).await;
    println!(
        "slow postgres: {} requests at +20 ms a packet, none refused; readyz 503 at +5 s, 200 again without it",
        seen.iter().map(|s| s.ok).sum::<usize>()
    );
}

/// A server over `store` whose `/readyz` watches `dir`'s free space, as
/// `serve` does for an SQLite file.
async fn sqlite_server(
    store: DynStore,
    clock: SharedClock,
    dir: &std::path::Path,
) -> (
    Api,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    // Server logs only when asked for: RUST_LOG=warn cargo test …
    if std::env::var_os("RUST_LOG").is_some() {
        server::telemetry::init();
    }
    let mut state = services(store, clock);
    state.database_dir = Some(dir.to_path_buf());
    let (addr, stop, handle) = serve(state).await;
    (Api::new(format!("http://{addr}")), stop, handle)
}

/// A route waiting two seconds (test clock) for its retry; answers its id.
async fn waiting_route(api: &Api, profile: &str) -> String {
    let route = api.route(profile, "kanban").await;
    let answer = api.fail(&route, overloaded()).await;
    assert_eq!(answer["route"]["state"], "retry_wait");
    route["id"].as_str().unwrap().to_string()
}

/// SQLite on a full disk (a 16 MiB tmpfs filled to the last byte): ready
/// no more, writes refused, reads served, the due retry not fired; room
/// again and everything carries on by itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_full_disk() {
    let disk = SmallDisk::mount("16m")
        .unwrap_or_else(|e| panic!("SQLite on a full disk needs a small filesystem to fill: {e}"));
    let url = format!("sqlite://{}/full.db", disk.path().display());
    let store = store::connect(&url).await.unwrap();
    grant_admin(&store).await;
    let clock = Clock::manual(start_time());
    let (api, stop, handle) = sqlite_server(store.clone(), clock.clone(), disk.path()).await;
    let profile = api
        .profile(&[("Claude", policy(1, 2, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let waiting = waiting_route(&api, &profile).await;

    disk.fill();
    let why = readyz_becomes(&api.base, 503, Duration::from_secs(30)).await;
    assert!(why.contains("disk full"), "{why}");
    let (st, body) = api
        .post(
            "/api/v1/routes",
            json!({"profile_id": profile, "caller": {"kind": "kanban", "ref": "full"}}),
        )
        .await;
    assert_refused(st, &body, "a write on a full disk");
    let (st, body) = api
        .post(
            &format!("/api/v1/routes/{waiting}/actions"),
            json!({"action": "stop", "expected_generation": api.snapshot(&waiting).await["generation"]}),
        )
        .await;
    assert_refused(st, &body, "an action on a full disk");
    // Reads need no room.
    assert_eq!(api.snapshot(&waiting).await["state"], "retry_wait");
    assert_eq!(api.get("/api/v1/routes").await.as_array().unwrap().len(), 1);
    // The retry falls due; the timer loop cannot record it, so it waits.
    clock.advance(chrono::Duration::seconds(5));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        api.snapshot(&waiting).await["state"],
        "retry_wait",
        "no timer fired that could not be recorded"
    );

    disk.free();
    let freed = Instant::now();
    readyz_becomes(&api.base, 200, Duration::from_secs(30)).await;
    let ready = freed.elapsed();
    // A claim the timer loop wrote before its firing failed holds the
    // schedule until it runs out (then any pass fires it): time passes
    // as it would on the real clock.
    let mut db = Db::open(&url).await;
    let claimed = db
        .scalar(&format!(
            "SELECT COUNT(*) FROM schedules WHERE route_id = '{waiting}' AND state = 'armed' \
             AND claimed_until IS NOT NULL"
        ))
        .await;
    if claimed > 0 {
        clock.advance(
            chrono::Duration::from_std(server::routes::service::SCHEDULE_CLAIM).unwrap()
                + chrono::Duration::seconds(1),
        );
    }
    until(
        "the due retry fired by itself",
        Duration::from_secs(60),
        || {
            let api = &api;
            let id = waiting.clone();
            async move { api.snapshot(&id).await["state"] == "retrying" }
        },
    )
    .await;
    let fired = freed.elapsed();
    let second = waiting_route(&api, &profile).await;
    let seen = [Seen {
        routes: vec![(waiting, true), (second, true)],
        ..Seen::default()
    }];
    everything_happened_once(&api, &clock, &url, &seen).await;
    println!(
        "sqlite full disk: ready {:.1} s and the due retry fired {:.1} s after room was made",
        ready.as_secs_f64(),
        fired.as_secs_f64()
    );
    let _ = stop.send(());
    handle.await.unwrap();
}

/// SQLite read-only: the file opened read-only, as SQLite itself opens a
/// file it may not write (a chmod does not stop root, who runs CI, so the
/// test reopens it read-only). Not ready, writes refused, reads served,
/// the due retry not fired; a server on the writable file again fires it
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_read_only_file() {
    let db = TestDb::new(Engine::Sqlite).await;
    grant_admin(&db.store).await;
    let clock = Clock::manual(start_time());
    let dir = tempfile::tempdir().unwrap();
    let (api, stop, handle) = sqlite_server(db.store.clone(), clock.clone(), dir.path()).await;
    let profile = api
        .profile(&[("Claude", policy(1, 2, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let waiting = waiting_route(&api, &profile).await;
    let _ = stop.send(());
    handle.await.unwrap();

    let read_only = db.read_only_store().await;
    let (api, stop, handle) = sqlite_server(read_only, clock.clone(), dir.path()).await;
    let why = readyz_becomes(&api.base, 503, Duration::from_secs(30)).await;
    assert!(why.contains("read-only"), "{why}");
    let (st, body) = api
        .post(
            "/api/v1/routes",
            json!({"profile_id": profile, "caller": {"kind": "kanban", "ref": "ro"}}),
        )
        .await;
    assert_refused(st, &body, "a write on a read-only file");
    assert_eq!(api.snapshot(&waiting).await["state"], "retry_wait");
    assert_eq!(api.get("/api/v1/routes").await.as_array().unwrap().len(), 1);
    clock.advance(chrono::Duration::seconds(5));
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        api.snapshot(&waiting).await["state"],
        "retry_wait",
        "no timer fired that could not be recorded"
    );
    let _ = stop.send(());
    handle.await.unwrap();

    let (api, stop, handle) = sqlite_server(db.store.clone(), clock.clone(), dir.path()).await;
    readyz_becomes(&api.base, 200, Duration::from_secs(30)).await;
    let seen = [Seen {
        routes: vec![(waiting, true)],
        ..Seen::default()
    }];
    everything_happened_once(&api, &clock, &db.url, &seen).await;
    let _ = stop.send(());
    handle.await.unwrap();
}
