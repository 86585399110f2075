//! Webhooks against a receiver on 127.0.0.1 started by the test (so the
//! server runs with `--allow-private-webhooks`): deliveries are signed and
//! verify, a receiver that fails three times then succeeds gets each event
//! once and in order, a receiver that hangs does not slow route decisions,
//! and a private address is refused without the flag; an `https` receiver
//! is spoken to over TLS. The CLI's commands against the server.

use crate::support::{overloaded, policy, Api, Engine, TestServer, ADMIN_TOKEN};
use axum::http::{HeaderMap, StatusCode};
use serde_json::{json, Value};
use server::webhooks::sign;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

on_both_engines!(
    deliveries_are_signed_retried_and_in_order,
    a_hanging_receiver_does_not_slow_route_decisions,
    private_receivers_and_bad_subscriptions_are_refused,
    subscriptions_are_listed_removed_and_audited,
    the_cli_manages_webhooks_against_a_server,
    https_receivers_are_spoken_to_over_tls,
);

const SECRET: &str = "whsec_test_0123456789abcdef";

/// What the receiver heard: each request's status answered, headers and body.
#[derive(Default)]
struct Heard {
    requests: Vec<(u16, HeaderMap, String)>,
}

/// How the receiver answers: fail the first `fail_first` requests with
/// 503, or (with `hang`) never answer.
#[derive(Clone)]
struct Receiver {
    heard: Arc<Mutex<Heard>>,
    fail_first: usize,
    hang: bool,
}

impl Receiver {
    /// Starts it on 127.0.0.1; answers its URL.
    async fn start(fail_first: usize, hang: bool) -> (Receiver, String) {
        let r = Receiver {
            heard: Arc::default(),
            fail_first,
            hang,
        };
        let state = r.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: String| {
                let r = state.clone();
                async move {
                    if r.hang {
                        r.heard.lock().unwrap().requests.push((0, headers, body));
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                        return StatusCode::OK;
                    }
                    let mut heard = r.heard.lock().unwrap();
                    let status = if heard.requests.len() < r.fail_first {
                        StatusCode::SERVICE_UNAVAILABLE
                    } else {
                        StatusCode::NO_CONTENT
                    };
                    heard.requests.push((status.as_u16(), headers, body));
                    status
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        (r, format!("http://{addr}/hook"))
    }

    /// The bodies of the requests answered 2xx, in arrival order.
    fn delivered(&self) -> Vec<Value> {
        self.heard
            .lock()
            .unwrap()
            .requests
            .iter()
            .filter(|(s, _, _)| (200..300).contains(s))
            .map(|(_, _, b)| serde_json::from_str(b).unwrap())
            .collect()
    }

    fn count(&self) -> usize {
        self.heard.lock().unwrap().requests.len()
    }
}

async fn subscribe(api: &Api, url: &str, events: &[&str]) -> Value {
    api.post_ok(
        "/api/v1/webhooks",
        json!({"url": url, "events": events, "secret": SECRET}),
    )
    .await
}

async fn act(api: &Api, route: &Value, action: &str) -> Value {
    api.post_ok(
        &format!("/api/v1/routes/{}/actions", route["id"].as_str().unwrap()),
        json!({"action": action, "expected_generation": route["generation"]}),
    )
    .await
}

/// Polls `done` every 50 ms for up to `within`, moving the test clock on
/// by `advance` seconds each time (so retries fall due).
async fn until(api: &Api, within: Duration, advance: f64, done: impl Fn() -> bool) {
    let since = Instant::now();
    while !done() {
        assert!(since.elapsed() < within, "not done within {within:?}");
        if advance > 0.0 {
            api.advance(advance).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn deliveries_are_signed_retried_and_in_order(engine: Engine) {
    let s = TestServer::start_with_private_webhooks(engine).await;
    let api = s.api();
    let (receiver, url) = Receiver::start(3, false).await;
    let hook = subscribe(&api, &url, &["route.action_required", "dispatch.due"]).await;
    assert_eq!(hook["pending"], 0);
    assert!(hook.get("secret").is_none(), "{hook}");

    // Three events: stopped, retried now (a dispatch due), stopped again.
    let p = api
        .profile(&[("A", policy(3, 60, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let route = api.route(&p, "kanban").await;
    let waiting = api.fail(&route, overloaded()).await["route"].clone();
    let stopped = act(&api, &waiting, "stop").await;
    let retrying = act(&api, &stopped, "retry_now").await;
    let stopped_again = act(&api, &retrying, "stop").await;
    assert_eq!(stopped_again["state"], "action_required");

    // The receiver fails the first three attempts: each retry is due
    // after a pause on the server's clock, which the test moves on.
    until(&api, Duration::from_secs(30), 60.0, || {
        receiver.delivered().len() == 3
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let delivered = receiver.delivered();
    let kinds: Vec<(&str, &str)> = delivered
        .iter()
        .map(|b| {
            (
                b["event"].as_str().unwrap(),
                b["data"]["route"]["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("route.action_required", "action_required"),
            ("dispatch.due", "retrying"),
            ("route.action_required", "action_required"),
        ]
    );
    let generations: Vec<i64> = delivered
        .iter()
        .map(|b| b["data"]["route"]["generation"].as_i64().unwrap())
        .collect();
    assert!(
        generations.windows(2).all(|w| w[0] < w[1]),
        "{generations:?}"
    );
    // Each event once: three failed attempts of the first, then one each.
    let requests = receiver.heard.lock().unwrap().requests.clone();
    assert_eq!(requests.len(), 6, "{:?}", requests.len());
    let statuses: Vec<u16> = requests.iter().map(|r| r.0).collect();
    assert_eq!(statuses, [503, 503, 503, 204, 204, 204]);
    let first_id = serde_json::from_str::<Value>(&requests[0].2).unwrap()["id"].clone();
    assert!(requests[..4]
        .iter()
        .all(|r| serde_json::from_str::<Value>(&r.2).unwrap()["id"] == first_id));
    // Every request is signed, and the signature verifies over its body.
    for (_, headers, body) in &requests {
        let signature = headers[sign::SIGNATURE_HEADER].to_str().unwrap();
        let now = chrono::Utc::now().timestamp();
        assert!(
            sign::verify(SECRET, signature, body, now, 300),
            "{signature}"
        );
        assert!(!sign::verify(
            "another secret entirely",
            signature,
            body,
            now,
            300
        ));
        let body_id = serde_json::from_str::<Value>(body).unwrap()["id"].clone();
        assert_eq!(headers[sign::DELIVERY_HEADER].to_str().unwrap(), body_id);
    }

    // The delivery log says the same.
    let id = hook["id"].as_str().unwrap();
    let log = api.get(&format!("/api/v1/webhooks/{id}/deliveries")).await;
    let attempts: Vec<(i64, &str)> = log["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["attempts"].as_i64().unwrap(),
                d["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        attempts,
        [(1, "delivered"), (1, "delivered"), (4, "delivered")]
    );
    assert_eq!(log["webhook"]["pending"], 0);
}

async fn a_hanging_receiver_does_not_slow_route_decisions(engine: Engine) {
    let s = TestServer::start_with_private_webhooks(engine).await;
    let api = s.api();
    let (receiver, url) = Receiver::start(0, true).await;
    subscribe(&api, &url, &["dispatch.due", "route.action_required"]).await;
    // Every failure stops its route: each decision is a
    // `route.action_required`.
    let p = api
        .profile(&[("A", policy(0, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let first = api.route(&p, "kanban").await;
    api.fail(&first, overloaded()).await;
    until(&api, Duration::from_secs(10), 0.0, || receiver.count() == 1).await;

    // The receiver holds its delivery; decisions go on at full speed.
    let since = Instant::now();
    for _ in 0..10 {
        let route = api.route(&p, "kanban").await;
        let answer = api.fail(&route, overloaded()).await;
        assert_eq!(answer["route"]["state"], "action_required", "{answer}");
    }
    let took = since.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "10 decisions took {took:?} with a hanging receiver"
    );
    // Still one request: one delivery per subscription in flight.
    assert_eq!(receiver.count(), 1);
}

async fn private_receivers_and_bad_subscriptions_are_refused(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let refused = |body: Value| {
        let api = &api;
        async move {
            let (st, answer) = api.post("/api/v1/webhooks", body).await;
            assert_eq!(st, 422, "{answer}");
            answer
        }
    };
    for url in [
        "http://127.0.0.1:9/hook",
        "http://10.0.0.7/hook",
        "http://[::1]/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://localhost:9/hook",
    ] {
        let answer =
            refused(json!({"url": url, "events": ["dispatch.due"], "secret": SECRET})).await;
        assert_eq!(answer["errors"][0]["field"], "url", "{url}: {answer}");
        assert!(
            answer["errors"][0]["message"]
                .as_str()
                .unwrap()
                .contains("--allow-private-webhooks"),
            "{answer}"
        );
    }
    let answer = refused(
        json!({"url": "ftp://hooks.example/x", "events": ["dispatch.due"], "secret": SECRET}),
    )
    .await;
    assert_eq!(answer["errors"][0]["field"], "url");
    let answer =
        refused(json!({"url": "http://127.0.0.1:9/", "events": [], "secret": SECRET})).await;
    assert_eq!(answer["errors"][0]["field"], "url");
    let (st, _) = api
        .post(
            "/api/v1/webhooks",
            json!({"url": "http://127.0.0.1:9/", "events": ["route.nope"], "secret": SECRET}),
        )
        .await;
    assert_eq!(st, 422);
    // Nothing was stored.
    assert_eq!(api.get("/api/v1/webhooks").await, json!([]));
}

async fn subscriptions_are_listed_removed_and_audited(engine: Engine) {
    let s = TestServer::start_with_private_webhooks(engine).await;
    let api = s.api();
    let (st, answer) = api
        .post(
            "/api/v1/webhooks",
            json!({"url": "http://127.0.0.1:9/", "events": ["circuit.opened"], "secret": "short"}),
        )
        .await;
    assert_eq!(
        (st, answer["errors"][0]["field"].clone()),
        (422, json!("secret"))
    );
    let (st, answer) = api
        .post(
            "/api/v1/webhooks",
            json!({"url": "http://127.0.0.1:9/", "events": [], "secret": SECRET}),
        )
        .await;
    assert_eq!(
        (st, answer["errors"][0]["field"].clone()),
        (422, json!("events"))
    );

    let hook = subscribe(
        &api,
        "http://127.0.0.1:9/hook",
        &["circuit.opened", "circuit.closed"],
    )
    .await;
    let id = hook["id"].as_str().unwrap().to_string();
    let listed = api.get("/api/v1/webhooks").await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(
        listed[0]["events"],
        json!(["circuit.closed", "circuit.opened"])
    );
    assert!(!listed.to_string().contains(SECRET));

    let (st, _) = api
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/webhooks/{id}"),
            None,
        )
        .await;
    assert_eq!(st, 204);
    let (st, _) = api
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/webhooks/{id}"),
            None,
        )
        .await;
    assert_eq!(st, 404);
    let (st, _) = api
        .call(
            reqwest::Method::GET,
            &format!("/api/v1/webhooks/{id}/deliveries"),
            None,
        )
        .await;
    assert_eq!(st, 404);
    let trail = api.get(&format!("/api/v1/audit?subject={id}")).await;
    let actions: Vec<&str> = trail
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["webhook.created", "webhook.removed"]);
    assert!(!trail.to_string().contains(SECRET));
}

/// Runs the built binary's `webhooks` command against `s`.
async fn cli(s: &TestServer, args: &[&str]) -> (bool, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .arg("webhooks")
        .args(args)
        .env("KANDEV_SERVER", &s.base)
        .env("KANDEV_TOKEN", ADMIN_TOKEN)
        .env("KANDEV_WEBHOOK_SECRET", SECRET)
        .output()
        .await
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn the_cli_manages_webhooks_against_a_server(engine: Engine) {
    let s = TestServer::start_with_private_webhooks(engine).await;
    let (ok, out, err) = cli(
        &s,
        &[
            "add",
            "--url",
            "http://127.0.0.1:9/hook",
            "--events",
            "dispatch.due,circuit.opened",
        ],
    )
    .await;
    assert!(ok, "{out}{err}");
    assert!(out.starts_with("Added webhook wh_"), "{out}");
    let (ok, out, _) = cli(&s, &["list", "--json"]).await;
    assert!(ok);
    let listed: Value = serde_json::from_str(&out).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_string();
    let (ok, table, _) = cli(&s, &["list"]).await;
    assert!(
        ok && table.contains(&id) && table.contains("circuit.opened,dispatch.due"),
        "{table}"
    );
    let (ok, log, _) = cli(&s, &["deliveries", &id]).await;
    assert!(ok && log.contains("DELIVERY"), "{log}");
    let (ok, out, _) = cli(&s, &["remove", &id]).await;
    assert!(ok, "{out}");
    // The server's refusal is the CLI's failure, with its message.
    let (ok, _, err) = cli(&s, &["remove", &id]).await;
    assert!(!ok && err.contains("404"), "{err}");
    let (ok, _, err) = cli(
        &s,
        &["add", "--url", "ftp://x/", "--events", "dispatch.due"],
    )
    .await;
    assert!(
        !ok && err.contains("url: the scheme must be http or https"),
        "{err}"
    );
    let (ok, _, err) = cli(
        &s,
        &[
            "add",
            "--url",
            "http://127.0.0.1:9/",
            "--events",
            "route.nope",
        ],
    )
    .await;
    assert!(!ok && err.contains("unknown event"), "{err}");
}

/// An `https` receiver gets a TLS handshake, not plain HTTP: the first
/// bytes on the wire are a TLS handshake record. (This receiver has no
/// certificate and hangs up, so the delivery stays pending with the error
/// in its log, to be retried.)
async fn https_receivers_are_spoken_to_over_tls(engine: Engine) {
    let s = TestServer::start_with_private_webhooks(engine).await;
    let api = s.api();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let first_bytes: Arc<Mutex<Vec<u8>>> = Arc::default();
    let heard = first_bytes.clone();
    tokio::spawn(async move {
        use tokio::io::AsyncReadExt;
        let (mut conn, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 5];
        let _ = conn.read_exact(&mut buf).await;
        heard.lock().unwrap().extend_from_slice(&buf);
    });
    let hook = subscribe(
        &api,
        &format!("https://{addr}/hook"),
        &["route.action_required"],
    )
    .await;
    let p = api
        .profile(&[("A", policy(0, 0, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let route = api.route(&p, "kanban").await;
    let stopped = api.fail(&route, overloaded()).await["route"].clone();
    assert_eq!(stopped["state"], "action_required");
    until(&api, Duration::from_secs(20), 0.0, || {
        first_bytes.lock().unwrap().len() == 5
    })
    .await;
    let bytes = first_bytes.lock().unwrap().clone();
    // 0x16: a handshake record; 0x03: TLS's major version.
    assert_eq!((bytes[0], bytes[1]), (0x16, 0x03), "{bytes:?}");
    let log_path = format!(
        "/api/v1/webhooks/{}/deliveries",
        hook["id"].as_str().unwrap()
    );
    let mut log = api.get(&log_path).await;
    let since = Instant::now();
    while log["deliveries"][0]["attempts"].as_i64().unwrap_or(0) < 1 {
        assert!(since.elapsed() < Duration::from_secs(20), "{log}");
        tokio::time::sleep(Duration::from_millis(50)).await;
        log = api.get(&log_path).await;
    }
    let d = &log["deliveries"][0];
    assert_eq!(d["state"], "pending", "{log}");
    assert!(!d["last_error"].as_str().unwrap_or("").is_empty(), "{log}");
}
