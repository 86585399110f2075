//! The event stream, the test clock switch and metrics, over real HTTP.

use crate::support::{overloaded, policy, Engine, TestServer};
use serde_json::{json, Value};

/// Reads server-sent events until `n` have arrived: (id, kind, data).
pub(crate) async fn read_events(
    resp: &mut reqwest::Response,
    n: usize,
) -> Vec<(i64, String, Value)> {
    let mut buf = String::new();
    let mut out = Vec::new();
    while out.len() < n {
        let chunk = tokio::time::timeout(std::time::Duration::from_secs(10), resp.chunk())
            .await
            .expect("an event within 10 s")
            .unwrap()
            .expect("stream still open");
        buf.push_str(std::str::from_utf8(&chunk).unwrap());
        while let Some(end) = buf.find("\n\n") {
            let block: String = buf.drain(..end + 2).collect();
            let (mut id, mut kind, mut data) = (None, String::new(), String::new());
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("id:") {
                    id = v.trim().parse().ok();
                } else if let Some(v) = line.strip_prefix("event:") {
                    kind = v.trim().to_string();
                } else if let Some(v) = line.strip_prefix("data:") {
                    data.push_str(v.trim_start());
                }
            }
            if let Some(id) = id {
                out.push((id, kind, serde_json::from_str(&data).unwrap()));
            }
        }
    }
    out
}

async fn events_stream_and_resume(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 0, "skip")),
            ("Codex", policy(0, 0, 0, "skip"), policy(0, 0, 0, "skip")),
        ])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    let client = crate::support::client();
    // From the beginning of this route's history.
    let mut stream = client
        .get(s.url(&format!("/api/v1/events?route_id={id}&after=0")))
        .send()
        .await
        .unwrap();
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let first = read_events(&mut stream, 1).await;
    assert_eq!(first[0].1, "route.created");
    assert_eq!(first[0].2["route"]["id"], id.as_str());

    let answer = api.fail(&route, overloaded()).await;
    let live = read_events(&mut stream, 1).await;
    assert_eq!(live[0].1, "route.failure");
    let r = &live[0].2["route"];
    assert_eq!(r["state"], "retry_wait");
    assert_eq!(r["pending"]["retry_ordinal"], 1);
    assert_eq!(r["pending"]["max_retries"], 3);
    assert_eq!(r["pending"]["code"], "provider_overloaded");
    assert_eq!(r["last_failure"]["safe_cause"], "Provider overloaded");
    assert_eq!(r["generation"], answer["route"]["generation"]);
    drop(stream);

    // Two more transitions while nobody listens, then resume.
    api.advance(5.0).await;
    let waiting = api.snapshot(&id).await;
    assert_eq!(waiting["state"], "retrying");
    api.deliver(&id).await;
    let mut resumed = client
        .get(s.url(&format!("/api/v1/events?route_id={id}")))
        .header("Last-Event-ID", live[0].0.to_string())
        .send()
        .await
        .unwrap();
    let missed = read_events(&mut resumed, 2).await;
    assert_eq!(
        missed.iter().map(|e| e.1.as_str()).collect::<Vec<_>>(),
        ["route.fired", "route.dispatch_acked"]
    );
    assert!(missed[0].0 > live[0].0 && missed[1].0 > missed[0].0);

    let bad = client
        .get(s.url("/api/v1/events"))
        .header("Last-Event-ID", "soon")
        .send()
        .await
        .unwrap();
    assert_eq!(bad.status(), 400);
}

async fn test_clock_is_refused_unless_enabled(engine: Engine) {
    let db = crate::support::TestDb::new(engine).await;
    let state = server::http::AppState::new(&server::http::Setup {
        max_body_bytes: 1024,
        ..server::http::Setup::new(db.store.clone(), server::clock::Clock::system())
    });
    let (addr, _stop, _served) = crate::support::serve(state).await;
    let api = crate::support::Api::new(format!("http://{addr}"));
    let (st, body) = api
        .post("/api/v1/test/clock", json!({"advance_seconds": 60}))
        .await;
    assert_eq!(st, 403, "{body}");
    assert_eq!(body["error"], "forbidden");
}

async fn metrics_and_catalogue(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(1, 5, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    let route = api.route(&p, "utility").await;
    api.fail(&route, overloaded()).await;
    let text = crate::support::get(s.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("kandev_route_transitions_total"), "{text}");
    let catalogue = api.get("/api/v1/catalogue").await;
    assert!(catalogue["version"].as_str().is_some_and(|v| !v.is_empty()));
    let codes = catalogue["codes"].as_array().unwrap();
    assert!(codes
        .iter()
        .any(|c| c["code"] == "provider_overloaded" && c["class"] == "transient"));
    let (st, body) = api
        .post("/api/v1/test/clock", json!({"advance_seconds": -1}))
        .await;
    assert_eq!(
        (st, body["errors"][0]["field"].as_str()),
        (422, Some("advance_seconds"))
    );
}

/// Streams opened before, during and after concurrent commits, filtered
/// and not, each get every event after their start exactly once and in
/// order: the shared tail (routes::feed) hands over from each stream's
/// backlog read without a gap or a repeat.
async fn streams_opened_while_commits_race_miss_nothing(engine: Engine) {
    const ROUTES: usize = 12;
    let s = TestServer::start(engine).await;
    let api = std::sync::Arc::new(s.api());
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    let client = crate::support::client();
    let open = |query: String| {
        let req = client.get(s.url(&format!("/api/v1/events?{query}")));
        async move { req.send().await.unwrap() }
    };
    let mut before = open("after=0".into()).await;
    let mut routes = Vec::new();
    for _ in 0..ROUTES {
        routes.push(api.route(&p, "kanban").await);
    }
    let first = routes[0]["id"].as_str().unwrap().to_string();
    let mut one_route = open(format!("route_id={first}&after=0")).await;
    // Every route fails at once; streams open while the commits land.
    let failing: Vec<_> = routes
        .iter()
        .cloned()
        .map(|r| {
            let api = api.clone();
            tokio::spawn(async move { api.fail(&r, overloaded()).await })
        })
        .collect();
    let mut during = Vec::new();
    // An empty `route_id` filters nothing.
    for query in ["after=0", "route_id=&after=0", "after=0"] {
        during.push(open(query.into()).await);
        tokio::task::yield_now().await;
    }
    for f in failing {
        f.await.unwrap();
    }
    let mut after = open("after=0".into()).await;

    let all = 2 * ROUTES;
    let reference = read_events(&mut after, all).await;
    let ids: Vec<i64> = reference.iter().map(|e| e.0).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    assert_eq!(
        reference.iter().filter(|e| e.1 == "route.failure").count(),
        ROUTES
    );
    for stream in std::iter::once(&mut before).chain(during.iter_mut()) {
        let got: Vec<i64> = read_events(stream, all).await.iter().map(|e| e.0).collect();
        assert_eq!(got, ids);
    }
    let mine: Vec<(i64, String)> = read_events(&mut one_route, 2)
        .await
        .into_iter()
        .map(|e| (e.0, e.1))
        .collect();
    let expected: Vec<(i64, String)> = reference
        .iter()
        .filter(|e| e.2["route"]["id"] == first.as_str())
        .map(|e| (e.0, e.1.clone()))
        .collect();
    assert_eq!(mine, expected);
    // Nothing more arrives: no event was sent twice.
    let extra = tokio::time::timeout(std::time::Duration::from_millis(300), before.chunk()).await;
    assert!(
        extra.is_err(),
        "an event beyond the {all} committed: {extra:?}"
    );
}

on_both_engines!(
    events_stream_and_resume,
    streams_opened_while_commits_race_miss_nothing,
    test_clock_is_refused_unless_enabled,
    metrics_and_catalogue
);
