//! The profiles API through a real server on port 0, on both engines.

use crate::support::{Engine, TestServer};
use reqwest::StatusCode;
use serde_json::{json, Value};
use server::store::ProfileRow;

fn class(retry: Value, wait: Value, outcome: &str) -> Value {
    json!({"retry": retry, "wait_for_reset": wait, "on_exhausted": outcome})
}

fn skip() -> Value {
    class(json!({"enabled": false}), json!({"enabled": false}), "skip")
}

fn two_candidates() -> Value {
    json!({
        "name": "Team",
        "candidates": [
            {"label": "Claude", "agent": "claude-code", "provider_id": "anthropic", "model_id": "claude-sonnet-4-5",
             "policy": {"version": 1,
                "transient": class(json!({"enabled": true, "max_retries": 3, "initial_interval_seconds": 5}), json!({"enabled": false}), "skip"),
                "hard": class(json!({"enabled": false}), json!({"enabled": true, "max_wait_seconds": 300}), "stop")}},
            {"label": "Codex", "agent": "codex"}
        ]
    })
}

async fn send(method: reqwest::Method, url: String, body: Option<Value>) -> (StatusCode, Value) {
    let client = crate::support::client();
    let mut req = client.request(method, url);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

async fn post_raw(url: String, body: &'static str) -> (StatusCode, Value) {
    let resp = crate::support::client()
        .post(url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn fields(body: &Value) -> Vec<String> {
    body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap().to_string())
        .collect()
}

async fn count(s: &TestServer) -> usize {
    s.db.store.list_profiles().await.unwrap().len()
}

async fn create_read_update_delete(engine: Engine) {
    let s = TestServer::start(engine).await;
    let (st, created) = send(
        reqwest::Method::POST,
        s.url("/api/v1/profiles"),
        Some(two_candidates()),
    )
    .await;
    assert_eq!(st, StatusCode::CREATED, "{created}");
    assert_eq!(created["revision"], 1);
    let id = created["id"].as_str().unwrap().to_string();
    let c0 = &created["candidates"][0];
    assert!(c0["id"].as_str().is_some_and(|i| !i.is_empty()));
    // Disabled sections come back as zeros; omitted policies as the default.
    assert_eq!(
        c0["policy"]["transient"]["wait_for_reset"],
        json!({"enabled": false, "max_wait_seconds": 0})
    );
    assert_eq!(
        created["candidates"][1]["policy"]["hard"]["on_exhausted"],
        "skip"
    );

    let (st, got) = send(
        reqwest::Method::GET,
        s.url(&format!("/api/v1/profiles/{id}")),
        None,
    )
    .await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(got, created);
    let (_, list) = send(reqwest::Method::GET, s.url("/api/v1/profiles"), None).await;
    assert_eq!(list.as_array().unwrap().len(), 1);

    let mut edit = got.clone();
    edit["name"] = json!("Team 2");
    edit["candidates"][1]["policy"] = json!({"version": 1, "transient": skip(), "hard": class(json!({"enabled": false}), json!({"enabled": false}), "stop")});
    let (st, updated) = send(
        reqwest::Method::PUT,
        s.url(&format!("/api/v1/profiles/{id}")),
        Some(edit.clone()),
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{updated}");
    assert_eq!(updated["revision"], 2);
    assert_eq!(
        updated["candidates"][1]["policy"]["hard"]["on_exhausted"],
        "stop"
    );
    assert_eq!(updated["candidates"][0]["id"], got["candidates"][0]["id"]);

    // The same body again is stale now: 409 with the stored profile.
    let (st, stale) = send(
        reqwest::Method::PUT,
        s.url(&format!("/api/v1/profiles/{id}")),
        Some(edit),
    )
    .await;
    assert_eq!(st, StatusCode::CONFLICT);
    assert_eq!(stale["error"], "stale_revision");
    assert_eq!(stale["profile"]["revision"], 2);

    let (st, _) = send(
        reqwest::Method::DELETE,
        s.url(&format!("/api/v1/profiles/{id}?revision=1")),
        None,
    )
    .await;
    assert_eq!(st, StatusCode::CONFLICT);
    let (st, _) = send(
        reqwest::Method::DELETE,
        s.url(&format!("/api/v1/profiles/{id}?revision=2")),
        None,
    )
    .await;
    assert_eq!(st, StatusCode::NO_CONTENT);
    let (st, body) = send(
        reqwest::Method::GET,
        s.url(&format!("/api/v1/profiles/{id}")),
        None,
    )
    .await;
    assert_eq!(
        (st, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
}

async fn bad_input_is_rejected_and_stores_nothing(engine: Engine) {
    let s = TestServer::start(engine).await;
    let url = s.url("/api/v1/profiles");

    for raw in ["{\"name\": ", "", "[1,2", "{\"name\": 1e999}"] {
        let (st, body) = post_raw(url.clone(), raw).await;
        assert_eq!(st, StatusCode::BAD_REQUEST, "{raw:?} → {body}");
        assert_eq!(body["error"], "malformed_json");
    }

    let mut bad = two_candidates();
    bad["candidates"][0]["policy"]["transient"]["retry"]["max_retries"] = json!(11);
    bad["candidates"][0]["policy"]["hard"]["wait_for_reset"]["max_wait_seconds"] = json!("300");
    bad["candidates"][1]["policy"] = json!({"version": 1, "transient": skip()});
    let (st, body) = send(reqwest::Method::POST, url.clone(), Some(bad)).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        fields(&body),
        [
            "candidates[0].policy.transient.retry.max_retries",
            "candidates[0].policy.hard.wait_for_reset.max_wait_seconds",
            "candidates[1].policy.hard",
        ]
    );
    assert_eq!(body["errors"][0]["code"], "out_of_range");
    assert_eq!(
        (
            body["errors"][0]["min"].as_u64(),
            body["errors"][0]["max"].as_u64()
        ),
        (Some(1), Some(10))
    );
    assert_eq!(body["errors"][1]["code"], "invalid_type");
    assert_eq!(body["errors"][2]["code"], "required");

    let mut bad = two_candidates();
    bad["candidates"][1]["policy"] = json!({"version": 2, "transient": skip(), "hard": skip()});
    bad["candidates"][0]["policy"]["transient"]["on_exhausted"] = json!("pause");
    bad["owner"] = json!("me");
    let (st, body) = send(reqwest::Method::POST, url.clone(), Some(bad)).await;
    assert_eq!(st, StatusCode::UNPROCESSABLE_ENTITY);
    let codes: Vec<(String, String)> = body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap().into(),
                e["code"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("owner".into(), "unknown_field".into()),
            (
                "candidates[0].policy.transient.on_exhausted".into(),
                "invalid_value".into()
            ),
            (
                "candidates[1].policy.version".into(),
                "unsupported_version".into()
            ),
        ]
    );

    let huge = json!({"name": "x".repeat(70_000), "candidates": []});
    let (st, body) = send(reqwest::Method::POST, url.clone(), Some(huge)).await;
    assert_eq!(st, StatusCode::PAYLOAD_TOO_LARGE, "{body}");

    let (st, _) = send(reqwest::Method::GET, s.url("/api/v1/nothing-here"), None).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(
        count(&s).await,
        0,
        "nothing may be stored by rejected requests"
    );
}

async fn validate_is_a_dry_run_with_a_preview(engine: Engine) {
    let s = TestServer::start(engine).await;
    let mut body = two_candidates();
    body["candidates"][1]["policy"] = json!("retry_same");
    let (st, report) = send(
        reqwest::Method::POST,
        s.url("/api/v1/profiles/validate"),
        Some(body),
    )
    .await;
    assert_eq!(st, StatusCode::OK, "{report}");
    assert_eq!(
        report["preview"][0]["transient"]["retry_delays_seconds"],
        json!([5, 10, 20])
    );
    assert_eq!(
        report["preview"][0]["transient"]["summary"],
        "Retry after 5 s, 10 s, 20 s, then skip to the next candidate."
    );
    // The legacy shape is normalised in the answer, never echoed back.
    assert_eq!(report["candidates"][1]["policy"]["version"], 1);
    assert_eq!(
        report["candidates"][1]["policy"]["hard"]["retry"]["max_retries"],
        1
    );
    assert_eq!(count(&s).await, 0);
}

async fn legacy_documents_normalise_once_or_load_as_configuration_errors(engine: Engine) {
    let s = TestServer::start(engine).await;
    let legacy = json!([
        {"id": "a", "label": "A", "agent": "claude-code", "provider_id": "", "model_id": "", "profile_ref": "",
         "policy": {"on_error": "retry_same", "per_code": {"quota_limited": "try_next"}}}
    ]);
    s.db.store
        .insert_profile(
            &ProfileRow {
                id: "legacy".into(),
                name: "Old".into(),
                revision: 1,
                document: legacy.to_string(),
                created_at_ms: 0,
                updated_at_ms: 0,
            },
            r#"{"kind":"timer"}"#,
        )
        .await
        .unwrap();
    let (st, p) = send(reqwest::Method::GET, s.url("/api/v1/profiles/legacy"), None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(p["revision"], 1);
    assert_eq!(
        p["candidates"][0]["policy"]["transient"]["retry"]["initial_interval_seconds"],
        5
    );
    assert_eq!(p["candidates"][0]["policy"]["hard"]["on_exhausted"], "skip");
    let stored = s.db.store.get_profile("legacy").await.unwrap().unwrap();
    assert!(
        !stored.document.contains("retry_same"),
        "normalised once in storage: {}",
        stored.document
    );

    let broken =
        json!([{"id": "b", "label": "B", "agent": "x", "policy": {"on_error": "retry_forever"}}]);
    s.db.store
        .insert_profile(
            &ProfileRow {
                id: "broken".into(),
                name: "Broken".into(),
                revision: 1,
                document: broken.to_string(),
                created_at_ms: 1,
                updated_at_ms: 1,
            },
            r#"{"kind":"timer"}"#,
        )
        .await
        .unwrap();
    let (st, p) = send(reqwest::Method::GET, s.url("/api/v1/profiles/broken"), None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(p["candidates"], json!([]));
    assert_eq!(
        p["configuration_error"]["errors"][0]["field"],
        "candidates[0].policy.on_error"
    );
    // It stays stored as it was, for repair.
    assert_eq!(
        s.db.store
            .get_profile("broken")
            .await
            .unwrap()
            .unwrap()
            .document,
        broken.to_string()
    );
}

async fn an_unwritable_database_answers_503_and_keeps_what_is_stored(engine: Engine) {
    let db = crate::support::TestDb::new(engine).await;
    let profiles = server::profiles::Profiles::new(
        db.store.clone(),
        server::clock::Clock::system(),
        std::sync::Arc::new(domain::policy::class::builtin_class_of),
    );
    let before = profiles.create(&two_candidates()).await.unwrap();
    let read_only = db.read_only_store().await;
    let s = TestServer::start_with(db, read_only).await;

    let (st, body) = send(
        reqwest::Method::POST,
        s.url("/api/v1/profiles"),
        Some(two_candidates()),
    )
    .await;
    assert_eq!(st, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["error"], "unavailable");
    assert!(body["message"]
        .as_str()
        .unwrap()
        .contains("nothing was changed"));

    let mut edit = serde_json::to_value(&before).unwrap();
    edit["name"] = json!("changed");
    let (st, _) = send(
        reqwest::Method::PUT,
        s.url(&format!("/api/v1/profiles/{}", before.id)),
        Some(edit),
    )
    .await;
    assert_eq!(st, StatusCode::SERVICE_UNAVAILABLE);

    let (st, list) = send(reqwest::Method::GET, s.url("/api/v1/profiles"), None).await;
    assert_eq!(st, StatusCode::OK);
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["name"], "Team");
    assert_eq!(list[0]["revision"], 1);
}

async fn health_and_openapi(engine: Engine) {
    let s = TestServer::start(engine).await;
    let (st, _) = send(reqwest::Method::GET, s.url("/healthz"), None).await;
    assert_eq!(st, StatusCode::OK);
    let (st, _) = send(reqwest::Method::GET, s.url("/readyz"), None).await;
    assert_eq!(st, StatusCode::OK);
    let (st, doc) = send(reqwest::Method::GET, s.url("/api/v1/openapi.json"), None).await;
    assert_eq!(st, StatusCode::OK);
    assert!(doc["paths"]["/api/v1/profiles/{id}"]["put"].is_object());
    assert!(doc["components"]["schemas"]["CandidatePolicy"].is_object());
}

async fn unknown_api_paths_and_bad_queries_answer_json(engine: Engine) {
    let s = TestServer::start(engine).await;
    let (st, body) = send(reqwest::Method::GET, s.url("/api/v1/nope"), None).await;
    assert_eq!(st, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "not_found");
    let (st, body) = send(
        reqwest::Method::DELETE,
        s.url("/api/v1/profiles/p_x?revision=soon"),
        None,
    )
    .await;
    assert_eq!(st, StatusCode::BAD_REQUEST);
    assert_eq!(body["error"], "malformed_json");
}

on_both_engines!(
    unknown_api_paths_and_bad_queries_answer_json,
    create_read_update_delete,
    bad_input_is_rejected_and_stores_nothing,
    validate_is_a_dry_run_with_a_preview,
    legacy_documents_normalise_once_or_load_as_configuration_errors,
    an_unwritable_database_answers_503_and_keeps_what_is_stored,
    health_and_openapi,
);
