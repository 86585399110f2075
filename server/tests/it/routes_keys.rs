//! Idempotent route creation on both engines: a repeated `POST /routes`
//! with one `Idempotency-Key` answers the route it created, a key reused
//! for another request or malformed is refused and stores nothing, keys
//! are their caller's own, one key sent many times at once makes one
//! route, and the runner's client repeats a creation whose answer was
//! lost (the connection closed after the request arrived) without making
//! a second route.

use crate::support::{client_with, policy, services, start_time, Api, Engine, TestDb, TestServer};
use domain::api::CreateRoute;
use domain::route::{Caller, CallerKind};
use serde_json::{json, Value};
use server::clock::Clock;
use server::routes::{Creation, IdempotencyKey, RouteKey};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn profile(api: &Api) -> String {
    api.profile(&[("A", policy(2, 5, 0, "skip"), policy(0, 0, 0, "stop"))])
        .await
}

/// `POST /api/v1/routes` with `key` as its idempotency key.
async fn create(
    client: &reqwest::Client,
    server: &TestServer,
    key: &str,
    body: &Value,
) -> (u16, Option<String>, Value) {
    let response = client
        .post(server.url("/api/v1/routes"))
        .header("Idempotency-Key", key)
        .json(body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let replayed = response
        .headers()
        .get("idempotent-replayed")
        .map(|v| v.to_str().unwrap().to_string());
    (status, replayed, response.json().await.unwrap())
}

async fn routes_of(api: &Api, profile_id: &str) -> Vec<Value> {
    api.get(&format!("/api/v1/routes?profile_id={profile_id}"))
        .await
        .as_array()
        .unwrap()
        .clone()
}

async fn a_repeated_creation_answers_the_route_its_key_created(engine: Engine) {
    let server = TestServer::start(engine).await;
    let api = server.api();
    let client = crate::support::client();
    let p = profile(&api).await;
    let body = json!({"profile_id": p, "caller": {"kind": "kanban", "ref": "card-7"}});

    let (status, replayed, first) = create(&client, &server, "k-1", &body).await;
    assert_eq!((status, replayed), (201, None), "{first}");
    // The route moves on before the repeat: the repeat answers it as it is now.
    api.fail(&first, crate::support::overloaded()).await;
    let (status, replayed, again) = create(&client, &server, "\"k-1\"", &body).await;
    assert_eq!(
        (status, replayed.as_deref()),
        (200, Some("true")),
        "{again}"
    );
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["state"], "retry_wait");

    // The key reused for another request: refused, naming the header.
    let other = json!({"profile_id": p, "caller": {"kind": "kanban", "ref": "card-8"}});
    let (status, _, refused) = create(&client, &server, "k-1", &other).await;
    assert_eq!(status, 422, "{refused}");
    assert_eq!(refused["errors"][0]["field"], "Idempotency-Key");
    assert_eq!(refused["errors"][0]["code"], "duplicate");
    let message = refused["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains(first["id"].as_str().unwrap()), "{message}");

    // Malformed keys: refused, naming the header.
    for bad in ["", "two words", &"k".repeat(256)] {
        let (status, _, refused) = create(&client, &server, bad, &body).await;
        assert_eq!(status, 422, "{bad:?}: {refused}");
        assert_eq!(refused["errors"][0]["field"], "Idempotency-Key");
    }
    let twice = client
        .post(server.url("/api/v1/routes"))
        .header("Idempotency-Key", "a")
        .header("Idempotency-Key", "b")
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status().as_u16(), 422);

    // Another key, or none, is another route.
    let (status, _, second) = create(&client, &server, "k-2", &body).await;
    assert_eq!(status, 201);
    assert_ne!(second["id"], first["id"]);
    let (status, unkeyed) = api.post("/api/v1/routes", body.clone()).await;
    assert_eq!(status, 201, "{unkeyed}");
    assert_eq!(routes_of(&api, &p).await.len(), 3);
}

async fn keys_are_their_callers_own(engine: Engine) {
    let server = TestServer::start(engine).await;
    let api = server.api();
    let p = profile(&api).await;
    let access = server::auth::Access::new(server.db.store.clone(), Clock::system(), false);
    let other = access
        .create_token("kanban board", server::auth::Permissions::admin())
        .await
        .unwrap();
    let body = json!({"profile_id": p, "caller": {"kind": "kanban", "ref": "card-1"}});
    let (status, _, mine) = create(&crate::support::client(), &server, "shared", &body).await;
    assert_eq!(status, 201);
    let (status, replayed, theirs) =
        create(&client_with(Some(&other.secret)), &server, "shared", &body).await;
    assert_eq!((status, replayed), (201, None), "{theirs}");
    assert_ne!(theirs["id"], mine["id"]);
}

/// Sixteen creations with one key at once, some committed in one batch:
/// one route, which every one of them answers.
async fn one_key_sent_at_once_makes_one_route(engine: Engine) {
    let db = TestDb::new(engine).await;
    let state = services(db.store.clone(), Clock::manual(start_time()));
    let p = state
        .profiles
        .create(&json!({"name": "keys", "candidates": [{"label": "A", "agent": "a"}]}))
        .await
        .unwrap();
    let key = RouteKey {
        scope: "tok_1".into(),
        key: IdempotencyKey::parse("burst").unwrap(),
    };
    let tries = (0..16).map(|_| {
        let routes = state.routes.clone();
        let key = key.clone();
        let req = CreateRoute {
            profile_id: p.id.clone(),
            caller: Caller {
                kind: CallerKind::Workflow,
                reference: "step-1".into(),
            },
        };
        tokio::spawn(async move { routes.create_keyed(req, Some(key)).await })
    });
    let answers: Vec<_> = futures::future::join_all(tries)
        .await
        .into_iter()
        .map(|j| j.unwrap().unwrap())
        .collect();
    let created = answers
        .iter()
        .filter(|(_, c)| *c == Creation::Created)
        .count();
    assert_eq!(created, 1);
    assert!(answers.iter().all(|(r, _)| r.id == answers[0].0.id));
    let stored = db
        .store
        .list_routes(&server::store::RouteFilter {
            profile_id: Some(p.id.to_string()),
            limit: 100,
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
}

/// A proxy to `upstream` that passes a connection's request on, and when
/// the first connection's answer starts to come back, closes that
/// connection without passing the answer on: the request arrived and was
/// applied, and its client never heard. Later connections pass both ways.
async fn losing_the_first_answer(upstream: std::net::SocketAddr) -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let connections = Arc::new(AtomicUsize::new(0));
    tokio::spawn(async move {
        while let Ok((mut inbound, _)) = listener.accept().await {
            let first = connections.fetch_add(1, Ordering::SeqCst) == 0;
            tokio::spawn(async move {
                let mut outbound = TcpStream::connect(upstream).await.unwrap();
                if !first {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    return;
                }
                let (mut up_read, mut up_write) = outbound.split();
                let (mut in_read, _in_write) = inbound.split();
                let forward = async {
                    let mut buf = [0u8; 8192];
                    loop {
                        match in_read.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => {
                                if up_write.write_all(&buf[..n]).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                };
                let mut answer = [0u8; 1];
                tokio::select! {
                    _ = forward => {}
                    _ = up_read.read(&mut answer) => {}
                }
                // Both dropped here: the client's connection closes with
                // its request applied and no answer.
            });
        }
    });
    addr
}

async fn the_runner_repeats_a_creation_whose_answer_was_lost(engine: Engine) {
    let server = TestServer::start(engine).await;
    let api = server.api();
    let p = profile(&api).await;
    let proxy = losing_the_first_answer(server.addr).await;
    let service = runner::client::Service::new(
        &format!("http://{proxy}"),
        Some(crate::support::ADMIN_TOKEN.to_string()),
    )
    .unwrap();
    let route = service
        .open_route(
            &domain::ids::ProfileId(p.clone()),
            CallerKind::Utility,
            "lost",
        )
        .await
        .expect("the creation is repeated and answered");
    let stored = routes_of(&api, &p).await;
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["id"], route.id.as_str());
}

on_both_engines!(
    flavor = multi_thread;
    a_repeated_creation_answers_the_route_its_key_created,
    keys_are_their_callers_own,
    one_key_sent_at_once_makes_one_route,
    the_runner_repeats_a_creation_whose_answer_was_lost,
);
