//! Concrete sessions: `POST /classify` and `POST /policies/evaluate` give
//! the same classifications, timings and decisions as a route's failure
//! report does — one table of the documented scenarios (docs/design.md),
//! each run through both paths on one server — refuse bad input with
//! field errors, need `evidence:submit`, and are rate-limited like
//! failure reports. On SQLite and PostgreSQL.

use crate::support::{overloaded, policy, start_time, usage_limit_in, Api, Engine, TestServer};

use serde_json::{json, Value};
use server::auth::{Access, Permission, Permissions};
use server::clock::Clock;

/// One documented scenario: the failing candidate's class policies, the
/// failure, and what both paths must decide.
struct Scenario {
    name: &'static str,
    transient: Value,
    hard: Value,
    phase: Option<&'static str>,
    items: Value,
    class: &'static str,
    decision: &'static str,
    /// The delay and the deadline (seconds from now) of a wait or retry.
    delay_seconds: Option<u64>,
    deadline_in: Option<i64>,
}

fn skip_now() -> Value {
    policy(0, 0, 0, "skip")
}

fn table() -> Vec<Scenario> {
    let credits = json!([{"kind": "http", "status": 400, "headers": {}, "body": "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.\"}}"}]);
    let mut with_tool = vec![
        json!({"kind": "acp_update", "update": "tool_call", "toolCallId": "t1", "title": "Edit file"}),
    ];
    with_tool.extend(overloaded().as_array().unwrap().iter().cloned());
    vec![
        Scenario {
            name: "a capacity error before output, three retries from 5 s",
            transient: policy(3, 5, 0, "skip"),
            hard: skip_now(),
            phase: Some("prompt"),
            items: overloaded(),
            class: "transient",
            decision: "retry",
            delay_seconds: Some(5),
            deadline_in: Some(5),
        },
        Scenario {
            name: "a trusted reset one minute out, waits of up to five minutes",
            transient: skip_now(),
            hard: policy(0, 0, 300, "stop"),
            phase: Some("prompt"),
            items: usage_limit_in(60),
            class: "hard",
            decision: "wait_for_reset",
            delay_seconds: None,
            deadline_in: Some(60),
        },
        Scenario {
            name: "the same reset six hours out is not shortened",
            transient: skip_now(),
            hard: policy(0, 0, 300, "stop"),
            phase: Some("prompt"),
            items: usage_limit_in(6 * 3600),
            class: "hard",
            decision: "stop",
            delay_seconds: None,
            deadline_in: None,
        },
        Scenario {
            name: "a transient failure with no retry left skips",
            transient: skip_now(),
            hard: skip_now(),
            phase: Some("prompt"),
            items: overloaded(),
            class: "transient",
            decision: "skip",
            delay_seconds: None,
            deadline_in: None,
        },
        Scenario {
            name: "exhausted credits under a hard policy that stops",
            transient: skip_now(),
            hard: policy(0, 0, 0, "stop"),
            phase: Some("prompt"),
            items: credits,
            class: "hard",
            decision: "stop",
            delay_seconds: None,
            deadline_in: None,
        },
        Scenario {
            name: "an unknown string error",
            transient: policy(3, 5, 0, "skip"),
            hard: policy(3, 5, 0, "skip"),
            phase: Some("prompt"),
            items: json!([{"kind": "stderr", "lines": ["the flux capacitor desynchronised"]}]),
            class: "unclassified",
            decision: "unclassified",
            delay_seconds: None,
            deadline_in: None,
        },
        Scenario {
            name: "a failure after tool activity",
            transient: policy(3, 5, 0, "skip"),
            hard: skip_now(),
            phase: Some("prompt"),
            items: Value::Array(with_tool),
            class: "transient",
            decision: "effect_unsafe",
            delay_seconds: None,
            deadline_in: None,
        },
        Scenario {
            name: "a report that does not say its phase",
            transient: policy(3, 5, 0, "skip"),
            hard: skip_now(),
            phase: None,
            items: overloaded(),
            class: "transient",
            decision: "effect_unsafe",
            delay_seconds: None,
            deadline_in: None,
        },
    ]
}

/// The envelope both paths send (the route's adds its identity).
fn evidence(s: &Scenario) -> Value {
    let mut e = json!({"agent": "claude-code", "provider_id": "anthropic", "items": s.items});
    if let Some(phase) = s.phase {
        e["phase"] = json!(phase);
    }
    e
}

fn class_policy_doc(s: &Scenario) -> Value {
    json!({"version": 1, "transient": s.transient, "hard": s.hard})
}

/// The decision's fields both paths answer alike.
fn decided(d: &Value) -> Value {
    json!({"kind": d["kind"], "class": d["class"], "retry_ordinal": d["retry_ordinal"],
        "max_retries": d["max_retries"], "delay_seconds": d["delay_seconds"],
        "deadline": d["deadline"], "unsafe_reason": d["unsafe_reason"]})
}

async fn the_documented_scenarios_decide_alike_on_both_paths(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    for sc in table() {
        // Through a route: a profile whose first candidate has the policy.
        let p = api
            .profile(&[
                ("Claude", sc.transient.clone(), sc.hard.clone()),
                ("Codex", skip_now(), skip_now()),
            ])
            .await;
        let route = api.route(&p, "kanban").await;
        let mut report = evidence(&sc);
        for k in ["generation", "invocation_id", "prompt_generation"] {
            report[k] = route[k].clone();
        }
        let id = route["id"].as_str().unwrap();
        let routed = api
            .post_ok(&format!("/api/v1/routes/{id}/failures"), report)
            .await;
        // Without one: the same policy and evidence.
        let evaluated = api
            .post_ok(
                "/api/v1/policies/evaluate",
                json!({"policy": class_policy_doc(&sc), "evidence": evidence(&sc)}),
            )
            .await;
        let classified = api.post_ok("/api/v1/classify", evidence(&sc)).await;

        let name = sc.name;
        assert_eq!(
            evaluated["classification"], routed["classification"],
            "{name}: the classification"
        );
        assert_eq!(classified, routed["classification"], "{name}: classify");
        assert_eq!(
            decided(&evaluated["decision"]),
            decided(&routed["decision"]),
            "{name}: the decision"
        );
        assert_eq!(routed["classification"]["class"], sc.class, "{name}");
        assert_eq!(routed["decision"]["kind"], sc.decision, "{name}");
        assert_eq!(
            evaluated["decision"]["delay_seconds"].as_u64(),
            sc.delay_seconds,
            "{name}"
        );
        let deadline = evaluated["decision"]["deadline"]
            .as_str()
            .map(|d| d.parse::<chrono::DateTime<chrono::Utc>>().unwrap());
        assert_eq!(
            deadline.map(|d| (d - start_time()).num_seconds()),
            sc.deadline_in,
            "{name}: the deadline"
        );
        let summary = evaluated["decision"]["summary"].as_str().unwrap();
        assert!(!summary.is_empty(), "{name}: a sentence for people");
    }
}

/// The capacity scenario in full: waits of 5, 10 and 20 s, then the
/// exhausted outcome — a route counting its own retries, a concrete
/// session sending back the cycle each answer gave it.
async fn retries_count_alike_through_the_cycle(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 5, 0, "stop"), skip_now()),
            ("Codex", skip_now(), skip_now()),
        ])
        .await;
    let mut route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let doc = json!({"version": 1, "transient": policy(3, 5, 0, "stop"), "hard": skip_now()});
    let concrete = json!({"phase": "prompt", "agent": "claude-code", "provider_id": "anthropic",
        "items": overloaded()});
    let mut cycle = Value::Null;
    let mut routed_kinds = vec![];
    let mut evaluated_kinds = vec![];
    for _ in 0..4 {
        let answer = api.fail(&route, overloaded()).await;
        routed_kinds.push((
            answer["decision"]["kind"].clone(),
            answer["decision"]["delay_seconds"].clone(),
        ));
        let mut body = json!({"policy": doc, "evidence": concrete});
        if !cycle.is_null() {
            body["cycle"] = cycle.clone();
        }
        let evaluated = api.post_ok("/api/v1/policies/evaluate", body).await;
        evaluated_kinds.push((
            evaluated["decision"]["kind"].clone(),
            evaluated["decision"]["delay_seconds"].clone(),
        ));
        cycle = evaluated["cycle"].clone();
        if answer["decision"]["kind"] != "retry" {
            break;
        }
        let delay = answer["decision"]["delay_seconds"].as_f64().unwrap();
        api.advance(delay).await;
        route = api.deliver(&id).await;
    }
    let expected = [
        (json!("retry"), json!(5)),
        (json!("retry"), json!(10)),
        (json!("retry"), json!(20)),
        (json!("stop"), Value::Null),
    ];
    assert_eq!(routed_kinds, expected);
    assert_eq!(evaluated_kinds, expected);
    assert_eq!(cycle["transient"]["retries_used"], 3);
    // A reset wait is used once per cycle.
    let wait = json!({"version": 1, "transient": skip_now(), "hard": policy(0, 0, 300, "stop")});
    let body =
        json!({"policy": wait, "evidence": {"phase": "prompt", "items": usage_limit_in(60)}});
    let first = api.post_ok("/api/v1/policies/evaluate", body.clone()).await;
    assert_eq!(first["decision"]["kind"], "wait_for_reset");
    assert_eq!(first["cycle"]["hard"]["reset_wait_used"], true);
    let mut again = body;
    again["cycle"] = first["cycle"].clone();
    let second = api.post_ok("/api/v1/policies/evaluate", again).await;
    assert_eq!(second["decision"]["kind"], "stop");
}

/// Bad input is refused with field errors (422) or as unreadable (400),
/// and nothing is stored but the unknown log's entry.
async fn bad_input_is_refused_with_field_errors(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let (st, answer) = api
        .post(
            "/api/v1/policies/evaluate",
            json!({
                "policy": {"version": 2, "transient": policy(0, 0, 0, "skip"), "hard": {"retry": {"enabled": true, "max_retries": 11, "initial_interval_seconds": 5}, "wait_for_reset": {"enabled": false}, "on_exhausted": "pause"}},
                "evidence": "a 529",
                "cycle": {"transient": {"retries_used": -1}},
                "route_id": "r"
            }),
        )
        .await;
    assert_eq!(st, 422, "{answer}");
    let mut fields: Vec<&str> = answer["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            "cycle.transient.retries_used",
            "evidence",
            "policy.hard.on_exhausted",
            "policy.hard.retry.max_retries",
            "policy.version",
            "route_id",
        ],
        "{answer}"
    );
    let (st, answer) = api.post("/api/v1/policies/evaluate", json!({})).await;
    assert_eq!(st, 422, "{answer}");
    let (st, answer) = api
        .post("/api/v1/classify", json!(["not", "an", "envelope"]))
        .await;
    assert_eq!(st, 400, "{answer}");
    assert_eq!(answer["error"], "malformed_json", "{answer}");
    // Unrecognised evidence is kept, sanitised, for the catalogue.
    let secret = "sk-ant-api03-SECRETSECRETSECRETSECRETSECRETSECRET";
    let classified = api
        .post_ok(
            "/api/v1/classify",
            json!({"items": [{"kind": "stderr", "lines": [format!("the flux capacitor broke holding {secret}")]}]}),
        )
        .await;
    assert_eq!(classified["class"], "unclassified");
    let unknown = api.get("/api/v1/catalogue/unknown").await.to_string();
    assert!(unknown.contains("flux capacitor"), "{unknown}");
    assert!(!unknown.contains(secret), "{unknown}");
    // No route was opened by any of it.
    assert_eq!(api.get("/api/v1/routes").await, json!([]));
}

/// Both need `evidence:submit` and share evidence reports' rate limit.
async fn need_evidence_submit_and_are_rate_limited(engine: Engine) {
    let db = crate::support::TestDb::new(engine).await;
    let store = db.store.clone();
    let state = server::http::AppState::new(&server::http::Setup {
        evidence_per_minute: 3,
        test_clock: true,
        ..server::http::Setup::new(store.clone(), Clock::manual(start_time()))
    });
    let (addr, _stop, _served) = crate::support::serve(state).await;
    let base = format!("http://{addr}");
    let token = |perms: &'static [Permission], name: &'static str| {
        let store = store.clone();
        async move {
            Access::new(store, Clock::system(), false)
                .create_token(name, Permissions::of(perms))
                .await
                .unwrap()
                .secret
        }
    };
    let reader = Api::with_token(base.clone(), Some(&token(&[], "reader").await));
    let adapter = Api::with_token(
        base.clone(),
        Some(&token(&[Permission::EvidenceSubmit], "adapter").await),
    );
    let envelope = json!({"phase": "prompt", "items": overloaded()});
    let doc = json!({"version": 1, "transient": skip_now(), "hard": skip_now()});
    let evaluate = json!({"policy": doc, "evidence": envelope});
    for (path, body) in [
        ("/api/v1/classify", &envelope),
        ("/api/v1/policies/evaluate", &evaluate),
    ] {
        let (st, answer) = reader.post(path, body.clone()).await;
        assert_eq!((st, &answer["error"]), (403, &json!("forbidden")), "{path}");
    }
    // Three a minute for this token, across both endpoints.
    for (path, body) in [
        ("/api/v1/classify", &envelope),
        ("/api/v1/policies/evaluate", &evaluate),
        ("/api/v1/classify", &envelope),
    ] {
        let (st, answer) = adapter.post(path, body.clone()).await;
        assert_eq!(st, 200, "{path}: {answer}");
    }
    let (st, answer) = adapter.post("/api/v1/policies/evaluate", evaluate).await;
    assert_eq!(st, 429, "{answer}");
}

on_both_engines!(
    the_documented_scenarios_decide_alike_on_both_paths,
    retries_count_alike_through_the_cycle,
    bad_input_is_refused_with_field_errors,
    need_evidence_submit_and_are_rate_limited,
);
