//! Retention: ended routes older than the retention time go, with their
//! attempts, events and dispatches, in batches, while other routes are
//! being decided; open routes and recently ended ones stay
//! (docs/operations.md, “Retention”); the audit trail and circuit events
//! go by their own age.

use crate::support::{overloaded, policy, typed, Engine, TestServer};
use domain::api::EndRequest;
use domain::ids::Generation;
use serde_json::Value;
use server::retention::{prune, prune_logs, LogsPruned, Pruned, Retention};

fn end(route: &Value) -> Value {
    typed(&EndRequest {
        expected_generation: Generation(route["generation"].as_i64().unwrap()),
    })
}

async fn pruning_removes_only_old_ended_routes_in_batches(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 0, "stop"))])
        .await;
    // Four routes ended long ago, each with an attempt and a dispatch.
    let mut old = Vec::new();
    for i in 0..4 {
        let route = api.route(&p, "kanban").await;
        let id = route["id"].as_str().unwrap().to_string();
        api.fail(&route, overloaded()).await;
        api.advance(10.0).await;
        let route = api.deliver(&id).await;
        let verb = if i % 2 == 0 { "complete" } else { "cancel" };
        api.post_ok(&format!("/api/v1/routes/{id}/{verb}"), end(&route))
            .await;
        old.push(id);
    }
    // An open route as old, waiting on a retry, and one ended recently.
    let open = api.route(&p, "workflow").await;
    let open_id = open["id"].as_str().unwrap().to_string();
    api.advance(10.0 * 86_400.0).await;
    let recent = api.route(&p, "kanban").await;
    let recent_id = recent["id"].as_str().unwrap().to_string();
    api.post_ok(
        &format!("/api/v1/routes/{recent_id}/complete"),
        end(&recent),
    )
    .await;
    api.advance(21.0 * 86_400.0).await;
    api.fail(&open, overloaded()).await;

    // Routes decided while the prune runs commit as usual.
    let busy = {
        let (api, p) = (s.api(), p.clone());
        tokio::spawn(async move {
            for _ in 0..5 {
                let r = api.route(&p, "utility").await;
                let answer = api.fail(&r, overloaded()).await;
                assert_eq!(answer["route"]["state"], "retry_wait");
            }
        })
    };
    let settings = Retention {
        batch: 3,
        pause: std::time::Duration::ZERO,
        ..Retention::from_days(30)
    };
    let store = &s.db.store;
    let done = prune(store, s.clock.now_ms(), &settings).await.unwrap();
    busy.await.unwrap();
    assert_eq!(
        done,
        Pruned {
            routes: 4,
            batches: 2
        }
    );
    for id in &old {
        let (st, _) = api
            .call(reqwest::Method::GET, &format!("/api/v1/routes/{id}"), None)
            .await;
        assert_eq!(st, 404);
        assert!(store.list_attempts(id).await.unwrap().is_empty());
        assert!(store
            .events_after(0, Some(id), 10)
            .await
            .unwrap()
            .is_empty());
        assert!(store.list_dispatches(id).await.unwrap().is_empty());
    }
    assert_eq!(api.snapshot(&open_id).await["state"], "retry_wait");
    assert_eq!(api.snapshot(&recent_id).await["state"], "completed");
    assert!(!store
        .events_after(0, Some(&recent_id), 10)
        .await
        .unwrap()
        .is_empty());
    // Nothing more is due now; with retention off nothing ever is.
    let again = prune(store, s.clock.now_ms(), &settings).await.unwrap();
    assert_eq!(again.routes, 0);
    let later = s.clock.now_ms() + 365 * 86_400_000;
    let off = prune(store, later, &Retention::from_days(0)).await.unwrap();
    assert_eq!(off.routes, 0);
    assert_eq!(api.snapshot(&recent_id).await["state"], "completed");
}

/// The audit trail and circuit events keep bounds of their own: entries
/// older than their retention go, oldest first, in batches; newer ones
/// stay.
async fn old_audit_entries_and_circuit_events_go_by_age(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let store = &s.db.store;
    // An audit entry (a profile created) and circuit events (an account's
    // usage limit opens its circuit) today…
    let team = api
        .post_ok(
            "/api/v1/profiles",
            serde_json::json!({"name": "team-a", "candidates": [{
                "label": "Claude", "agent": "claude-code", "provider_id": "anthropic",
                "account_ref": "team-a",
                "policy": {"version": 1, "transient": policy(0, 0, 0, "skip"), "hard": policy(0, 0, 3600, "stop")}
            }]}),
        )
        .await;
    let route = api.route(team["id"].as_str().unwrap(), "kanban").await;
    api.fail(&route, crate::support::usage_limit_in(900)).await;
    let old_events = store.circuit_events_after(0, 100).await.unwrap().len();
    assert!(old_events >= 1);
    let before = store.audit_after(0, None, 100).await.unwrap().len();
    // …and more entries well over a year later (the test token, minted on
    // the system clock, is older than a year by then too).
    s.clock.advance(chrono::Duration::days(400));
    for _ in 0..3 {
        api.profile(&[("A", policy(1, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
            .await;
    }
    let settings = Retention {
        batch: 1,
        pause: std::time::Duration::ZERO,
        ..Retention::from_days(30)
    };
    let done = prune_logs(store, s.clock.now_ms(), &settings)
        .await
        .unwrap();
    assert_eq!(
        done,
        LogsPruned {
            audit: before as u64,
            circuit_events: old_events as u64
        }
    );
    let kept = store.audit_after(0, None, 100).await.unwrap();
    assert_eq!(kept.len(), 3, "{kept:?}");
    assert!(kept.iter().all(|e| e.action == "profile.created"));
    // What is left happened since (the opener's reset wait fired when the
    // clock moved on, and took the circuit's probe).
    let cutoff = s.clock.now_ms() - 30 * 86_400_000;
    let left = store.circuit_events_after(0, 100).await.unwrap();
    assert!(left.iter().all(|e| e.created_at >= cutoff), "{left:?}");
    // With both kept for ever, nothing goes.
    s.clock.advance(chrono::Duration::days(400));
    let never = Retention::from_days(0).with_audit_days(0);
    let none = prune_logs(store, s.clock.now_ms(), &never).await.unwrap();
    assert_eq!(none, LogsPruned::default());
    assert_eq!(store.audit_after(0, None, 100).await.unwrap().len(), 3);
}

on_both_engines!(
    pruning_removes_only_old_ended_routes_in_batches,
    old_audit_entries_and_circuit_events_go_by_age
);
