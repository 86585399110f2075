//! The core's safety rules, tried as a caller would (HTTP API, test clock),
//! on SQLite and PostgreSQL: the gate fails closed on an unknown boundary,
//! a late effect voids its successor, any route can be stopped, the policy
//! bounds every wait a circuit imposes, and a held candidate is waited for
//! instead of given up on.

use crate::support::{overloaded, policy, usage_limit_in, Api, Engine, TestServer};
use serde_json::{json, Value};

fn skip_now() -> Value {
    policy(0, 0, 0, "skip")
}

/// A candidate on a named provider (and account), so circuits can name it.
fn candidate(label: &str, provider: &str, account: Option<&str>, t: Value, h: Value) -> Value {
    let mut c = json!({"label": label, "agent": "claude-code", "provider_id": provider,
        "profile_ref": label.to_lowercase().replace(' ', "-"),
        "policy": {"version": 1, "transient": t, "hard": h}});
    if let Some(a) = account {
        c["account_ref"] = json!(a);
    }
    c
}

async fn profile_of(api: &Api, name: &str, candidates: Vec<Value>) -> String {
    let p = api
        .post_ok(
            "/api/v1/profiles",
            json!({"name": name, "candidates": candidates}),
        )
        .await;
    p["id"].as_str().unwrap().to_string()
}

/// A failure report of the route's current invocation with `phase` as
/// given (`None`: no phase at all).
async fn fail_in(api: &Api, route: &Value, phase: Option<&str>, items: Value) -> Value {
    let id = route["id"].as_str().unwrap();
    let mut body = json!({
        "generation": route["generation"], "invocation_id": route["invocation_id"],
        "prompt_generation": route["prompt_generation"],
        "agent": "claude-code", "provider_id": "anthropic", "items": items
    });
    if let Some(p) = phase {
        body["phase"] = json!(p);
    }
    api.post_ok(&format!("/api/v1/routes/{id}/failures"), body)
        .await
}

async fn act(api: &Api, route: &Value, action: &str) -> (u16, Value) {
    let id = route["id"].as_str().unwrap();
    api.post(
        &format!("/api/v1/routes/{id}/actions"),
        json!({"action": action, "expected_generation": route["generation"]}),
    )
    .await
}

async fn effect(api: &Api, id: &str, identity: &Value, kind: &str) -> (u16, Value) {
    api.post(
        &format!("/api/v1/routes/{id}/effects"),
        json!({"generation": identity["generation"], "invocation_id": identity["invocation_id"],
               "prompt_generation": identity["prompt_generation"], "kind": kind}),
    )
    .await
}

/// 1. A failure whose phase does not place it before any result is not
///    recovered from automatically, and says why.
async fn an_unknown_or_late_boundary_fails_closed(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 5, 0, "skip"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    for (phase, reason) in [
        (None, "boundary_unknown"),
        (Some("stream"), "output_started"),
        (Some("teardown"), "at_teardown"),
    ] {
        let route = api.route(&p, "kanban").await;
        let id = route["id"].as_str().unwrap();
        let answer = fail_in(&api, &route, phase, overloaded()).await;
        assert_eq!(answer["decision"]["kind"], "effect_unsafe", "{phase:?}");
        assert_eq!(answer["decision"]["unsafe_reason"], reason, "{phase:?}");
        assert_eq!(answer["route"]["state"], "action_required");
        assert_eq!(answer["route"]["reason"], "effect_unsafe");
        assert_eq!(
            answer["route"]["last_failure"]["unsafe_reason"], reason,
            "{phase:?}"
        );
        let history = api.attempts(id).await;
        assert_eq!(history[0]["decision"], "effect_unsafe");
        assert_eq!(history[0]["unsafe_reason"], reason, "{phase:?}");
        api.advance(60.0).await;
        assert!(api.claim(id).await.is_empty(), "{phase:?}: nothing retried");
    }
    // Each phase before any result still recovers.
    for phase in ["launch", "session_init", "prompt"] {
        let route = api.route(&p, "kanban").await;
        let answer = fail_in(&api, &route, Some(phase), overloaded()).await;
        assert_eq!(answer["decision"]["kind"], "retry", "{phase}");
        assert!(answer["decision"].get("unsafe_reason").is_none());
    }
}

/// 2. Output of the failed invocation that arrives after its retry fell
///    due withdraws the retry and stops the route; once the retry was
///    delivered it is recorded for a person to see.
async fn a_late_effect_voids_its_successor(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), skip_now())])
        .await;

    // Pending: the retry fell due and nobody claimed it yet.
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    api.advance(5.0).await;
    assert_eq!(api.snapshot(&id).await["state"], "retrying");
    let (st, stopped) = effect(&api, &id, &route, "agent_message_chunk").await;
    assert_eq!(st, 200, "{stopped}");
    assert_eq!(stopped["state"], "action_required");
    assert_eq!(stopped["reason"], "effect_after_failure");
    assert!(api.claim(&id).await.is_empty(), "no dispatch handed out");
    let history = api.attempts(&id).await;
    assert_eq!(history[0]["decision"], "late_effect");
    assert_eq!(history[0]["late_effect"], "agent_message_chunk");
    assert_eq!(history[0]["invocation_id"], route["invocation_id"]);

    // Claimed, not yet acknowledged: withdrawn, and its ack refused.
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    api.advance(5.0).await;
    let claimed = api.claim(&id).await;
    assert_eq!(claimed.len(), 1);
    let (_, stopped) = effect(&api, &id, &route, "tool_call").await;
    assert_eq!(stopped["reason"], "effect_after_failure");
    let (st, refused) = api.ack(&claimed[0]).await;
    assert_eq!(st, 409, "{refused}");

    // Acknowledged: the work may have run twice; recorded, not stopped.
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    api.advance(5.0).await;
    let delivered = api.deliver(&id).await;
    assert_eq!(delivered["state"], "retrying");
    let (st, kept) = effect(&api, &id, &route, "tool_call").await;
    assert_eq!(st, 200);
    assert_eq!(kept["state"], "retrying");
    assert_eq!(kept["generation"], delivered["generation"]);
    let history = api.attempts(&id).await;
    assert_eq!(history[0]["decision"], "late_effect");
    assert_eq!(
        history[0]["outcome"],
        json!({"kind": "now", "state": "retrying"})
    );
    // The retry's own reports still count.
    let answer = api.fail(&kept, overloaded()).await;
    assert_eq!(answer["decision"]["kind"], "retry");
}

/// 3. Stop works from `retrying`, `switching` and `active`; the withdrawn
///    dispatch is never handed out.
async fn any_route_can_be_stopped(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 5, 0, "skip"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    // Retrying, dispatch pending.
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    api.advance(5.0).await;
    let retrying = api.snapshot(&id).await;
    assert_eq!(retrying["state"], "retrying");
    let (st, stopped) = act(&api, &retrying, "stop").await;
    assert_eq!(st, 200, "{stopped}");
    assert_eq!(stopped["state"], "action_required");
    assert_eq!(stopped["reason"], "stopped_by_user");
    api.advance(60.0).await;
    assert!(api.claim(&id).await.is_empty());

    // Switching, dispatch pending.
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let skip = json!([{"kind": "http", "status": 401, "headers": {},
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}"}]);
    let switching = api.fail(&route, skip).await["route"].clone();
    assert_eq!(switching["state"], "switching");
    let (st, cancelled) = act(&api, &switching, "cancel").await;
    assert_eq!(st, 200, "{cancelled}");
    assert_eq!(cancelled["reason"], "cancelled_by_user");
    assert!(api.claim(&id).await.is_empty());

    // Active.
    let route = api.route(&p, "kanban").await;
    let (st, stopped) = act(&api, &route, "stop").await;
    assert_eq!(st, 200);
    assert_eq!(stopped["state"], "action_required");
    let (st, again) = act(&api, &route, "stop").await;
    assert_eq!(st, 200, "stopping a stopped route is idempotent");
    assert_eq!(again["generation"], stopped["generation"]);
}

/// 3b. A dispatch nobody claims stops its route after the dispatch
///     timeout, and `/metrics` shows its age meanwhile.
async fn an_unclaimed_dispatch_stops_its_route(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), skip_now())])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    api.advance(5.0).await;
    api.advance(600.0).await;
    let metrics = metrics_text(&api).await;
    assert!(
        metrics
            .lines()
            .any(|l| l == "kandev_dispatch_oldest_unclaimed_seconds 600"),
        "{metrics}"
    );
    assert_eq!(api.snapshot(&id).await["state"], "retrying");
    api.advance(1_201.0).await;
    let stopped = api.snapshot(&id).await;
    assert_eq!(stopped["state"], "action_required");
    assert_eq!(stopped["reason"], "dispatch_not_claimed");
    assert!(api.claim(&id).await.is_empty());
    let metrics = metrics_text(&api).await;
    assert!(metrics
        .lines()
        .any(|l| l == "kandev_dispatch_oldest_unclaimed_seconds 0"));

    // Acknowledged and never reported: its age is shown.
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    api.advance(5.0).await;
    api.deliver(&id).await;
    api.advance(90.0).await;
    let metrics = metrics_text(&api).await;
    assert!(
        metrics
            .lines()
            .any(|l| l == "kandev_attempt_oldest_unreported_seconds 90"),
        "{metrics}"
    );
}

async fn metrics_text(api: &Api) -> String {
    let (st, v) = api.call(reqwest::Method::GET, "/metrics", None).await;
    assert_eq!(st, 200);
    v.as_str().unwrap_or_default().to_string()
}

/// 4. Another route's usage limit holds the shared account for 6 hours; a
///    policy of "3 retries from 5 s, then skip" waits at most 35 s, so it
///    skips at once, and says a shared hold decided.
async fn the_policy_bounds_a_circuits_hold(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = profile_of(
        &api,
        "bounded",
        vec![
            candidate(
                "Claude",
                "anthropic",
                Some("team-b"),
                policy(3, 5, 0, "skip"),
                skip_now(),
            ),
            candidate("Codex", "openai", None, skip_now(), skip_now()),
        ],
    )
    .await;
    let route = api.route(&p, "kanban").await;
    assert_eq!(route["candidate"]["label"], "Claude");
    // Then another route's usage limit on the same account, 6 hours away.
    let waits = policy(0, 0, 7 * 24 * 3600, "stop");
    let opener = profile_of(
        &api,
        "opener",
        vec![candidate(
            "Claude B",
            "anthropic",
            Some("team-b"),
            waits.clone(),
            waits,
        )],
    )
    .await;
    let other = api.route(&opener, "office").await;
    let held = api.fail(&other, usage_limit_in(6 * 3600)).await;
    assert_eq!(held["decision"]["kind"], "wait_for_reset", "{held}");
    // This route's 529 would retry in 5, 10, 20 s: the 6-hour hold is
    // beyond that, so it skips now.
    let answer = api.fail(&route, overloaded()).await;
    assert_eq!(answer["decision"]["kind"], "skip", "{answer}");
    assert_eq!(answer["decision"]["held_by"]["scope"], "account");
    assert_eq!(
        answer["decision"]["held_by"]["resource"],
        "anthropic/team-b"
    );
    assert_eq!(answer["route"]["state"], "switching");
    assert_eq!(answer["route"]["candidate"]["label"], "Codex");
    assert_eq!(
        answer["route"]["last_failure"]["held_by"]["resource"],
        "anthropic/team-b"
    );
    let id = route["id"].as_str().unwrap();
    let history = api.attempts(id).await;
    assert_eq!(history[0]["decision"], "skip");
    assert_eq!(history[0]["held_by"]["resource"], "anthropic/team-b");
    assert_eq!(api.claim(id).await.len(), 1, "the switch goes out at once");
}

/// 5. A skip onto a candidate another route's 529 put on hold seconds ago
///    waits for the hold to end, then dispatches to it once.
async fn a_held_candidate_is_waited_for(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let retry = policy(3, 5, 0, "skip");
    // Another route's 529 pauses Anthropic for 30 s. That route stops (it
    // has nowhere to go), so it does not hold the probe when the pause
    // ends: the switch below takes it.
    let claude_only = profile_of(
        &api,
        "claude",
        vec![candidate(
            "Claude",
            "anthropic",
            None,
            skip_now(),
            skip_now(),
        )],
    )
    .await;
    let other = api.route(&claude_only, "office").await;
    let stopped = api.fail(&other, overloaded()).await;
    assert_eq!(stopped["route"]["reason"], "no_eligible_candidate");
    let p = profile_of(
        &api,
        "switch",
        vec![
            candidate("Gemini", "google", None, skip_now(), skip_now()),
            candidate("Claude", "anthropic", None, retry, skip_now()),
        ],
    )
    .await;
    let route = api.route(&p, "utility").await;
    assert_eq!(route["candidate"]["label"], "Gemini");
    let id = route["id"].as_str().unwrap().to_string();
    let answer = api.fail(&route, overloaded()).await;
    assert_eq!(answer["decision"]["kind"], "skip");
    let waiting = &answer["route"];
    assert_eq!(waiting["state"], "switching", "{answer}");
    assert_eq!(waiting["candidate"]["label"], "Claude");
    assert_eq!(waiting["pending"]["kind"], "switch");
    assert_eq!(waiting["pending"]["circuit"]["resource"], "anthropic");
    assert!(api.claim(&id).await.is_empty(), "held: nothing yet");
    api.advance(31.0).await;
    let ds = api.claim(&id).await;
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0]["reason"], "switch");
    assert_eq!(ds[0]["candidate"]["label"], "Claude");
    api.advance(60.0).await;
    assert!(api.claim(&id).await.is_empty(), "dispatched once");
    let (st, acked) = api.ack(&ds[0]).await;
    assert_eq!(st, 200, "{acked}");
    assert_eq!(acked["state"], "active");

    // Held beyond what the server waits (15 min by default): a stop that
    // says so.
    let waits = policy(0, 0, 7 * 24 * 3600, "stop");
    let long = profile_of(
        &api,
        "long",
        vec![candidate(
            "Claude Z",
            "anthropic",
            Some("team-z"),
            waits.clone(),
            waits,
        )],
    )
    .await;
    let holder = api.route(&long, "office").await;
    api.fail(&holder, usage_limit_in(6 * 3600)).await;
    let p = profile_of(
        &api,
        "all-held",
        vec![
            candidate("Gemini", "google", Some("g"), skip_now(), skip_now()),
            candidate(
                "Claude Z",
                "anthropic",
                Some("team-z"),
                skip_now(),
                skip_now(),
            ),
        ],
    )
    .await;
    let route = api.route(&p, "utility").await;
    assert_eq!(route["candidate"]["label"], "Gemini");
    let answer = api.fail(&route, overloaded()).await;
    assert_eq!(answer["route"]["state"], "action_required", "{answer}");
    assert_eq!(answer["route"]["reason"], "all_candidates_held");
    assert_eq!(
        answer["route"]["last_failure"]["held_by"]["resource"],
        "anthropic/team-z"
    );
}

/// 1b. The resumable exception: after output, a report that names the
///     provider session the effects were reported under and the turn to
///     resume gets a retry on the same candidate whose dispatch says to
///     resume — never a switch, and never on a session nobody reported.
async fn a_resumable_failure_resumes_its_session(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(2, 5, 0, "skip"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let report = |route: &Value, session: &str| {
        let mut body = json!({
            "generation": route["generation"], "invocation_id": route["invocation_id"],
            "prompt_generation": route["prompt_generation"], "phase": "stream",
            "agent": "claude-code", "provider_id": "anthropic", "items": overloaded(),
            "resumable": {"provider_session_id": session, "generation": 4}
        });
        body["route_id"] = route["id"].clone();
        body
    };
    let with_effect = |route: Value| {
        let api = &api;
        async move {
            let id = route["id"].as_str().unwrap();
            api.post_ok(
                &format!("/api/v1/routes/{id}/effects"),
                json!({"generation": route["generation"], "invocation_id": route["invocation_id"],
                       "prompt_generation": route["prompt_generation"], "kind": "agent_message_chunk",
                       "provider_session_id": "sess-7"}),
            )
            .await;
            route
        }
    };
    let route = with_effect(api.route(&p, "kanban").await).await;
    let id = route["id"].as_str().unwrap().to_string();
    let answer = api
        .post_ok(
            &format!("/api/v1/routes/{id}/failures"),
            report(&route, "sess-7"),
        )
        .await;
    assert_eq!(answer["decision"]["kind"], "retry", "{answer}");
    assert_eq!(
        answer["route"]["pending"]["resume"],
        json!({"provider_session_id": "sess-7", "generation": 4})
    );
    api.advance(5.0).await;
    let ds = api.claim(&id).await;
    assert_eq!(ds.len(), 1);
    assert_eq!(
        ds[0]["resume"],
        json!({"provider_session_id": "sess-7", "generation": 4})
    );

    // Another session than the effects named: unsafe, nothing resumes.
    let route = with_effect(api.route(&p, "kanban").await).await;
    let id = route["id"].as_str().unwrap().to_string();
    let answer = api
        .post_ok(
            &format!("/api/v1/routes/{id}/failures"),
            report(&route, "sess-other"),
        )
        .await;
    assert_eq!(answer["decision"]["kind"], "effect_unsafe");
    assert_eq!(answer["decision"]["unsafe_reason"], "effects_reported");

    // Resumable, but the policy says skip: another candidate could only
    // repeat the prompt.
    let skipper = api
        .profile(&[
            ("Claude", skip_now(), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let route = with_effect(api.route(&skipper, "kanban").await).await;
    let id = route["id"].as_str().unwrap().to_string();
    let answer = api
        .post_ok(
            &format!("/api/v1/routes/{id}/failures"),
            report(&route, "sess-7"),
        )
        .await;
    assert_eq!(answer["decision"]["kind"], "effect_unsafe");
    assert_eq!(
        answer["decision"]["unsafe_reason"],
        "resume_needs_same_candidate"
    );
    assert!(api.claim(&id).await.is_empty());

    // A plain retry's dispatch says nothing about resuming.
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    api.advance(5.0).await;
    let ds = api.claim(&id).await;
    assert!(ds[0].get("resume").is_none(), "{}", ds[0]);
}

on_both_engines!(
    an_unknown_or_late_boundary_fails_closed,
    a_resumable_failure_resumes_its_session,
    a_late_effect_voids_its_successor,
    any_route_can_be_stopped,
    an_unclaimed_dispatch_stops_its_route,
    the_policy_bounds_a_circuits_hold,
    a_held_candidate_is_waited_for,
);
