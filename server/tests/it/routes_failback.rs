//! Failback: a route that skipped to a fallback returns to the preferred
//! candidate at its next invocation after a success, once the preferred
//! one is eligible again — never while its circuit holds it, never in the
//! middle of an invocation, a few routes at a time after a probe closed
//! the circuit — and a profile that prefers `stay` never returns. On
//! SQLite and PostgreSQL, on the test clock.

use crate::support::{policy, usage_limit_in, Api, Engine, TestServer};
use serde_json::{json, Value};
use server::store::ProfileRow;

/// Claude (Anthropic) then Codex (OpenAI), both skipping at once;
/// `prefer` as given (`None`: the default).
async fn two_candidates(api: &Api, prefer: Option<&str>) -> String {
    let skip = policy(0, 0, 0, "skip");
    let doc = json!({"version": 1, "transient": skip, "hard": skip});
    let mut body = json!({"name": "failback", "candidates": [
        {"label": "Claude Code", "agent": "claude-code", "provider_id": "anthropic",
         "account_ref": "team-a", "policy": doc},
        {"label": "Codex", "agent": "codex", "provider_id": "openai",
         "account_ref": "team-b", "policy": doc},
    ]});
    if let Some(p) = prefer {
        body["prefer"] = json!(p);
    }
    let p = api.post_ok("/api/v1/profiles", body).await;
    assert_eq!(p["prefer"], prefer.unwrap_or("first_eligible"));
    p["id"].as_str().unwrap().to_string()
}

/// Reports the route's current invocation as a success; answers the route.
async fn succeed(api: &Api, route: &Value) -> Value {
    let id = route["id"].as_str().unwrap();
    api.post_ok(
        &format!("/api/v1/routes/{id}/success"),
        json!({"generation": route["generation"], "invocation_id": route["invocation_id"],
            "prompt_generation": route["prompt_generation"]}),
    )
    .await
}

fn label(route: &Value) -> &str {
    route["candidate"]["label"].as_str().unwrap()
}

async fn returns(api: &Api, route: &Value) -> Vec<Value> {
    api.attempts(route["id"].as_str().unwrap())
        .await
        .into_iter()
        .filter(|a| a["decision"] == "returned")
        .collect()
}

/// A route on Claude hits its usage limit (reset in 10 minutes), skips
/// to Codex and is delivered there.
async fn on_codex_after_a_usage_limit(api: &Api, profile: &str) -> Value {
    let route = api.route(profile, "kanban").await;
    let answer = api.fail(&route, usage_limit_in(600)).await;
    assert_eq!(answer["decision"]["kind"], "skip", "{answer}");
    let route = api.deliver(route["id"].as_str().unwrap()).await;
    assert_eq!(label(&route), "Codex");
    route
}

async fn returns_once_after_the_reset_and_the_probe(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = two_candidates(&api, None).await;
    let route = on_codex_after_a_usage_limit(&api, &p).await;
    // Succeeds on Codex, prompts again before the reset: stays on Codex.
    let route = succeed(&api, &route).await;
    assert_eq!(label(&route), "Codex");
    let route = succeed(&api, &route).await;
    assert_eq!(label(&route), "Codex");
    assert!(returns(&api, &route).await.is_empty());
    // After the reset, its next invocation goes back to Claude (the probe).
    api.advance(601.0).await;
    let before = route["invocation_id"].clone();
    let back = succeed(&api, &route).await;
    assert_eq!(label(&back), "Claude Code");
    assert_eq!(back["state"], "active");
    assert_ne!(
        back["invocation_id"], before,
        "a new invocation, not a moved one"
    );
    let circuits = api.get("/api/v1/circuits").await.to_string();
    assert!(circuits.contains("probing"), "{circuits}");
    // The probe succeeds: the circuit closes, the route stays, once.
    let route = succeed(&api, &back).await;
    assert_eq!(label(&route), "Claude Code");
    let route = succeed(&api, &route).await;
    assert_eq!(label(&route), "Claude Code");
    let lines = returns(&api, &route).await;
    assert_eq!(lines.len(), 1, "{lines:?}");
    let line = &lines[0];
    assert_eq!(line["candidate"]["label"], "Claude Code");
    assert_eq!(line["returned"]["from"]["label"], "Codex");
    assert_eq!(line["returned"]["code"], "quota_limited");
    let attempt: domain::route::Attempt = serde_json::from_value(line.clone()).unwrap();
    let words = domain::words::decision_words(&attempt);
    assert!(
        words.starts_with("Back to Claude Code from Codex: Usage limit reached ended at"),
        "{words}"
    );
}

async fn stay_never_returns(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = two_candidates(&api, Some("stay")).await;
    let mut route = on_codex_after_a_usage_limit(&api, &p).await;
    api.advance(601.0).await;
    for _ in 0..3 {
        route = succeed(&api, &route).await;
        assert_eq!(label(&route), "Codex");
    }
    assert!(returns(&api, &route).await.is_empty());
    // A profile stored before the preference existed keeps `stay`.
    s.db.store
        .insert_profile(
            &ProfileRow {
                id: "older".into(),
                name: "Older".into(),
                revision: 1,
                document: json!([{"id": "a", "label": "A", "agent": "claude-code",
                    "provider_id": "", "model_id": "", "profile_ref": ""}])
                .to_string(),
                created_at_ms: 0,
                updated_at_ms: 0,
            },
            r#"{"kind":"timer"}"#,
        )
        .await
        .unwrap();
    let older = api.get("/api/v1/profiles/older").await;
    assert_eq!(older["prefer"], "stay");
    // Until edited: a write without `prefer` takes the default.
    let (st, edited) = api
        .call(
            reqwest::Method::PUT,
            "/api/v1/profiles/older",
            Some(json!({"name": "Older", "revision": 1, "candidates": older["candidates"]})),
        )
        .await;
    assert_eq!(st, 200, "{edited}");
    assert_eq!(edited["prefer"], "first_eligible");
    let (st, bad) = api
        .post(
            "/api/v1/profiles/validate",
            json!({"name": "x", "prefer": "sometimes", "candidates": older["candidates"]}),
        )
        .await;
    assert_eq!(st, 422, "{bad}");
    assert_eq!(bad["errors"][0]["field"], "prefer", "{bad}");
}

/// Fifty routes on the fallback return gradually once the probe closed
/// the circuit: a few a second, none twice, none before its own success.
async fn fifty_routes_return_gradually(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = two_candidates(&api, None).await;
    let first = on_codex_after_a_usage_limit(&api, &p).await;
    let mut routes = vec![first];
    // Opened while Claude's circuit holds it: they start on Codex.
    for _ in 1..50 {
        let r = api.route(&p, "kanban").await;
        assert_eq!(label(&r), "Codex");
        routes.push(r);
    }
    for r in routes.iter_mut() {
        *r = succeed(&api, r).await;
        assert_eq!(label(r), "Codex", "before the reset");
    }
    api.advance(601.0).await;
    // One route's next invocation is the probe; the others wait for it.
    let mut probe = None;
    for r in routes.iter_mut() {
        *r = succeed(&api, r).await;
        if label(r) == "Claude Code" {
            assert!(probe.is_none(), "only one probe");
            probe = Some(r["id"].clone());
        }
    }
    let probe = probe.expect("a probe");
    let probing = routes.iter().position(|r| r["id"] == probe).unwrap();
    routes[probing] = succeed(&api, &routes[probing]).await;
    // Closed: nobody moved without a success of its own.
    for r in &routes {
        let now = api.snapshot(r["id"].as_str().unwrap()).await;
        assert_eq!(now["candidate"], r["candidate"], "moved mid-invocation");
    }
    // Then five a second, at each route's next success.
    let mut back = 1;
    let mut seconds = 0;
    while back < routes.len() {
        let mut this_second = 0;
        for r in routes.iter_mut() {
            if label(r) == "Claude Code" {
                continue;
            }
            *r = succeed(&api, r).await;
            if label(r) == "Claude Code" {
                this_second += 1;
            }
        }
        assert_eq!(this_second, 5.min(routes.len() - back), "second {seconds}");
        back += this_second;
        api.advance(1.0).await;
        seconds += 1;
    }
    assert_eq!(seconds, 10);
    // Everyone's next success keeps them there: none returned twice.
    for r in routes.iter_mut() {
        *r = succeed(&api, r).await;
        assert_eq!(label(r), "Claude Code");
        assert_eq!(returns(&api, r).await.len(), 1);
    }
}

on_both_engines!(
    returns_once_after_the_reset_and_the_probe,
    stay_never_returns,
    fifty_routes_return_gradually,
);
