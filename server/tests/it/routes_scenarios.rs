//! The scenarios of docs/design.md through the HTTP API of a real server on port 0,
//! with the test clock, on SQLite and PostgreSQL.

use crate::support::{
    overloaded, policy, snapshot_of, start_time, usage_limit_in, Engine, TestServer,
};
use serde_json::{json, Value};

fn skip_now() -> Value {
    policy(0, 0, 0, "skip")
}

/// Scenario 1: A capacity error before output, transient policy 3 retries from 5 s:
/// waits of 5, 10 and 20 s are persisted, then the exhausted outcome.
async fn capacity_error_retries_5_10_20_then_applies_the_outcome(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 5, 0, "skip"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let mut route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let start = start_time();
    let mut elapsed = 0;
    for (ordinal, delay) in [(1, 5), (2, 10), (3, 20)] {
        let answer = api.fail(&route, overloaded()).await;
        assert_eq!(answer["classification"]["code"], "provider_overloaded");
        assert_eq!(answer["route"]["last_failure"]["http_status"], 529);
        assert_eq!(answer["decision"]["kind"], "retry");
        assert_eq!(answer["decision"]["delay_seconds"], delay);
        route = answer["route"].clone();
        assert_eq!(route["state"], "retry_wait");
        let pending = &route["pending"];
        assert_eq!(pending["retry_ordinal"], ordinal);
        assert_eq!(pending["max_retries"], 3);
        assert_eq!(pending["outcome_after"], "skip");
        assert_eq!(pending["class"], "transient");
        let deadline = snapshot_of(&route).pending.expect("pending").deadline;
        assert_eq!((deadline - start).num_seconds(), elapsed + delay);
        // Persisted: a fresh read says the same.
        assert_eq!(api.snapshot(&id).await["pending"], route["pending"]);
        // Nothing is due before the deadline.
        api.advance(delay as f64 - 1.0).await;
        assert!(api.claim(&id).await.is_empty());
        assert_eq!(api.snapshot(&id).await["state"], "retry_wait");
        api.advance(1.0).await;
        elapsed += delay;
        route = api.deliver(&id).await;
        assert_eq!(route["state"], "retrying");
    }
    // Retries exhausted: skip to the next candidate in the same route.
    let answer = api.fail(&route, overloaded()).await;
    assert_eq!(answer["decision"]["kind"], "skip");
    assert_eq!(answer["route"]["state"], "switching");
    assert_eq!(answer["route"]["candidate"]["label"], "Codex");
    assert_eq!(answer["route"]["id"], id.as_str());
    let history = api.attempts(&id).await;
    let decisions: Vec<&str> = history
        .iter()
        .rev()
        .map(|a| a["decision"].as_str().unwrap())
        .collect();
    assert_eq!(decisions, ["retry", "retry", "retry", "skip"]);
    assert_eq!(history[3]["policy"]["retry"]["max_retries"], 3);
    assert!(history.iter().all(|a| a["catalogue_version"]
        .as_str()
        .is_some_and(|v| !v.is_empty())));
}

/// Scenario 2: A quota error with a trusted reset one minute out and a five-minute
/// maximum wait: the route waits durably and retries the same candidate once.
async fn near_reset_is_waited_for_then_retried_once(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", skip_now(), policy(0, 0, 300, "stop")),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let answer = api.fail(&route, usage_limit_in(60)).await;
    assert_eq!(answer["classification"]["code"], "quota_limited");
    assert_eq!(answer["decision"]["kind"], "wait_for_reset");
    assert_eq!(answer["route"]["state"], "waiting_for_reset");
    assert_eq!(
        answer["route"]["pending"]["deadline"],
        "2026-11-30T12:01:00Z"
    );
    api.advance(59.0).await;
    assert!(api.claim(&id).await.is_empty());
    api.advance(1.0).await;
    let ds = api.claim(&id).await;
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0]["reason"], "reset_retry");
    assert_eq!(ds[0]["candidate"]["label"], "Claude");
    let route = api
        .post_ok(
            &format!("/api/v1/dispatches/{}/ack", ds[0]["id"].as_str().unwrap()),
            json!({"generation": ds[0]["generation"]}),
        )
        .await;
    assert_eq!(route["state"], "retrying");
    // The post-wait attempt fails the same way: no second wait this cycle.
    let answer = api.fail(&route, usage_limit_in(120)).await;
    assert_eq!(answer["decision"]["kind"], "stop");
    assert_eq!(answer["route"]["state"], "action_required");
    assert_eq!(answer["route"]["candidate"]["label"], "Claude");
}

/// Scenario 3: The same reset six hours out with a five-minute maximum is neither
/// shortened nor waited for: retry (or the exhausted outcome) instead.
async fn far_reset_is_not_shortened(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", skip_now(), policy(2, 30, 300, "skip")),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = api.route(&p, "workflow").await;
    let answer = api.fail(&route, usage_limit_in(6 * 3600)).await;
    assert_eq!(answer["decision"]["kind"], "retry");
    assert_eq!(answer["route"]["pending"]["kind"], "retry");
    assert_eq!(
        answer["route"]["pending"]["deadline"],
        "2026-11-30T12:00:30Z"
    );

    let p = api
        .profile(&[
            ("Claude", skip_now(), policy(0, 0, 300, "skip")),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = api.route(&p, "workflow").await;
    let answer = api.fail(&route, usage_limit_in(6 * 3600)).await;
    assert_eq!(answer["decision"]["kind"], "skip");
    assert_eq!(answer["route"]["state"], "switching");
}

/// Scenario 4: Exhausted with skip and another candidate eligible: the same logical
/// route advances to it, and reports for the new invocation count.
async fn skip_advances_the_same_route(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", skip_now(), skip_now()),
            ("Codex", policy(1, 5, 0, "stop"), skip_now()),
        ])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let answer = api.fail(&route, overloaded()).await;
    assert_eq!(answer["route"]["state"], "switching");
    assert_eq!(
        answer["route"]["excluded"],
        json!([route["candidate"]["id"]])
    );
    let ds = api.claim(&id).await;
    assert_eq!((ds.len(), ds[0]["reason"].as_str()), (1, Some("switch")));
    assert_eq!(ds[0]["candidate"]["label"], "Codex");
    assert_eq!(ds[0]["invocation_id"], answer["route"]["invocation_id"]);
    let route = api
        .post_ok(
            &format!("/api/v1/dispatches/{}/ack", ds[0]["id"].as_str().unwrap()),
            json!({"generation": ds[0]["generation"]}),
        )
        .await;
    assert_eq!(route["state"], "active");
    assert_eq!(route["candidate"]["index"], 1);
    // Codex's own policy applies to its failures.
    let answer = api.fail(&route, overloaded()).await;
    assert_eq!(answer["decision"]["kind"], "retry");
    // A success starts a new cycle: the exclusion is lifted.
    api.advance(5.0).await;
    let route = api.deliver(&id).await;
    api.post_ok(
        &format!("/api/v1/routes/{id}/effects"),
        json!({"generation": route["generation"], "invocation_id": route["invocation_id"], "prompt_generation": route["prompt_generation"], "kind": "agent_message_chunk"}),
    )
    .await;
    let ok = api
        .post_ok(
            &format!("/api/v1/routes/{id}/success"),
            json!({"generation": route["generation"], "invocation_id": route["invocation_id"], "prompt_generation": route["prompt_generation"]}),
        )
        .await;
    assert_eq!(ok["state"], "active");
    assert_eq!(ok["excluded"], json!([]));
    assert_eq!(ok["cycle"], 2);
    // The next prompt is a new invocation: its failures are judged afresh
    // (the output of the succeeded one does not make them unsafe).
    assert_ne!(ok["invocation_id"], route["invocation_id"]);
    assert_eq!(ok["prompt_generation"], 2);
    // It goes to the preferred candidate, eligible again (failback), whose
    // policy judges its failures: Claude skips, and Codex is not excluded.
    assert_eq!(ok["candidate"]["label"], "Claude");
    let answer = api.fail(&ok, overloaded()).await;
    assert_eq!(answer["decision"]["kind"], "skip");
    assert_eq!(answer["route"]["candidate"]["label"], "Codex");
}

/// Scenario 5: No retry, no wait, stop: exhausted credits stop the route for a
/// person without trying another provider.
async fn credits_exhausted_with_stop_needs_a_person(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", skip_now(), policy(0, 0, 0, "stop")),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = api.route(&p, "office").await;
    let id = route["id"].as_str().unwrap().to_string();
    let answer = api
        .fail(
            &route,
            json!([{"kind": "http", "status": 400, "headers": {}, "body": "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.\"}}"}]),
        )
        .await;
    assert_eq!(answer["classification"]["class"], "hard");
    assert_eq!(answer["decision"]["kind"], "stop");
    assert_eq!(answer["route"]["state"], "action_required");
    assert_eq!(answer["route"]["candidate"]["label"], "Claude");
    assert!(
        api.claim(&id).await.is_empty(),
        "no other provider is tried"
    );
}

/// Scenario 6: An unknown error stops automatic recovery and keeps only bounded,
/// sanitised evidence for a future fixture.
async fn unknown_errors_stop_and_keep_only_sanitised_evidence(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 5, 0, "skip"), policy(3, 5, 0, "skip")),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let secret = "sk-ant-api03-SECRETSECRETSECRETSECRETSECRETSECRET";
    let weird = format!(
        "the flux capacitor desynchronised while holding key {secret} for ops@example.com {}",
        "x".repeat(2000)
    );
    let answer = api
        .fail(&route, json!([{"kind": "stderr", "lines": [weird]}]))
        .await;
    assert_eq!(answer["classification"]["class"], "unclassified");
    assert_eq!(answer["decision"]["kind"], "unclassified");
    assert_eq!(answer["route"]["state"], "action_required");
    assert_eq!(
        answer["route"]["last_failure"]["safe_cause"],
        "Unrecognised error"
    );
    let unknown = api.get("/api/v1/catalogue/unknown").await;
    let text = unknown.to_string();
    assert!(text.contains("flux capacitor"));
    assert!(!text.contains(secret) && !text.contains("ops@example.com"));
    let history = api.attempts(&id).await;
    assert!(history[0]["safe_excerpt"].as_str().unwrap().chars().count() <= 240);
    assert!(
        !api.snapshot(&id)
            .await
            .to_string()
            .contains("flux capacitor"),
        "snapshots carry no provider text"
    );
}

/// Scenario 7: A failure after tool activity stops for a person whatever the policy says.
async fn tool_activity_overrides_the_policy(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 5, 0, "skip"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    // Effects inside the envelope.
    let route = api.route(&p, "kanban").await;
    let mut items = vec![
        json!({"kind": "acp_update", "update": "tool_call", "toolCallId": "t1", "title": "Edit file"}),
    ];
    items.extend(overloaded().as_array().unwrap().iter().cloned());
    let answer = api.fail(&route, Value::Array(items)).await;
    assert_eq!(answer["decision"]["kind"], "effect_unsafe");
    assert_eq!(answer["route"]["state"], "action_required");
    assert_eq!(answer["route"]["reason"], "effect_unsafe");
    // Effects reported separately.
    let route = api.route(&p, "utility").await;
    let id = route["id"].as_str().unwrap();
    assert!(route["invocation_id"]
        .as_str()
        .unwrap()
        .starts_with("utility_"));
    api.post_ok(
        &format!("/api/v1/routes/{id}/effects"),
        json!({"generation": route["generation"], "invocation_id": route["invocation_id"], "prompt_generation": route["prompt_generation"], "kind": "partial_result"}),
    )
    .await;
    let answer = api.fail(&route, overloaded()).await;
    assert_eq!(answer["decision"]["kind"], "effect_unsafe");
    assert!(api.claim(id).await.is_empty());
}

/// Scenario 8: Kanban and Office on the same profile and the same classified,
/// effect-safe error get the same transition.
async fn kanban_and_office_get_the_same_transition(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(2, 7, 0, "stop"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let mut seen = Vec::new();
    for caller in ["kanban", "office"] {
        let route = api.route(&p, caller).await;
        let answer = api.fail(&route, overloaded()).await;
        let r = &answer["route"];
        seen.push((
            answer["decision"].clone(),
            r["state"].clone(),
            r["pending"].clone(),
            r["generation"].clone(),
        ));
    }
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0].1, "retry_wait");
}

/// Stale reports change nothing; manual actions are fenced and cancel is idempotent.
async fn stale_reports_and_fenced_actions(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 5, 0, "skip"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let answer = api.fail(&route, overloaded()).await;
    let waiting = answer["route"].clone();
    // The same report again names an old generation: stale, unchanged.
    let again = api.fail(&route, overloaded()).await;
    assert_eq!(again["decision"]["kind"], "stale");
    assert_eq!(again["route"]["generation"], waiting["generation"]);
    assert_eq!(api.attempts(&id).await.len(), 1);

    let (st, body) = api
        .post(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "cancel", "expected_generation": route["generation"]}),
        )
        .await;
    assert_eq!(st, 409);
    assert_eq!(body["error"], "stale_generation");
    assert_eq!(body["route"]["state"], "retry_wait");
    let cancelled = api
        .post_ok(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "cancel", "expected_generation": waiting["generation"]}),
        )
        .await;
    assert_eq!(cancelled["state"], "action_required");
    assert_eq!(cancelled["pending"], Value::Null);
    let repeat = api
        .post_ok(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "cancel", "expected_generation": waiting["generation"]}),
        )
        .await;
    assert_eq!(repeat["state"], "action_required");
    assert_eq!(repeat["generation"], cancelled["generation"]);
    // The cancelled wait never fires.
    api.advance(60.0).await;
    assert!(api.claim(&id).await.is_empty());
    // Retry now from manual recovery starts a new cycle on the same candidate.
    let retried = api
        .post_ok(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "retry_now", "expected_generation": cancelled["generation"]}),
        )
        .await;
    assert_eq!(retried["state"], "retrying");
    assert_eq!(retried["cycle"], 2);
    assert_eq!(api.claim(&id).await.len(), 1);
    // Invalid in this state: 409 with the route.
    let (st, body) = api
        .post(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "skip_now", "expected_generation": retried["generation"]}),
        )
        .await;
    assert_eq!((st, body["error"].as_str()), (409, Some("invalid_action")));
    // Bad input is a 4xx naming the field.
    let (st, body) = api
        .post(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "explode", "expected_generation": 1}),
        )
        .await;
    assert_eq!(st, 422);
    assert_eq!(body["errors"][0]["field"], "action");
    let (st, _) = api
        .post(
            "/api/v1/routes/nope/actions",
            json!({"action": "cancel", "expected_generation": 1}),
        )
        .await;
    assert_eq!(st, 404);
}

/// Skip now while waiting switches at once; a profile edit never touches a
/// pending schedule.
async fn skip_now_and_profile_edits(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 60, 0, "stop"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let waiting = api.fail(&route, overloaded()).await["route"].clone();
    // Edit the profile: 1 retry from 1 s. The pending 60 s wait is untouched.
    let mut profile = api.get(&format!("/api/v1/profiles/{p}")).await;
    profile["candidates"][0]["policy"]["transient"] = policy(1, 1, 0, "skip");
    let (st, _) = api
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/profiles/{p}"),
            Some(profile),
        )
        .await;
    assert_eq!(st, 200);
    assert_eq!(api.snapshot(&id).await["pending"], waiting["pending"]);
    api.advance(30.0).await;
    assert!(api.claim(&id).await.is_empty());
    let skipped = api
        .post_ok(
            &format!("/api/v1/routes/{id}/actions"),
            json!({"action": "skip_now", "expected_generation": waiting["generation"]}),
        )
        .await;
    assert_eq!(skipped["state"], "switching");
    assert_eq!(skipped["candidate"]["label"], "Codex");
    let ds = api.claim(&id).await;
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0]["reason"], "switch");
    api.advance(60.0).await;
    assert!(
        api.claim(&id).await.is_empty(),
        "the skipped wait never fires"
    );
}

on_both_engines!(
    capacity_error_retries_5_10_20_then_applies_the_outcome,
    near_reset_is_waited_for_then_retried_once,
    far_reset_is_not_shortened,
    skip_advances_the_same_route,
    credits_exhausted_with_stop_needs_a_person,
    unknown_errors_stop_and_keep_only_sanitised_evidence,
    tool_activity_overrides_the_policy,
    kanban_and_office_get_the_same_transition,
    stale_reports_and_fenced_actions,
    skip_now_and_profile_edits,
);
