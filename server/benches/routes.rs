//! Load benchmark for durable recovery (not criterion: it measures a
//! system under concurrent load, not a function).
//!
//! For each engine:
//! 1. **Decisions/s**: routes report a capacity failure through the full
//!    path (classify → gate → evaluate → one fenced transaction → timer
//!    armed) from 8 concurrent tasks.
//! 2. **Restart reconciliation** with 100,000 pending schedules: the time a
//!    restarted server needs before its timers are live again.
//! 3. **Timer lateness** with those 100,000 schedules pending: 1,000 more
//!    fall due over the next 10 s on the real clock; lateness = when the
//!    dispatch was committed minus the deadline.
//!
//! `cargo bench -p server --bench routes` (PostgreSQL at TEST_POSTGRES_URL,
//! default postgres://postgres@127.0.0.1:5432/test). `ROUTES_BENCH_PENDING`
//! changes the 100,000.

use domain::api::CreateRoute;
use domain::route::{Caller, CallerKind};
use server::bench::fixtures;
use server::bench::stats::percentile;
use server::clock::{Clock, SharedClock};
use server::http::{AppState, Server, Setup};
use server::store::{self, DynStore};
use sqlx::Connection;
use std::sync::Arc;
use std::time::Instant;

const WORKERS: usize = 8;

fn state(store: DynStore, clock: SharedClock) -> AppState {
    AppState::new(&Setup::new(store, clock))
}

async fn profile(s: &AppState, initial_seconds: u32) -> domain::ids::ProfileId {
    fixtures::profile(s, initial_seconds).await.unwrap()
}

/// Creates `n` routes on `profile_id` and reports one failure for each from
/// `WORKERS` tasks; answers (failure reports per second).
async fn report_failures(s: &AppState, profile_id: &domain::ids::ProfileId, n: usize) -> f64 {
    let routes = fixtures::create_routes(s, profile_id, n, "b")
        .await
        .unwrap();
    let routes = Arc::new(routes);
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..WORKERS {
        let (r, routes, next) = (s.routes.clone(), routes.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(route) = routes.get(i) else { break };
                let answer = r
                    .report_failure(&route.id, &fixtures::overloaded(route))
                    .await
                    .unwrap();
                assert_eq!(answer.decision.kind, domain::route::DecisionKind::Retry);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    n as f64 / started.elapsed().as_secs_f64()
}

async fn lateness(url: &str, engine: &str) -> Vec<f64> {
    // Deadline of each route's schedule vs when its dispatch was committed.
    let sql = "SELECT d.created_at - s.deadline FROM dispatches d JOIN schedules s \
               ON s.route_id = d.route_id AND s.state = 'fired'";
    let mut v: Vec<f64> = if engine == "sqlite" {
        let mut c = sqlx::SqliteConnection::connect(url).await.unwrap();
        sqlx::query_scalar::<_, i64>(sql)
            .fetch_all(&mut c)
            .await
            .unwrap()
            .into_iter()
            .map(|x| x as f64)
            .collect()
    } else {
        let mut c = sqlx::PgConnection::connect(url).await.unwrap();
        sqlx::query_scalar::<_, i64>(sql)
            .fetch_all(&mut c)
            .await
            .unwrap()
            .into_iter()
            .map(|x| x as f64)
            .collect()
    };
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v
}

async fn run(engine: &str, url: &str, pending: usize) {
    println!("== {engine}");
    let store = store::connect(url).await.unwrap();
    let clock = Clock::system();
    let s = state(store.clone(), clock.clone());

    // 1. Decisions per second (schedules far in the future).
    let far = profile(&s, 3_600).await;
    let n = 5_000.min(pending);
    let rate = report_failures(&s, &far, n).await;
    println!("full path (report → classify → decide → commit → timer armed): {rate:.0} decisions/s ({n} failures, {WORKERS} concurrent)");

    // Fill up to `pending` armed schedules.
    let t = Instant::now();
    report_failures(&s, &far, pending - n).await;
    println!(
        "pending schedules: {} (filled in {:.1} s)",
        store.count_schedules("armed").await.unwrap(),
        t.elapsed().as_secs_f64()
    );

    // 2. Restart reconciliation with them pending.
    drop(s);
    let t = Instant::now();
    let store = store::connect(url).await.unwrap();
    let server = Server::start(state(store.clone(), clock.clone()))
        .await
        .unwrap();
    let s = server.state.clone();
    let next = store.next_deadline(clock.pinned_ms()).await.unwrap();
    let reconcile = t.elapsed();
    assert!(next.is_some());
    println!(
        "restart reconciliation (open, migrate, reconcile, next deadline): {:.0} ms",
        reconcile.as_secs_f64() * 1e3
    );

    // 3. Timer lateness: 1,000 schedules falling due over the next 10 s.
    let soon = profile(&s, 1).await;
    let started = Instant::now();
    let due = 1_000;
    let mut batch = Vec::new();
    for i in 0..due {
        let r = s
            .routes
            .create(CreateRoute {
                profile_id: soon.clone(),
                caller: Caller {
                    kind: CallerKind::Office,
                    reference: format!("t{i}"),
                },
            })
            .await
            .unwrap();
        batch.push(r);
        // Spread the deadlines over ~10 s of wall time.
        if batch.len() == 10 {
            for r in batch.drain(..) {
                s.routes
                    .report_failure(&r.id, &fixtures::overloaded(&r))
                    .await
                    .unwrap();
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    // Wait until all fired.
    loop {
        let fired = lateness(url, engine).await.len();
        if fired >= due || started.elapsed().as_secs() > 120 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    server.stop().await;
    let late = lateness(url, engine).await;
    println!(
        "timer lateness with {pending} pending: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms ({} fired)",
        percentile(&late, 0.5),
        percentile(&late, 0.99),
        late.last().copied().unwrap_or(0.0),
        late.len()
    );
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --benches` passes nothing we need.
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let pending: usize = std::env::var("ROUTES_BENCH_PENDING")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let sqlite = format!("sqlite://{}/bench.db", dir.path().display());
        run("sqlite", &sqlite, pending).await;

        let admin = std::env::var("TEST_POSTGRES_URL")
            .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
        let name = format!("kr_bench_{}", std::process::id());
        let mut c = sqlx::PgConnection::connect(&admin)
            .await
            .expect("PostgreSQL for the benchmark");
        sqlx::query(&format!("CREATE DATABASE {name}"))
            .execute(&mut c)
            .await
            .unwrap();
        let cut = admin.rfind('/').unwrap();
        let url = format!("{}/{name}", &admin[..cut]);
        run("postgres", &url, pending).await;
        sqlx::query(&format!("DROP DATABASE {name} WITH (FORCE)"))
            .execute(&mut c)
            .await
            .unwrap();
    });
}
