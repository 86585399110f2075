//! Finding routes: by the caller's own reference, exactly, and in pages
//! by cursor (`after` + `limit`) on routes, attempts and events — no row
//! seen twice or missed while rows are written (docs/routes.md, “Finding
//! routes”).

use crate::support::{overloaded, policy, typed, Api, Engine, TestDb, TestServer};
use domain::api::CreateRoute;
use domain::ids::ProfileId;
use domain::route::{Caller, CallerKind};
use std::collections::HashSet;

async fn open(api: &Api, profile: &str, reference: &str) -> String {
    let body = CreateRoute {
        profile_id: ProfileId::from(profile.to_string()),
        caller: Caller {
            kind: CallerKind::Kanban,
            reference: reference.into(),
        },
    };
    api.post_ok("/api/v1/routes", typed(&body)).await["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn ids(page: &serde_json::Value) -> Vec<String> {
    page.as_array()
        .expect("a list")
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_string())
        .collect()
}

/// `caller_ref` matches exactly: not a prefix, not another card.
async fn caller_ref_finds_exactly_that_reference(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(0, 0, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    let card7 = open(&api, &p, "card-7").await;
    let card7_again = open(&api, &p, "card-7").await;
    open(&api, &p, "card-70").await;
    open(&api, &p, "card-").await;
    // (The test clock stands still: both were opened at the same instant,
    // so the list orders them by id.)
    let mut found = ids(&api.get("/api/v1/routes?caller_ref=card-7").await);
    found.sort();
    let mut expected = vec![card7, card7_again];
    expected.sort();
    assert_eq!(found, expected);
    assert!(ids(&api.get("/api/v1/routes?caller_ref=card-8").await).is_empty());
    let (st, body) = api
        .call(reqwest::Method::GET, "/api/v1/routes?limit=0", None)
        .await;
    assert_eq!(st, 422, "{body}");
    assert!(body.to_string().contains("limit"), "{body}");
    let (st, body) = api
        .call(reqwest::Method::GET, "/api/v1/routes?after=r_gone", None)
        .await;
    assert_eq!(st, 422, "{body}");
    assert!(body.to_string().contains("after"), "{body}");
}

/// Paging through the routes while other routes are opened: every route
/// that existed before paging began is seen exactly once.
async fn route_pages_are_stable_while_routes_are_opened(engine: Engine) {
    let db = TestDb::new(engine).await;
    let store = db.store.clone();
    let s = TestServer::start_unlimited(db, store).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(0, 0, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    let mut before = HashSet::new();
    for i in 0..30 {
        before.insert(open(&api, &p, &format!("card-{i}")).await);
    }
    let writer = {
        let (api, p) = (s.api(), p.clone());
        tokio::spawn(async move {
            for i in 0..30 {
                open(&api, &p, &format!("new-{i}")).await;
            }
        })
    };
    let mut seen: Vec<String> = Vec::new();
    let mut after = String::new();
    loop {
        let page = ids(&api
            .get(&format!("/api/v1/routes?limit=4&after={after}"))
            .await);
        let Some(last) = page.last() else { break };
        after = last.clone();
        seen.extend(page);
        tokio::task::yield_now().await;
    }
    writer.await.unwrap();
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a route was listed twice");
    for id in &before {
        assert!(unique.contains(id), "{id} was missed");
    }
}

/// Attempts page newest first by `seq`; events oldest first by id, while
/// the route keeps moving.
async fn attempt_and_event_pages_follow_their_cursor(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(5, 5, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let mut route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    for _ in 0..3 {
        api.fail(&route, overloaded()).await;
        api.advance(3600.0).await;
        route = api.deliver(&id).await;
    }
    // Attempts: 3, newest first, one per page.
    let mut seqs = Vec::new();
    let mut path = format!("/api/v1/routes/{id}/attempts?limit=1");
    loop {
        let page = api.get(&path).await;
        let page = page.as_array().unwrap();
        assert!(page.len() <= 1);
        let Some(a) = page.first() else { break };
        let seq = a["seq"].as_i64().unwrap();
        seqs.push(seq);
        path = format!("/api/v1/routes/{id}/attempts?limit=1&after={seq}");
    }
    assert_eq!(seqs, [3, 2, 1]);

    // Events: pages of 2 while the route moves on; each event once, in order.
    let mut seen = Vec::new();
    let mut after = 0;
    let mut moved = false;
    loop {
        let page = api
            .get(&format!("/api/v1/routes/{id}/events?limit=2&after={after}"))
            .await;
        let page = page.as_array().unwrap().clone();
        if !moved {
            // A transition lands between two pages.
            api.fail(&route, overloaded()).await;
            moved = true;
        }
        let Some(last) = page.last() else { break };
        after = last["id"].as_i64().unwrap();
        seen.extend(page.iter().map(|e| {
            assert_eq!(e["route"]["id"], id.as_str());
            (
                e["id"].as_i64().unwrap(),
                e["kind"].as_str().unwrap().to_string(),
            )
        }));
    }
    let ids: Vec<i64> = seen.iter().map(|(i, _)| *i).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(ids, sorted, "events out of order or twice");
    // Created, then per cycle failure, fired, acknowledged; then the last failure.
    assert_eq!(seen.first().unwrap().1, "route.created");
    assert_eq!(seen.last().unwrap().1, "route.failure");
    assert_eq!(seen.len(), 1 + 3 * 3 + 1, "{seen:?}");
}

on_both_engines!(
    caller_ref_finds_exactly_that_reference,
    route_pages_are_stable_while_routes_are_opened,
    attempt_and_event_pages_follow_their_cursor
);
