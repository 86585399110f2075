//! Stored rows that do not read back answer a clear error (500 `internal`,
//! details in the log), never a default such as a `retry` dispatch or an
//! `unclassified` attempt.

use crate::support::{overloaded, policy, Engine, TestDb, TestServer};
use serde_json::json;
use sqlx::Connection;

/// Runs one statement on the test database behind the server's back.
async fn corrupt(db: &TestDb, sql: &str) {
    if db.url.starts_with("sqlite:") {
        let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
        sqlx::query(sql).execute(&mut c).await.unwrap();
    } else {
        let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
        sqlx::query(sql).execute(&mut c).await.unwrap();
    }
}

async fn corrupt_attempts_and_dispatches_are_errors(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    let attempts = format!("/api/v1/routes/{id}/attempts");
    let (st, _) = api.call(reqwest::Method::GET, &attempts, None).await;
    assert_eq!(st, 200);

    for bad in [
        "UPDATE attempts SET class = 'fatal'",
        "UPDATE attempts SET class = 'transient', decision = 'shrug'",
        "UPDATE attempts SET decision = 'retry', outcome = 'somewhere'",
    ] {
        corrupt(&s.db, bad).await;
        let (st, body) = api.call(reqwest::Method::GET, &attempts, None).await;
        assert_eq!(st, 500, "{bad}: {body}");
        assert_eq!(body["error"], "internal", "{bad}");
    }

    // The retry falls due: a dispatch whose reason is unknown is refused,
    // not handed out as a retry.
    api.advance(5.0).await;
    corrupt(&s.db, "UPDATE dispatches SET reason = 'teleport'").await;
    let (st, body) = api
        .post(
            "/api/v1/dispatches/claim",
            json!({"route_id": id, "lease_seconds": 60, "wait_seconds": 0}),
        )
        .await;
    assert_eq!(st, 500, "{body}");
    assert_eq!(body["error"], "internal");
}

on_both_engines!(corrupt_attempts_and_dispatches_are_errors);
