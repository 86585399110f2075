//! Shared resource circuits across many routes, through the route service
//! with the test clock and timers driven by the test, on both engines:
//! "200 routes on one open circuit: on expiry exactly one probe; on its
//! failure none of the others dispatch to that resource; on its success
//! they all proceed, none twice".

use crate::support::{policy, services, start_time, usage_limit_in, Engine, TestDb, TestServer};
use domain::api::{ClaimRequest, CreateRoute, InvocationReport};
use domain::route::{Caller, CallerKind, Dispatch, RouteSnapshot, RouteState};
use serde_json::json;
use server::clock::Clock;
use server::http::AppState;
use std::collections::BTreeMap;

const ROUTES: usize = 200;
const ACCOUNT: &str = "account:anthropic/team-a";

/// One candidate on Anthropic's `team-a` account that waits for a trusted
/// reset (up to ten minutes) once, then stops.
async fn profile(state: &AppState) -> domain::ids::ProfileId {
    let p = state
        .profiles
        .create(&json!({"name": "team-a", "candidates": [{
            "label": "Claude", "agent": "claude-code", "provider_id": "anthropic",
            "model_id": "claude-sonnet-4-5", "profile_ref": "claude", "account_ref": "team-a",
            "policy": {"version": 1, "transient": policy(0, 0, 0, "skip"), "hard": policy(0, 0, 600, "stop")}
        }]}))
        .await
        .unwrap();
    p.id
}

fn report(route: &RouteSnapshot, items: serde_json::Value) -> serde_json::Value {
    json!({"generation": route.generation, "invocation_id": route.invocation_id,
           "prompt_generation": route.prompt_generation, "phase": "prompt", "items": items})
}

/// Every pending dispatch, claimed (a claim hands out a batch at a time).
async fn claim_all(state: &AppState) -> Vec<Dispatch> {
    let mut all = Vec::new();
    loop {
        let batch = state
            .routes
            .claim(ClaimRequest {
                route_id: None,
                caller_kind: None,
                lease_seconds: 600,
                wait_seconds: 0,
            })
            .await
            .unwrap();
        if batch.is_empty() {
            return all;
        }
        all.extend(batch);
    }
}

/// Four timer loops firing at once, as several would.
async fn fire(state: &AppState) -> usize {
    let r = &state.routes;
    let (a, b, c, d) = tokio::join!(r.fire_due(), r.fire_due(), r.fire_due(), r.fire_due());
    a.unwrap() + b.unwrap() + c.unwrap() + d.unwrap()
}

async fn circuit(state: &AppState) -> server::store::CircuitRow {
    let all = state.store.list_circuits().await.unwrap();
    assert_eq!(all.len(), 1, "one shared account, one circuit: {all:?}");
    all[0].clone()
}

async fn waiting(state: &AppState) -> i64 {
    state
        .store
        .circuit_waiting_counts()
        .await
        .unwrap()
        .into_iter()
        .find(|(k, _)| k == ACCOUNT)
        .map_or(0, |(_, n)| n)
}

async fn two_hundred_routes_share_one_probe(engine: Engine) {
    let db = TestDb::new(engine).await;
    let clock = Clock::manual(start_time());
    let state = services(db.store.clone(), clock.clone());
    let routes = state.routes.clone();
    let profile_id = profile(&state).await;
    let at = |s: i64| start_time() + chrono::Duration::seconds(s);

    // Every route hits the account's usage limit, reset in a minute.
    let mut ids = Vec::new();
    for i in 0..ROUTES {
        let r = routes
            .create(CreateRoute {
                profile_id: profile_id.clone(),
                caller: Caller {
                    kind: CallerKind::Kanban,
                    reference: format!("task-{i}"),
                },
            })
            .await
            .unwrap();
        let answer = routes
            .report_failure(&r.id, &report(&r, usage_limit_in(60)))
            .await
            .unwrap();
        assert_eq!(answer.route.state, RouteState::WaitingForReset);
        assert_eq!(answer.route.pending.as_ref().unwrap().deadline, at(60));
        ids.push(r.id);
    }
    let c = circuit(&state).await;
    assert_eq!((c.scope.as_str(), c.state.as_str()), ("account", "open"));
    assert_eq!(c.open_until, Some(at(60).timestamp_millis()));
    // The route that opened it waits by its own policy; the others for the circuit.
    assert_eq!(waiting(&state).await, ROUTES as i64 - 1);

    // Expiry: exactly one probe, however many timers fire at once.
    clock.advance(chrono::Duration::seconds(60));
    assert_eq!(fire(&state).await, 1);
    let probe = claim_all(&state).await;
    assert_eq!(probe.len(), 1, "{probe:?}");
    let holder = probe[0].route_id.clone();
    let c = circuit(&state).await;
    assert_eq!(c.state, "probing");
    assert_eq!(c.probe_holder.as_deref(), Some(holder.as_str()));
    // The others wait for the probe's outcome, visibly.
    for id in ids.iter().filter(|id| **id != holder) {
        let r = routes.get(id).await.unwrap();
        assert_eq!(r.state, RouteState::WaitingForReset, "{id}");
        let hold = r
            .pending
            .as_ref()
            .and_then(|p| p.circuit.clone())
            .expect("held");
        assert!(hold.awaiting_probe, "{id}");
        assert_eq!(hold.resource, "anthropic/team-a");
        assert_eq!(r.pending.unwrap().deadline, hold.until);
    }
    assert_eq!(waiting(&state).await, ROUTES as i64 - 1);

    // The probe fails, with a new reset two minutes on.
    let h = routes
        .acknowledge(&probe[0].id, probe[0].generation)
        .await
        .unwrap();
    let answer = routes
        .report_failure(&holder, &report(&h, usage_limit_in(180)))
        .await
        .unwrap();
    // Its own policy: the reset wait is used up this cycle, so it stops.
    assert_eq!(answer.route.state, RouteState::ActionRequired);
    let c = circuit(&state).await;
    assert_eq!(c.state, "open");
    assert_eq!(c.open_until, Some(at(180).timestamp_millis()));
    // None of the others dispatch to the account before the new reset.
    clock.advance(chrono::Duration::seconds(119));
    assert_eq!(fire(&state).await, 0);
    assert!(claim_all(&state).await.is_empty());
    for id in ids.iter().filter(|id| **id != holder).take(3) {
        let p = routes.get(id).await.unwrap().pending.unwrap();
        assert_eq!(p.deadline, at(180), "moved to the reopened circuit's end");
        assert!(!p.circuit.unwrap().awaiting_probe);
    }

    // The new end: one probe again, from another route; it succeeds.
    clock.advance(chrono::Duration::seconds(1));
    assert_eq!(fire(&state).await, 1);
    let second = claim_all(&state).await;
    assert_eq!(second.len(), 1);
    assert_ne!(second[0].route_id, holder);
    let r = routes
        .acknowledge(&second[0].id, second[0].generation)
        .await
        .unwrap();
    routes
        .report_success(
            &r.id,
            InvocationReport {
                generation: r.generation,
                invocation_id: r.invocation_id.clone(),
                prompt_generation: r.prompt_generation,
            },
        )
        .await
        .unwrap();
    assert_eq!(circuit(&state).await.state, "closed");
    assert_eq!(waiting(&state).await, 0);

    // The rest proceed, released a few at a time, each once.
    let rest = ROUTES - 2;
    assert_eq!(fire(&state).await, server::circuits::RELEASE_BATCH);
    let mut dispatched = claim_all(&state).await;
    clock.advance(chrono::Duration::seconds(60));
    assert_eq!(fire(&state).await, rest - server::circuits::RELEASE_BATCH);
    dispatched.extend(claim_all(&state).await);
    assert_eq!(dispatched.len(), rest);
    let mut per_route: BTreeMap<String, usize> = BTreeMap::new();
    for id in &ids {
        let ds = state.store.list_dispatches(id.as_str()).await.unwrap();
        per_route.insert(id.to_string(), ds.len());
    }
    assert!(
        per_route.values().all(|n| *n == 1),
        "none twice: {per_route:?}"
    );
    for d in &dispatched {
        assert_ne!(d.route_id, holder, "a route that stopped is not moved back");
        assert_eq!(d.candidate.label, "Claude");
    }
    assert_eq!(fire(&state).await, 0);
}

/// A route whose policy skips takes another eligible candidate instead of
/// waiting; one whose candidate is held waits; neither is moved back.
async fn skip_policies_take_another_candidate(engine: Engine) {
    let db = TestDb::new(engine).await;
    let clock = Clock::manual(start_time());
    let state = services(db.store.clone(), clock.clone());
    let routes = state.routes.clone();
    let p = state
        .profiles
        .create(&json!({"name": "mixed", "candidates": [
            {"label": "Claude", "agent": "claude-code", "provider_id": "anthropic", "account_ref": "team-a",
             "policy": {"version": 1, "transient": policy(0, 0, 0, "skip"), "hard": policy(0, 0, 0, "skip")}},
            {"label": "Claude Opus", "agent": "claude-code", "provider_id": "anthropic", "account_ref": "team-a"},
            {"label": "Codex", "agent": "codex", "provider_id": "openai"}
        ]}))
        .await
        .unwrap();
    let create = |i: usize| {
        let routes = routes.clone();
        let pid = p.id.clone();
        async move {
            routes
                .create(CreateRoute {
                    profile_id: pid,
                    caller: Caller {
                        kind: CallerKind::Kanban,
                        reference: format!("t{i}"),
                    },
                })
                .await
                .unwrap()
        }
    };
    let first = create(0).await;
    let second = create(1).await;
    // The first route's quota error opens the account's circuit; its own
    // skip may still try the next candidate (its attempt is the probe).
    let a = routes
        .report_failure(&first.id, &report(&first, usage_limit_in(3600)))
        .await
        .unwrap();
    assert_eq!(a.route.state, RouteState::Switching);
    assert_eq!(a.route.candidate.label, "Claude Opus");
    // The second route's skip passes over the held account to Codex.
    let b = routes
        .report_failure(&second.id, &report(&second, usage_limit_in(3600)))
        .await
        .unwrap();
    assert_eq!(b.route.state, RouteState::Switching);
    assert_eq!(b.route.candidate.label, "Codex");
    assert!(!b.route.excluded.contains(&p.candidates[1].id));
    // A new route starts on the first candidate its circuits allow.
    let third = create(2).await;
    assert_eq!(third.candidate.label, "Codex");
}

/// `GET /api/v1/circuits` and a held route's snapshot say what waits for
/// what, in safe words; the OpenAPI document lists the endpoint.
async fn circuits_are_visible_over_http(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .post_ok(
            "/api/v1/profiles",
            json!({"name": "team-a", "candidates": [{
                "label": "Claude", "agent": "claude-code", "provider_id": "anthropic",
                "account_ref": "team-a",
                "policy": {"version": 1, "transient": policy(0, 0, 0, "skip"), "hard": policy(0, 0, 3600, "stop")}
            }]}),
        )
        .await;
    assert_eq!(p["candidates"][0]["account_ref"], "team-a");
    let pid = p["id"].as_str().unwrap();
    let empty = api.get("/api/v1/circuits").await;
    assert_eq!(empty["circuits"], json!([]));
    let first = api.route(pid, "kanban").await;
    let second = api.route(pid, "office").await;
    api.fail(&first, usage_limit_in(900)).await;
    let held = api.fail(&second, usage_limit_in(900)).await["route"].clone();
    let list = api.get("/api/v1/circuits").await;
    let c = &list["circuits"][0];
    assert_eq!(c["scope"], "account");
    assert_eq!(c["resource"], "anthropic/team-a");
    assert_eq!(c["label"], "Anthropic account team-a");
    assert_eq!(c["state"], "open");
    assert_eq!(c["until"], "2026-11-30T12:15:00Z");
    assert_eq!(c["probe_holder"], serde_json::Value::Null);
    assert_eq!(c["routes_waiting"], 1);
    assert_eq!(c["code"], "quota_limited");
    let hold = &held["pending"]["circuit"];
    assert_eq!(hold["scope"], "account");
    assert_eq!(hold["until"], "2026-11-30T12:15:00Z");
    assert_eq!(hold["awaiting_probe"], false);
    // The route that opened it waits by its own policy: no hold shown.
    assert!(api.snapshot(first["id"].as_str().unwrap()).await["pending"]
        .get("circuit")
        .is_none());
    // The pages render it on the server too (the browser then follows live).
    let page = crate::support::get(s.url("/circuits"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(page.contains("Anthropic account team-a"), "{page}");
    assert!(page.contains("1 route"), "{page}");
    let panel = crate::support::get(s.url(&format!("/routes/{}", held["id"].as_str().unwrap())))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        panel.contains("Anthropic account team-a paused until 30 Nov 2026, 12:15:00 (UTC) — 1 route waiting, one probe at 30 Nov 2026, 12:15:00 (UTC)"),
        "{panel}"
    );
    let doc = api.get("/api/v1/openapi.json").await;
    assert!(doc["paths"]["/api/v1/circuits"]["get"].is_object());
    assert!(doc["components"]["schemas"]["CircuitView"].is_object());
    // A bad account_ref is a 422 naming the field.
    let (status, body) = api
        .post(
            "/api/v1/profiles",
            json!({"name": "bad", "candidates": [{"label": "A", "agent": "a", "account_ref": "me@example.com"}]}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["errors"][0]["field"], "candidates[0].account_ref");
}

/// An administrator's controls: probe now makes the next waiting route
/// the one probe; release lets the waiting routes go; both are audited
/// with the actor and leave a circuit event; anyone else is refused, and
/// a request that names no circuit is a 4xx that changes nothing.
async fn an_administrator_releases_or_probes_a_circuit(engine: Engine) {
    use server::auth::{Access, Permission, Permissions};
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .post_ok(
            "/api/v1/profiles",
            json!({"name": "team-a", "candidates": [{
                "label": "Claude", "agent": "claude-code", "provider_id": "anthropic",
                "account_ref": "team-a",
                "policy": {"version": 1, "transient": policy(0, 0, 0, "skip"), "hard": policy(0, 0, 3600, "stop")}
            }]}),
        )
        .await;
    let pid = p["id"].as_str().unwrap();
    // The first route opens the account's circuit for 15 minutes; two
    // more wait for it.
    let opener = api.route(pid, "kanban").await;
    api.fail(&opener, usage_limit_in(900)).await;
    let mut waiters = Vec::new();
    for caller in ["office", "workflow"] {
        let r = api.route(pid, caller).await;
        let held = api.fail(&r, usage_limit_in(900)).await["route"].clone();
        assert_eq!(held["pending"]["circuit"]["resource"], "anthropic/team-a");
        waiters.push(held["id"].as_str().unwrap().to_string());
    }
    let account = json!({"scope": "account", "resource": "anthropic/team-a"});

    // Only an administrator may override a circuit.
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let actor = access
        .create_token(
            "actor",
            Permissions::of(&[Permission::RoutesAct, Permission::ProfilesManage]),
        )
        .await
        .unwrap();
    let actor = crate::support::Api::with_token(s.base.clone(), Some(&actor.secret));
    for path in ["/api/v1/circuits/release", "/api/v1/circuits/probe"] {
        let (st, body) = actor.post(path, account.clone()).await;
        assert_eq!(st, 403, "{path}: {body}");
    }
    // Bad requests name the field; an unknown circuit is a 404.
    let (st, body) = api
        .post(
            "/api/v1/circuits/release",
            json!({"scope": "galaxy", "resource": "x"}),
        )
        .await;
    assert_eq!(
        (st, body["errors"][0]["field"].as_str()),
        (422, Some("scope")),
        "{body}"
    );
    let (st, body) = api
        .post(
            "/api/v1/circuits/probe",
            json!({"scope": "account", "resource": " "}),
        )
        .await;
    assert_eq!(
        (st, body["errors"][0]["field"].as_str()),
        (422, Some("resource")),
        "{body}"
    );
    let (st, _) = api
        .post(
            "/api/v1/circuits/release",
            json!({"scope": "account", "resource": "anthropic/team-z"}),
        )
        .await;
    assert_eq!(st, 404);
    let c = &api.get("/api/v1/circuits").await["circuits"][0];
    assert_eq!(
        (c["state"].as_str(), c["routes_waiting"].as_i64()),
        (Some("open"), Some(2))
    );

    // Probe now: the circuit expires and the next waiting route is its
    // one probe; the other waits for the probe's outcome.
    let expired = api.post_ok("/api/v1/circuits/probe", account.clone()).await;
    assert_eq!(expired["state"], "open");
    assert_eq!(expired["until"], "2026-11-30T12:00:00Z");
    api.advance(0.0).await;
    let mut probes = Vec::new();
    for id in &waiters {
        probes.extend(api.claim(id).await);
    }
    assert_eq!(probes.len(), 1, "one probe: {probes:?}");
    let prober = probes[0]["route_id"].as_str().unwrap().to_string();
    let c = &api.get("/api/v1/circuits").await["circuits"][0];
    assert_eq!(c["state"], "probing");
    assert_eq!(c["probe_holder"].as_str(), Some(prober.as_str()));
    let other = waiters.iter().find(|id| **id != prober).unwrap().clone();
    let held = api.snapshot(&other).await;
    assert_eq!(held["state"], "waiting_for_reset");
    assert_eq!(held["pending"]["circuit"]["awaiting_probe"], true);

    // Release: the circuit closes and its waiting route goes at once.
    let released = api
        .post_ok("/api/v1/circuits/release", account.clone())
        .await;
    assert_eq!(released["state"], "closed");
    assert_eq!(released["routes_waiting"], 0);
    let freed = api.snapshot(&other).await;
    assert!(freed["pending"].get("circuit").is_none(), "{freed}");
    api.advance(0.0).await;
    let went = api.claim(&other).await;
    assert_eq!(went.len(), 1, "the waiter's dispatch is due: {went:?}");
    // Nothing left to release.
    let (st, body) = api.post("/api/v1/circuits/release", account.clone()).await;
    assert_eq!(
        (st, body["error"].as_str()),
        (409, Some("invalid_action")),
        "{body}"
    );

    // Audited with the actor, in order; each control left a circuit event.
    let trail = api
        .get("/api/v1/audit?subject=account:anthropic/team-a")
        .await;
    let trail: Vec<(String, String, String)> = trail
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["actor"]["kind"].as_str().unwrap().to_string(),
                e["actor"]["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let by_admin = |a: &str| (a.to_string(), "token".to_string(), "test admin".to_string());
    assert_eq!(
        trail,
        [by_admin("circuit.probed"), by_admin("circuit.released")]
    );
    let events = s.db.store.circuit_events_after(0, 100).await.unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .filter(|e| e.route_id.is_empty())
        .map(|e| e.kind.as_str())
        .collect();
    assert_eq!(kinds, ["circuit.probe_requested", "circuit.closed"]);
    let last: serde_json::Value = serde_json::from_str(&events.last().unwrap().payload).unwrap();
    assert_eq!(last["actor"]["name"], "test admin");
}

on_both_engines!(
    flavor = multi_thread;
    two_hundred_routes_share_one_probe,
    skip_policies_take_another_candidate,
    circuits_are_visible_over_http,
    an_administrator_releases_or_probes_a_circuit
);
