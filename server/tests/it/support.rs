//! Test helpers: fresh databases on both engines and a real server on port 0.
#![allow(dead_code)]

use domain::api::{AckRequest, ClaimRequest, CreateRoute};
use domain::ids::{Generation, ProfileId, RouteId};
use domain::route::{Caller, CallerKind};
use server::clock::{Clock, SharedClock};
use server::store::{self, DynStore};
use sqlx::Connection;
use std::net::SocketAddr;

/// Runs each named `async fn(Engine)` as a test on SQLite and on PostgreSQL,
/// in modules `sqlite` and `postgres`: one behavioural suite, both engines.
/// `flavor = multi_thread;` first runs them on a multi-threaded runtime.
#[allow(unused_macros)]
macro_rules! on_both_engines {
    (flavor = multi_thread; $($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 4)] async fn $name() { super::$name(super::Engine::Sqlite).await } )*
        }
        mod postgres {
            $( #[tokio::test(flavor = "multi_thread", worker_threads = 4)] async fn $name() { super::$name(super::Engine::Postgres).await } )*
        }
    };
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $( #[tokio::test] async fn $name() { super::$name(super::Engine::Sqlite).await } )*
        }
        mod postgres {
            $( #[tokio::test] async fn $name() { super::$name(super::Engine::Postgres).await } )*
        }
    };
}

/// Where the PostgreSQL tests connect to create their own databases.
pub fn postgres_admin_url() -> String {
    std::env::var("TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into())
}

/// A fresh, migrated database that is dropped again with the guard.
pub struct TestDb {
    pub store: DynStore,
    pub url: String,
    _dir: Option<tempfile::TempDir>,
    pg_name: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

impl TestDb {
    pub async fn new(engine: Engine) -> TestDb {
        TestDb::with_prefix(engine, "kr_test").await
    }

    /// [`TestDb::new`], its PostgreSQL database named `<prefix>_<uuid>` so
    /// a suite's leftovers can be told apart.
    pub async fn with_prefix(engine: Engine, prefix: &str) -> TestDb {
        match engine {
            Engine::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}/test.db", dir.path().display());
                let store = store::connect(&url).await.expect("open SQLite");
                TestDb {
                    store,
                    url,
                    _dir: Some(dir),
                    pg_name: None,
                }
            }
            Engine::Postgres => {
                let admin = postgres_admin_url();
                let name = format!("{prefix}_{}", uuid::Uuid::new_v4().simple());
                // Bounded: a server that accepts and never answers (or a
                // CREATE DATABASE stuck behind a lock) fails this test,
                // saying so, instead of holding the whole run.
                let created = tokio::time::timeout(PG_ADMIN_TIMEOUT, async {
                    let mut conn = sqlx::PgConnection::connect(&admin)
                        .await
                        .unwrap_or_else(|e| {
                            panic!(
                                "PostgreSQL must be reachable at {admin} for the store tests: {e}"
                            )
                        });
                    sqlx::query(&format!("CREATE DATABASE {name}"))
                        .execute(&mut conn)
                        .await
                        .expect("create test database");
                })
                .await;
                assert!(
                    created.is_ok(),
                    "PostgreSQL at {admin} did not create {name} within {PG_ADMIN_TIMEOUT:?}"
                );
                let url = replace_db(&admin, &name);
                let store = store::connect(&url).await.expect("open PostgreSQL");
                TestDb {
                    store,
                    url,
                    _dir: None,
                    pg_name: Some(name),
                }
            }
        }
    }
}

impl TestDb {
    /// A second store on the same database whose connections cannot write.
    pub async fn read_only_store(&self) -> DynStore {
        use std::str::FromStr;
        if self.pg_name.is_some() {
            let opts = sqlx::postgres::PgConnectOptions::from_str(&self.url)
                .unwrap()
                .options([("default_transaction_read_only", "on")]);
            let pool = sqlx::postgres::PgPoolOptions::new()
                .connect_with(opts)
                .await
                .unwrap();
            std::sync::Arc::new(server::store::PgStore::from_migrated_pool(pool))
        } else {
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&self.url)
                .unwrap()
                .read_only(true);
            let pool = sqlx::sqlite::SqlitePoolOptions::new()
                .connect_with(opts)
                .await
                .unwrap();
            std::sync::Arc::new(server::store::SqliteStore::from_migrated_pool(pool))
        }
    }
}

fn replace_db(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let cut = base.rfind('/').expect("database URL has a path");
    let mut out = format!("{}/{}", &base[..cut], name);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    out
}

/// The longest a test database's CREATE or DROP (connection included)
/// may take: milliseconds normally, seconds on a loaded machine.
const PG_ADMIN_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(name) = self.pg_name.take() {
            let admin = postgres_admin_url();
            // Dropping needs its own runtime: Drop cannot await. It blocks
            // the test's thread, so it is bounded: a DROP that never
            // returns would hold the test (and the run) for ever; instead
            // the database is left behind, named on stderr.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                let dropped = rt.block_on(tokio::time::timeout(PG_ADMIN_TIMEOUT, async {
                    if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                        let _ =
                            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                                .execute(&mut conn)
                                .await;
                    }
                }));
                if dropped.is_err() {
                    eprintln!(
                        "test database {name} was not dropped within {PG_ADMIN_TIMEOUT:?}; left behind"
                    );
                }
            })
            .join();
        }
    }
}

/// A real server on an ephemeral port, with a manual clock.
pub struct TestServer {
    pub addr: SocketAddr,
    pub base: String,
    pub clock: SharedClock,
    pub db: TestDb,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    pub handle: tokio::task::JoinHandle<()>,
}

impl TestServer {
    pub async fn start(engine: Engine) -> TestServer {
        let db = TestDb::new(engine).await;
        let store = db.store.clone();
        TestServer::start_with(db, store).await
    }

    /// A server over `store`, which may differ from `db.store` (a read-only
    /// connection to the same database, say).
    pub async fn start_with(db: TestDb, store: DynStore) -> TestServer {
        TestServer::start_setup(db, store, |s| s).await
    }

    /// [`TestServer::start_with`] without the per-token limits on route
    /// creation and evidence: for load generators, whose clients open
    /// routes faster than any one adapter should.
    pub async fn start_unlimited(db: TestDb, store: DynStore) -> TestServer {
        TestServer::start_setup(db, store, |s| server::http::Setup {
            routes_per_minute: 0,
            evidence_per_minute: 0,
            ..s
        })
        .await
    }

    pub async fn start_setup(
        db: TestDb,
        store: DynStore,
        adjust: impl FnOnce(server::http::Setup) -> server::http::Setup,
    ) -> TestServer {
        // Server logs only when asked for: RUST_LOG=warn cargo test …
        if std::env::var_os("RUST_LOG").is_some() {
            server::telemetry::init();
        }
        let clock = Clock::manual(start_time());
        // `store` may be unable to write: the token goes in through `db`.
        grant_admin(&db.store).await;
        let state = server::http::AppState::new(&adjust(setup(store, clock.clone())));
        let (addr, tx, handle) = serve(state).await;
        TestServer {
            addr,
            base: format!("http://{addr}"),
            clock,
            db,
            shutdown: Some(tx),
            handle,
        }
    }

    /// [`TestServer::start`] with `--allow-private-webhooks`: for tests
    /// whose webhook receiver listens on 127.0.0.1.
    pub async fn start_with_private_webhooks(engine: Engine) -> TestServer {
        let db = TestDb::new(engine).await;
        let store = db.store.clone();
        TestServer::start_setup(db, store, |s| server::http::Setup {
            allow_private_webhooks: true,
            ..s
        })
        .await
    }

    /// [`TestServer::start`] on a database whose PostgreSQL name starts
    /// with `prefix`.
    pub async fn start_prefixed(engine: Engine, prefix: &str) -> TestServer {
        let db = TestDb::with_prefix(engine, prefix).await;
        let store = db.store.clone();
        TestServer::start_with(db, store).await
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }
}

/// A server over its own connection to an existing database, assembled
/// the way `serve` does it: a restarted server, or a second instance.
pub struct Instance {
    pub base: String,
    stop: tokio::sync::oneshot::Sender<()>,
    handle: tokio::task::JoinHandle<()>,
}

impl Instance {
    pub async fn start(url: &str) -> Instance {
        let store = store::connect(url).await.expect("open the database");
        let (addr, stop, handle) = serve(services(store, Clock::manual(start_time()))).await;
        Instance {
            base: format!("http://{addr}"),
            stop,
            handle,
        }
    }

    pub fn api(&self) -> Api {
        Api::new(self.base.clone())
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Shuts it down gracefully and waits until it has stopped.
    pub async fn stop(self) {
        let _ = self.stop.send(());
        self.handle.await.expect("the server stops");
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// The administrator token every test server accepts ([`grant_admin`]):
/// the tests that are not about access act with every permission, so
/// their assertions stay about what they test.
pub const ADMIN_TOKEN: &str = "kr_test_admin_0000000000000000000000000000000000000000000000000000";

/// Stores [`ADMIN_TOKEN`] as a live admin token in `store`'s database
/// (once; a read-only store, or one that has it already, is left alone).
pub async fn grant_admin(store: &DynStore) {
    let access = server::auth::Access::new(store.clone(), Clock::system(), false);
    let _ = access
        .create_token_with_secret(
            "test admin",
            server::auth::Permissions::admin(),
            ADMIN_TOKEN.to_string(),
        )
        .await;
}

/// A client that sends `token` as `Authorization: Bearer`.
pub fn client_with(token: Option<&str>) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(t) = token {
        headers.insert(
            reqwest::header::AUTHORIZATION,
            format!("Bearer {t}").parse().expect("a header value"),
        );
    }
    reqwest::Client::builder()
        .default_headers(headers)
        // A server that stops answering fails its test, naming it, instead
        // of holding the whole run until CI's limit: no request or long poll
        // of these tests waits anywhere near this long for a byte (a claim
        // waits at most 60 s).
        .connect_timeout(std::time::Duration::from_secs(30))
        .read_timeout(std::time::Duration::from_secs(180))
        .build()
        .expect("an HTTP client")
}

/// A client with the test administrator's token.
pub fn client() -> reqwest::Client {
    client_with(Some(ADMIN_TOKEN))
}

/// `reqwest::get` with the test administrator's token.
pub async fn get(url: impl reqwest::IntoUrl) -> reqwest::Result<reqwest::Response> {
    client().get(url).send().await
}

/// A small JSON client for a [`TestServer`], acting as the test
/// administrator unless made with another token.
pub struct Api {
    pub base: String,
    client: reqwest::Client,
}

impl TestServer {
    pub fn api(&self) -> Api {
        Api::new(self.base.clone())
    }
}

impl Api {
    pub fn new(base: String) -> Api {
        Api {
            base,
            client: client(),
        }
    }

    /// A client with `token`, or with no credentials at all.
    pub fn with_token(base: String, token: Option<&str>) -> Api {
        Api {
            base,
            client: client_with(token),
        }
    }

    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> (u16, serde_json::Value) {
        let mut req = self
            .client
            .request(method, format!("{}{}", self.base, path));
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
        )
    }

    pub async fn get(&self, path: &str) -> serde_json::Value {
        let (st, v) = self.call(reqwest::Method::GET, path, None).await;
        assert_eq!(st, 200, "GET {path}: {v}");
        v
    }

    pub async fn post(&self, path: &str, body: serde_json::Value) -> (u16, serde_json::Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn post_ok(&self, path: &str, body: serde_json::Value) -> serde_json::Value {
        let (st, v) = self.post(path, body).await;
        assert!(st == 200 || st == 201, "POST {path}: {st} {v}");
        v
    }

    /// A profile whose candidates carry the given (transient, hard) class policies.
    pub async fn profile(
        &self,
        candidates: &[(&str, serde_json::Value, serde_json::Value)],
    ) -> String {
        let cands: Vec<serde_json::Value> = candidates
            .iter()
            .map(|(label, t, h)| serde_json::json!({"label": label, "agent": "claude-code", "policy": {"version": 1, "transient": t, "hard": h}}))
            .collect();
        let p = self
            .post_ok(
                "/api/v1/profiles",
                serde_json::json!({"name": "scenario", "candidates": cands}),
            )
            .await;
        p["id"].as_str().unwrap().to_string()
    }

    pub async fn route(&self, profile_id: &str, caller: &str) -> serde_json::Value {
        let body = CreateRoute {
            profile_id: ProfileId::from(profile_id.to_string()),
            caller: Caller {
                kind: CallerKind::parse(caller).expect("a caller kind"),
                reference: "task-1".into(),
            },
        };
        self.post_ok("/api/v1/routes", typed(&body)).await
    }

    /// Reports `items` as a failure of the route's current invocation.
    pub async fn fail(
        &self,
        route: &serde_json::Value,
        items: serde_json::Value,
    ) -> serde_json::Value {
        let id = route["id"].as_str().unwrap();
        self.post_ok(
            &format!("/api/v1/routes/{id}/failures"),
            serde_json::json!({
                "generation": route["generation"], "invocation_id": route["invocation_id"],
                "prompt_generation": route["prompt_generation"], "phase": "prompt",
                "agent": "claude-code", "provider_id": "anthropic", "items": items
            }),
        )
        .await
    }

    pub async fn advance(&self, seconds: f64) -> serde_json::Value {
        self.post_ok(
            "/api/v1/test/clock",
            serde_json::json!({"advance_seconds": seconds}),
        )
        .await
    }

    pub async fn claim(&self, route_id: &str) -> Vec<serde_json::Value> {
        let v = self
            .post_ok(
                "/api/v1/dispatches/claim",
                typed(&claim_request(route_id, 60, 0)),
            )
            .await;
        v["dispatches"].as_array().unwrap().clone()
    }

    /// Claims a route's due dispatches with a lease of `lease_seconds`,
    /// long-polling up to `wait_seconds` for one.
    pub async fn claim_leased(
        &self,
        route_id: &str,
        lease_seconds: u32,
        wait_seconds: u32,
    ) -> Vec<serde_json::Value> {
        let v = self
            .post_ok(
                "/api/v1/dispatches/claim",
                typed(&claim_request(route_id, lease_seconds, wait_seconds)),
            )
            .await;
        v["dispatches"].as_array().unwrap().clone()
    }

    /// Acknowledges a claimed dispatch: (status, answer).
    pub async fn ack(&self, dispatch: &serde_json::Value) -> (u16, serde_json::Value) {
        self.post(
            &format!(
                "/api/v1/dispatches/{}/ack",
                dispatch["id"].as_str().unwrap()
            ),
            typed(&ack_request(dispatch)),
        )
        .await
    }

    /// Claims the one due dispatch of a route and acknowledges it; answers the route.
    pub async fn deliver(&self, route_id: &str) -> serde_json::Value {
        let ds = self.claim(route_id).await;
        assert_eq!(ds.len(), 1, "exactly one dispatch expected: {ds:?}");
        let d = &ds[0];
        self.post_ok(
            &format!("/api/v1/dispatches/{}/ack", d["id"].as_str().unwrap()),
            typed(&ack_request(d)),
        )
        .await
    }

    pub async fn snapshot(&self, route_id: &str) -> serde_json::Value {
        self.get(&format!("/api/v1/routes/{route_id}")).await
    }

    /// The route's attempt history, newest first.
    pub async fn attempts(&self, route_id: &str) -> Vec<serde_json::Value> {
        self.get(&format!("/api/v1/routes/{route_id}/attempts"))
            .await
            .as_array()
            .expect("an attempt list")
            .clone()
    }
}

/// A request body as JSON, from the API's own type.
pub fn typed<T: serde::Serialize>(body: &T) -> serde_json::Value {
    serde_json::to_value(body).expect("request bodies serialise")
}

fn claim_request(route_id: &str, lease_seconds: u32, wait_seconds: u32) -> ClaimRequest {
    ClaimRequest {
        route_id: Some(RouteId::from(route_id.to_string())),
        caller_kind: None,
        lease_seconds,
        wait_seconds,
    }
}

fn ack_request(dispatch: &serde_json::Value) -> AckRequest {
    AckRequest {
        generation: Generation(dispatch["generation"].as_i64().expect("a generation")),
    }
}

/// Class policies for tests.
pub fn policy(retries: u32, initial: u32, wait: u32, outcome: &str) -> serde_json::Value {
    serde_json::json!({
        "retry": {"enabled": retries > 0, "max_retries": retries, "initial_interval_seconds": if retries > 0 { initial } else { 0 }},
        "wait_for_reset": {"enabled": wait > 0, "max_wait_seconds": wait},
        "on_exhausted": outcome
    })
}

/// A 529 Overloaded from Anthropic.
pub fn overloaded() -> serde_json::Value {
    serde_json::json!([{"kind": "http", "status": 529, "headers": {},
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}])
}

/// Claude Code's usage limit with an epoch reset `seconds` after the test clock's start.
pub fn usage_limit_in(seconds: i64) -> serde_json::Value {
    let start = start_time().timestamp();
    serde_json::json!([{"kind": "stderr", "lines": [format!("Claude AI usage limit reached|{}", start + seconds)]},
        {"kind": "process_exit", "exit_code": 1, "signal": null}])
}

/// The application's services over `store`, without an HTTP server or a
/// timer loop: tests drive timers themselves.
pub fn services(store: DynStore, clock: SharedClock) -> server::http::AppState {
    server::http::AppState::new(&setup(store, clock))
}

/// The tests' service settings: a small body limit and the test clock.
fn setup(store: DynStore, clock: SharedClock) -> server::http::Setup {
    server::http::Setup {
        max_body_bytes: 64 * 1024,
        test_clock: true,
        ..server::http::Setup::new(store, clock)
    }
}

/// Serves `state` the way `serve` does, on an ephemeral port, until the
/// answered sender is dropped or sent to.
pub async fn serve(
    state: server::http::AppState,
) -> (
    SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    grant_admin(&state.store).await;
    let server = server::http::Server::start(state).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let handle = tokio::spawn(async move {
        server
            .serve(listener, async move {
                let _ = rx.await;
            })
            .await
            .unwrap();
    });
    (addr, tx, handle)
}

/// A route snapshot read from an answer's JSON, for typed checks.
pub fn snapshot_of(v: &serde_json::Value) -> domain::route::RouteSnapshot {
    serde_json::from_value(v.clone()).expect("a route snapshot")
}

/// 2026-11-30T12:00:00Z, where every test clock starts.
pub fn start_time() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
        .unwrap()
        .to_utc()
}

/// Every field of a classification (docs/design.md, “The classification”).
pub const CLASSIFICATION_FIELDS: [&str; 13] = [
    "code",
    "class",
    "catalogue_version",
    "confidence",
    "scope",
    "classifier_rule",
    "provider_id",
    "model_id",
    "phase",
    "occurred_at",
    "retry_after_seconds",
    "reset_at",
    "safe_excerpt",
];

/// A table's counters in PostgreSQL's statistics.
#[derive(Debug, Clone, Copy)]
pub struct TableCounts {
    pub seq_scans: i64,
    /// Index scans, bitmap scans included.
    pub index_scans: i64,
    pub updated: i64,
    pub inserted: i64,
    /// Rows fetched by index and bitmap scans.
    pub fetched_by_index: i64,
}

/// `table`'s counters once `ready` holds of them. Backends report their
/// counts when idle, within seconds, so a test waits for counts that show
/// what it did has been reported (up to a minute) and then compares, say,
/// the sequential scans before and after what must not scan `table`.
pub async fn table_counts(
    admin: &mut sqlx::PgConnection,
    table: &str,
    ready: impl Fn(&TableCounts) -> bool,
) -> TableCounts {
    let since = std::time::Instant::now();
    loop {
        let (seq_scans, index_scans, updated, inserted, fetched_by_index): (
            i64,
            i64,
            i64,
            i64,
            i64,
        ) = sqlx::query_as(
            "SELECT seq_scan, COALESCE(idx_scan, 0), n_tup_upd, n_tup_ins, \
                 COALESCE(idx_tup_fetch, 0) FROM pg_stat_user_tables WHERE relname = $1",
        )
        .bind(table)
        .fetch_one(&mut *admin)
        .await
        .unwrap();
        let counts = TableCounts {
            seq_scans,
            index_scans,
            updated,
            inserted,
            fetched_by_index,
        };
        if ready(&counts) {
            return counts;
        }
        assert!(
            since.elapsed() < std::time::Duration::from_secs(60),
            "the statistics of {table} never showed what the test did: {counts:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}
