//! What API fuzzing (`scripts/api-fuzz`, schemathesis against the served
//! OpenAPI document) found, each as a real request: the status the server
//! answers, and that the document it serves lists that status for the
//! operation (with the error body's content type), so a client generated
//! from the document is not surprised. docs/reliability.md, "API fuzzing", describes them.

use super::support::*;
use reqwest::Method;
use serde_json::{json, Value};

/// The document's response entry for `status` of `method path` (the path
/// as the document spells it, with `{id}`).
fn documented(doc: &Value, method: &Method, path: &str, status: u16) -> Option<Value> {
    let op = &doc["paths"][path][method.as_str().to_ascii_lowercase()];
    assert!(op.is_object(), "{method} {path} is not in the document");
    let r = &op["responses"][status.to_string()];
    r.is_object().then(|| r.clone())
}

/// Sends the request and checks the answer is `status` with an
/// `ApiError` body, and that the document says so.
async fn answers_as_documented(
    s: &TestServer,
    doc: &Value,
    (method, path, template): (Method, &str, &str),
    body: Option<Value>,
    status: u16,
) {
    let (got, answer) = s.api().call(method.clone(), path, body).await;
    assert_eq!(got, status, "{method} {path}: {answer}");
    assert!(answer["error"].is_string(), "an ApiError body: {answer}");
    let entry = documented(doc, &method, template, status)
        .unwrap_or_else(|| panic!("{method} {template} does not document {status}"));
    assert_eq!(
        entry["content"]["application/json"]["schema"]["$ref"], "#/components/schemas/ApiError",
        "{method} {template} {status}: {entry}"
    );
}

/// Finding: `POST /routes/{id}/actions` (and every other operation on an
/// id) answered 404 for an unknown id without documenting it. Every
/// operation with a path parameter now lists 404.
async fn an_unknown_id_answers_a_documented_404(engine: Engine) {
    let s = TestServer::start(engine).await;
    let doc = s.api().get("/api/v1/openapi.json").await;
    let stop = json!({"action": "stop", "expected_generation": 1});
    answers_as_documented(
        &s,
        &doc,
        (
            Method::POST,
            "/api/v1/routes/0/actions",
            "/api/v1/routes/{id}/actions",
        ),
        Some(stop),
        404,
    )
    .await;
    let ack = json!({"generation": 1});
    answers_as_documented(
        &s,
        &doc,
        (
            Method::POST,
            "/api/v1/dispatches/nothing/ack",
            "/api/v1/dispatches/{id}/ack",
        ),
        Some(ack),
        404,
    )
    .await;
    for (path, _) in doc["paths"].as_object().expect("paths") {
        for (method, op) in doc["paths"][path].as_object().expect("a path item") {
            if path.contains('{') {
                assert!(
                    op["responses"]["404"].is_object(),
                    "{method} {path} lacks 404"
                );
            }
        }
    }
}

on_both_engines!(an_unknown_id_answers_a_documented_404);
