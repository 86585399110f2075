//! Retention: ended routes older than the retention time go, with their
//! attempts, events and dispatches, in batches, while other routes are
//! being decided; open routes and recently ended ones stay
//! (docs/operations.md, “Retention”).

use crate::support::{overloaded, policy, typed, Engine, TestServer};
use domain::api::EndRequest;
use domain::ids::Generation;
use serde_json::Value;
use server::retention::{prune, Pruned, Retention};

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

on_both_engines!(pruning_removes_only_old_ended_routes_in_batches);
