//! Routes end: `complete` (the caller's session is over) and `cancel`
//! (given up) are fenced by generation like the manual actions, end the
//! route for good, and take its outstanding schedules and dispatches
//! with them (docs/routes.md, “Lifecycle”).

use crate::support::{overloaded, policy, typed, Engine, TestServer};
use domain::api::EndRequest;
use domain::ids::Generation;
use serde_json::{json, Value};

fn end(generation: &Value) -> Value {
    typed(&EndRequest {
        expected_generation: Generation(generation.as_i64().expect("a generation")),
    })
}

fn skip_now() -> Value {
    policy(0, 0, 0, "skip")
}

async fn event_kinds(s: &TestServer, route_id: &str) -> Vec<String> {
    s.db.store
        .events_after(0, Some(route_id), 100)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

/// Complete is fenced like an action; it voids the armed retry, so nothing
/// fires for the ended route; repeating it answers the route as it is;
/// cancelling a completed route is refused.
async fn complete_is_fenced_and_voids_the_pending_retry(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), skip_now())])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let waiting = api.fail(&route, overloaded()).await["route"].clone();
    assert_eq!(waiting["state"], "retry_wait");

    let path = format!("/api/v1/routes/{id}/complete");
    let (st, body) = api.post(&path, end(&route["generation"])).await;
    assert_eq!(st, 409, "{body}");
    assert_eq!(body["error"], "stale_generation");
    assert_eq!(body["route"]["state"], "retry_wait");

    let done = api.post_ok(&path, end(&waiting["generation"])).await;
    assert_eq!(done["state"], "completed");
    assert_eq!(done["pending"], Value::Null);
    assert_eq!(
        done["generation"].as_i64().unwrap(),
        waiting["generation"].as_i64().unwrap() + 1
    );
    // The retry was due in 5 s: it is void, nothing fires or is claimable.
    let advanced = api.advance(60.0).await;
    assert_eq!(advanced["fired"], 0);
    assert!(api.claim(&id).await.is_empty());
    assert_eq!(api.snapshot(&id).await["state"], "completed");

    // Completing again (the caller lost the answer) changes nothing.
    let again = api.post_ok(&path, end(&waiting["generation"])).await;
    assert_eq!(again["generation"], done["generation"]);
    // Nothing else moves an ended route: not a cancel, not a report, not an action.
    let (st, body) = api
        .post(
            &format!("/api/v1/routes/{id}/cancel"),
            end(&done["generation"]),
        )
        .await;
    assert_eq!((st, body["error"].as_str()), (409, Some("invalid_action")));
    assert_eq!(body["route"]["state"], "completed");
    let (st, body) = api
        .post(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "stop", "expected_generation": done["generation"]}),
        )
        .await;
    assert_eq!((st, body["error"].as_str()), (409, Some("invalid_action")));
    let (st, body) = api
        .post(
            &format!("/api/v1/routes/{id}/success"),
            json!({"generation": done["generation"], "invocation_id": done["invocation_id"],
                   "prompt_generation": done["prompt_generation"]}),
        )
        .await;
    assert_eq!(st, 409, "{body}");
    assert_eq!(api.snapshot(&id).await["state"], "completed");
    let kinds = event_kinds(&s, &id).await;
    assert_eq!(
        kinds.iter().filter(|k| *k == "route.completed").count(),
        1,
        "{kinds:?}"
    );
    // Audited as a route action, and the event names who ended it.
    let trail = api.get(&format!("/api/v1/audit?subject={id}")).await;
    let completes: Vec<&Value> = trail
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == "route.action" && e["detail"]["action"] == "complete")
        .collect();
    assert!(!completes.is_empty(), "{trail}");
    assert_eq!(completes[0]["detail"]["generation"], done["generation"]);
    let events = api.get(&format!("/api/v1/routes/{id}/events")).await;
    let ended = events
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "route.completed")
        .expect("the completed event")
        .clone();
    assert_eq!(ended["actor"]["kind"], "token", "{ended}");
}

/// Cancel withdraws a claimed switch dispatch: its acknowledgement is
/// refused, so the prompt never runs for the cancelled route.
async fn cancel_withdraws_an_outstanding_dispatch(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", skip_now(), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = api.route(&p, "workflow").await;
    let id = route["id"].as_str().unwrap().to_string();
    let switching = api.fail(&route, overloaded()).await["route"].clone();
    assert_eq!(switching["state"], "switching");
    let claimed = api.claim(&id).await;
    assert_eq!(claimed.len(), 1);

    let cancelled = api
        .post_ok(
            &format!("/api/v1/routes/{id}/cancel"),
            end(&switching["generation"]),
        )
        .await;
    assert_eq!(cancelled["state"], "cancelled");
    let (st, body) = api.ack(&claimed[0]).await;
    assert_eq!(st, 409, "{body}");
    assert_eq!(body["route"]["state"], "cancelled");
    // A cancel of the cancelled route answers it; a complete is refused.
    let again = api
        .post_ok(
            &format!("/api/v1/routes/{id}/cancel"),
            end(&route["generation"]),
        )
        .await;
    assert_eq!(again["generation"], cancelled["generation"]);
    let (st, _) = api
        .post(
            &format!("/api/v1/routes/{id}/complete"),
            end(&cancelled["generation"]),
        )
        .await;
    assert_eq!(st, 409);
    assert!(event_kinds(&s, &id)
        .await
        .contains(&"route.cancelled".to_string()));
}

/// A malformed body names the field and changes nothing.
async fn a_bad_end_request_names_the_field(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api.profile(&[("Claude", skip_now(), skip_now())]).await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap();
    let (st, body) = api
        .post(
            &format!("/api/v1/routes/{id}/complete"),
            json!({"expected_generation": "one"}),
        )
        .await;
    assert_eq!(st, 422, "{body}");
    assert!(body.to_string().contains("expected_generation"), "{body}");
    let (st, _) = api
        .post(
            "/api/v1/routes/r_missing/complete",
            end(&route["generation"]),
        )
        .await;
    assert_eq!(st, 404);
    assert_eq!(api.snapshot(id).await["state"], "active");
}

on_both_engines!(
    complete_is_fenced_and_voids_the_pending_retry,
    cancel_withdraws_an_outstanding_dispatch,
    a_bad_end_request_names_the_field
);
