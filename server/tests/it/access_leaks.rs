//! Data protection at every boundary: each `must_not_leak` string of the
//! shared public corpus, submitted as evidence through the API of the real
//! binary, appears in no API answer, event-stream event, rendered page, log
//! line (plain on SQLite, JSON on PostgreSQL, at debug level) or database
//! row. Neither do the API token's and the session's secrets (never stored,
//! never logged).

use crate::support::{policy, Api, Engine, TestDb, ADMIN_TOKEN};
use serde_json::{json, Value};
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

const PUBLIC: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/corpus/public.jsonl"
);

/// The corpus cases that name strings which must not leak.
fn cases() -> Option<Vec<(Value, Vec<String>)>> {
    let text = std::fs::read_to_string(PUBLIC).ok()?;
    let cases: Vec<(Value, Vec<String>)> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str::<Value>(l).expect("a corpus line is JSON"))
        .filter_map(|case| {
            let secrets: Vec<String> = case["expect"]["must_not_leak"]
                .as_array()
                .or_else(|| case["must_not_leak"].as_array())?
                .iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect();
            (!secrets.is_empty()).then(|| (case["evidence"].clone(), secrets))
        })
        .collect();
    Some(cases)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Every row of every table, as text.
async fn dump(db: &TestDb, engine: Engine) -> String {
    use sqlx::Row;
    let mut out = String::new();
    match engine {
        Engine::Sqlite => {
            let pool = sqlx::SqlitePool::connect(&db.url).await.unwrap();
            let tables: Vec<String> =
                sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
                    .fetch_all(&pool)
                    .await
                    .unwrap();
            assert!(tables.iter().any(|t| t == "api_tokens"), "{tables:?}");
            for t in tables {
                for row in sqlx::query(&format!("SELECT * FROM \"{t}\""))
                    .fetch_all(&pool)
                    .await
                    .unwrap()
                {
                    for (i, _) in row.columns().iter().enumerate() {
                        let text: Option<String> = row
                            .try_get::<Option<String>, _>(i)
                            .ok()
                            .flatten()
                            .or_else(|| {
                                row.try_get::<Option<i64>, _>(i)
                                    .ok()
                                    .flatten()
                                    .map(|n| n.to_string())
                            })
                            .or_else(|| {
                                row.try_get::<Option<Vec<u8>>, _>(i)
                                    .ok()
                                    .flatten()
                                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                            });
                        out.push_str(&text.unwrap_or_default());
                        out.push('\n');
                    }
                }
            }
        }
        Engine::Postgres => {
            let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
            )
            .fetch_all(&pool)
            .await
            .unwrap();
            assert!(tables.iter().any(|t| t == "api_tokens"), "{tables:?}");
            for t in tables {
                let rows: Vec<String> =
                    sqlx::query_scalar(&format!("SELECT row_to_json(t)::text FROM \"{t}\" t"))
                        .fetch_all(&pool)
                        .await
                        .unwrap();
                for r in rows {
                    out.push_str(&r);
                    out.push('\n');
                }
            }
        }
    }
    out
}

async fn nothing_leaks(engine: Engine) {
    let Some(cases) = cases() else {
        eprintln!("SKIPPED: the shared public corpus is not at {PUBLIC}");
        return;
    };
    assert!(
        !cases.is_empty(),
        "the public corpus names no must_not_leak strings"
    );
    let db = TestDb::new(engine).await;
    crate::support::grant_admin(&db.store).await;
    let log_path = tempfile::NamedTempFile::new().unwrap();
    let port = free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("DATABASE_URL", &db.url)
        .env("KANDEV_TEST_CLOCK", "1")
        .env("RUST_LOG", "debug")
        .env(
            "KANDEV_LOG_FORMAT",
            if engine == Engine::Postgres {
                "json"
            } else {
                "plain"
            },
        )
        .stdout(Stdio::from(log_path.reopen().unwrap()))
        .stderr(Stdio::from(log_path.reopen().unwrap()))
        .spawn()
        .unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let mut ready = false;
    for _ in 0..600 {
        if let Ok(r) = reqwest::get(format!("{base}/readyz")).await {
            if r.status().is_success() {
                ready = true;
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "the server did not become ready");
    let api = Api::new(base.clone());
    let client = crate::support::client();
    let mut seen = String::new();

    // A signed-in browser, whose session secret must not leak either.
    let link = Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args([
            "user",
            "add",
            "leak-check",
            "--permissions",
            "admin",
            "--url",
            &base,
        ])
        .args(["--database-url", &db.url])
        .output()
        .unwrap();
    let link = String::from_utf8(link.stdout).unwrap();
    let link = link.lines().last().unwrap().to_string();
    let code = link.split("code=").nth(1).unwrap().to_string();
    let signed_in = crate::access::open_link(
        &reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap(),
        &link,
    )
    .await;
    let session = signed_in
        .headers()
        .get_all("set-cookie")
        .iter()
        .find_map(|c| c.to_str().unwrap().strip_prefix("kandev_session="))
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();

    let profile = api
        .profile(&[
            (
                "Claude",
                policy(2, 5, 3600, "skip"),
                policy(1, 5, 3600, "skip"),
            ),
            ("Codex", policy(0, 0, 0, "stop"), policy(0, 0, 0, "stop")),
        ])
        .await;
    let mut routes = Vec::new();
    for (evidence, _) in &cases {
        let route = api.route(&profile, "kanban").await;
        let mut envelope = evidence.clone();
        envelope["generation"] = route["generation"].clone();
        envelope["invocation_id"] = route["invocation_id"].clone();
        envelope["prompt_generation"] = route["prompt_generation"].clone();
        if envelope.get("phase").is_none() {
            envelope["phase"] = json!("prompt");
        }
        let id = route["id"].as_str().unwrap().to_string();
        let (status, answer) = api
            .post(&format!("/api/v1/routes/{id}/failures"), envelope)
            .await;
        assert_eq!(status, 200, "the evidence was taken: {answer}");
        seen.push_str(&answer.to_string());
        routes.push(id);
    }
    // Everything the API, the pages and the event stream show.
    let mut paths = vec![
        "/api/v1/routes".to_string(),
        "/api/v1/circuits".to_string(),
        "/api/v1/catalogue/unknown".to_string(),
        "/api/v1/catalogue/unknown/reclassify".to_string(),
        "/catalogue".to_string(),
        "/routes".to_string(),
        "/circuits".to_string(),
        format!("/profiles/{profile}"),
        "/metrics".to_string(),
    ];
    // Each unknown-log entry with its envelope's skeleton.
    let log = api.get("/api/v1/catalogue/unknown").await;
    for e in log["entries"].as_array().expect("entries") {
        paths.push(format!(
            "/api/v1/catalogue/unknown/{}",
            e["id"].as_str().expect("an id")
        ));
    }
    for id in &routes {
        paths.push(format!("/api/v1/routes/{id}"));
        paths.push(format!("/api/v1/routes/{id}/attempts"));
        paths.push(format!("/routes/{id}"));
    }
    for p in &paths {
        let r = client.get(format!("{base}{p}")).send().await.unwrap();
        assert_eq!(r.status(), 200, "{p}");
        seen.push_str(&r.text().await.unwrap());
    }
    let mut stream = client
        .get(format!("{base}/api/v1/events?after=0"))
        .send()
        .await
        .unwrap();
    let mut events = String::new();
    while let Ok(Some(chunk)) = tokio::time::timeout(Duration::from_secs(3), stream.chunk())
        .await
        .unwrap_or(Ok(None))
    {
        events.push_str(&String::from_utf8_lossy(&chunk));
    }
    assert!(
        events.matches("event: route.created").count() >= routes.len(),
        "the event stream: {events}"
    );
    seen.push_str(&events);
    let _ = child.kill();
    let _ = child.wait();

    let mut logs = String::new();
    std::fs::File::open(log_path.path())
        .unwrap()
        .read_to_string(&mut logs)
        .unwrap();
    assert!(logs.lines().count() > 10, "the server logged: {logs}");
    if engine == Engine::Postgres {
        assert!(
            logs.lines().any(|l| l.starts_with('{')),
            "JSON logs: {logs}"
        );
    }
    let rows = dump(&db, engine).await;
    assert!(
        rows.contains("leak-check"),
        "the dump holds the tables' rows"
    );

    let mut secrets: Vec<String> = cases.iter().flat_map(|(_, s)| s.clone()).collect();
    secrets.push(ADMIN_TOKEN.to_string());
    secrets.push(session.clone());
    secrets.push(code);
    for secret in &secrets {
        for (place, text) in [
            ("an API answer, page or event", &seen),
            ("the log", &logs),
            ("the database", &rows),
        ] {
            assert!(
                !text.contains(secret.as_str()),
                "`{secret}` leaked into {place}"
            );
        }
    }
}

on_both_engines!(nothing_leaks);
