//! Test helpers: fresh databases on both engines and a real server on port 0.
#![allow(dead_code)]

use server::clock::{Clock, SharedClock};
use server::store::{self, DynStore};
use sqlx::Connection;
use std::net::SocketAddr;

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
                let name = format!("kr_test_{}", uuid::Uuid::new_v4().simple());
                let mut conn = sqlx::PgConnection::connect(&admin)
                    .await
                    .unwrap_or_else(|e| {
                        panic!("PostgreSQL must be reachable at {admin} for the store tests: {e}")
                    });
                sqlx::query(&format!("CREATE DATABASE {name}"))
                    .execute(&mut conn)
                    .await
                    .expect("create test database");
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

impl Drop for TestDb {
    fn drop(&mut self) {
        if let Some(name) = self.pg_name.take() {
            let admin = postgres_admin_url();
            // Dropping needs its own runtime: Drop cannot await.
            let _ = std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                rt.block_on(async move {
                    if let Ok(mut conn) = sqlx::PgConnection::connect(&admin).await {
                        let _ =
                            sqlx::query(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                                .execute(&mut conn)
                                .await;
                    }
                });
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
        let start = chrono::DateTime::parse_from_rfc3339("2026-11-30T12:00:00Z")
            .unwrap()
            .to_utc();
        let clock = Clock::manual(start);
        let state = server::http::AppState::new(&server::http::Setup {
            store,
            clock: clock.clone(),
            site_root: "target/site".into(),
            max_body_bytes: 64 * 1024,
            test_clock: true,
        });
        let app = server::http::router(state, 64 * 1024);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(async move {
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await
                .unwrap();
        });
        TestServer {
            addr,
            base: format!("http://{addr}"),
            clock,
            db,
            shutdown: Some(tx),
            handle,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
