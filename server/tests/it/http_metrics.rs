//! `GET /metrics` after a scripted scenario: two routes on one account hit
//! its usage limit (a circuit opens, schedules are armed), the reset comes
//! (one probe is dispatched, claimed, acknowledged and succeeds, closing
//! the circuit), the other route is released and its dispatch is claimed
//! but never acknowledged (ambiguous). The counters are process-wide and
//! other tests run beside this one, so they are checked to have moved by
//! at least what the scenario did; the gauges come from this test's own
//! database, so they are exact.

use crate::support::{policy, usage_limit_in, Api, Engine, Instance, TestServer};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// One sample: the metric name, its labels, its value.
#[derive(Debug, Clone)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses the Prometheus text format (enough of it for these checks:
/// comments, names, quoted label values with escapes, a value).
fn parse(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (series, value) = line.rsplit_once(' ').expect("a value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("value in {line}"));
        let (name, labels) = match series.split_once('{') {
            None => (series.to_string(), BTreeMap::new()),
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').expect("labels end with }");
                (name.to_string(), parse_labels(body))
            }
        };
        out.push(Sample {
            name,
            labels,
            value,
        });
    }
    out
}

fn parse_labels(body: &str) -> BTreeMap<String, String> {
    let mut labels = BTreeMap::new();
    let mut chars = body.chars().peekable();
    loop {
        let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
        if key.is_empty() {
            return labels;
        }
        assert_eq!(chars.next(), Some('"'), "quoted value for {key}");
        let mut value = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some('n') => value.push('\n'),
                    Some(other) => value.push(other),
                    None => break,
                },
                '"' => break,
                c => value.push(c),
            }
        }
        labels.insert(key.trim_start_matches(',').to_string(), value);
        if chars.peek() == Some(&',') {
            chars.next();
        }
    }
}

/// The sum of every sample named `name` whose labels include `labels`.
fn sum(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .sum()
}

async fn scrape(url: &str) -> (String, Vec<Sample>) {
    let resp = crate::support::get(url).await.expect("scrape");
    assert_eq!(resp.status(), 200);
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    let text = resp.text().await.expect("body");
    let samples = parse(&text);
    (text, samples)
}

/// Claims every pending dispatch with a lease of `lease_seconds`.
async fn claim(api: &Api, lease_seconds: u32) -> Vec<Value> {
    let v = api
        .post_ok(
            "/api/v1/dispatches/claim",
            json!({"lease_seconds": lease_seconds, "wait_seconds": 0}),
        )
        .await;
    v["dispatches"].as_array().expect("dispatches").clone()
}

async fn metrics_move_with_a_scripted_scenario(engine: Engine) {
    let s = TestServer::start_prefixed(engine, "metrics").await;
    let api = s.api();
    let (_, before) = scrape(&s.url("/metrics")).await;

    // One candidate on Anthropic's team-a account that waits for a trusted
    // reset once, then stops.
    let profile = api
        .post_ok(
            "/api/v1/profiles",
            json!({"name": "team-a", "candidates": [{
                "label": "Claude", "agent": "claude-code", "provider_id": "anthropic",
                "model_id": "claude-sonnet-4-5", "profile_ref": "claude", "account_ref": "team-a",
                "policy": {"version": 1, "transient": policy(0, 0, 0, "skip"), "hard": policy(0, 0, 600, "stop")}
            }]}),
        )
        .await;
    let profile = profile["id"].as_str().expect("profile id");
    let first = api.route(profile, "kanban").await;
    let second = api.route(profile, "kanban").await;
    for r in [&first, &second] {
        let answer = api.fail(r, usage_limit_in(60)).await;
        assert_eq!(answer["route"]["state"], "waiting_for_reset", "{answer}");
    }
    let (_, waiting) = scrape(&s.url("/metrics")).await;
    assert_eq!(sum(&waiting, "kandev_circuits", &[("state", "open")]), 1.0);
    assert_eq!(
        sum(&waiting, "kandev_routes", &[("state", "waiting_for_reset")]),
        2.0
    );
    assert_eq!(sum(&waiting, "kandev_schedules_pending", &[]), 2.0);

    // The reset: one probe goes, is delivered and succeeds.
    // The timer loop or the clock call fires them, whichever is first.
    api.advance(60.0).await;
    let probe = claim(&api, 60).await;
    assert_eq!(probe.len(), 1, "{probe:?}");
    let (_, probing) = scrape(&s.url("/metrics")).await;
    assert_eq!(
        sum(&probing, "kandev_circuits", &[("state", "probing")]),
        1.0
    );
    assert_eq!(
        sum(&probing, "kandev_dispatches_open", &[("state", "claimed")]),
        1.0
    );
    let delivered = api
        .post_ok(
            &format!(
                "/api/v1/dispatches/{}/ack",
                probe[0]["id"].as_str().expect("id")
            ),
            json!({"generation": probe[0]["generation"]}),
        )
        .await;
    let id = delivered["id"].as_str().expect("route id").to_string();
    api.post_ok(
        &format!("/api/v1/routes/{id}/success"),
        json!({"generation": delivered["generation"], "invocation_id": delivered["invocation_id"],
               "prompt_generation": delivered["prompt_generation"]}),
    )
    .await;

    // The other route is released; its dispatch is claimed with a short
    // lease and never acknowledged: ambiguous once the lease is over.
    api.advance(0.0).await;
    let released = claim(&api, 1).await;
    assert_eq!(released.len(), 1, "{released:?}");
    let other = released[0]["route_id"]
        .as_str()
        .expect("route id")
        .to_string();
    assert_ne!(other, id);
    api.advance(5.0).await;
    let mut stopped = false;
    for _ in 0..200 {
        if api.snapshot(&other).await["state"] == "action_required" {
            stopped = true;
            break;
        }
        // The timer loop looks for expired leases about once a second.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(stopped, "the unacknowledged dispatch became ambiguous");

    let (text, after) = scrape(&s.url("/metrics")).await;
    let moved = |name: &str, labels: &[(&str, &str)], by: f64| {
        let (b, a) = (sum(&before, name, labels), sum(&after, name, labels));
        assert!(
            a >= b + by,
            "{name}{labels:?} moved from {b} to {a}, expected at least +{by}\n{text}"
        );
    };
    moved(
        "kandev_circuit_openings_total",
        &[("scope", "account")],
        1.0,
    );
    moved("kandev_circuit_probes_total", &[("scope", "account")], 1.0);
    moved(
        "kandev_circuit_probe_outcomes_total",
        &[("scope", "account"), ("outcome", "success")],
        1.0,
    );
    moved("kandev_schedules_armed_total", &[], 2.0);
    moved("kandev_schedules_fired_total", &[], 2.0);
    moved("kandev_dispatches_created_total", &[], 2.0);
    moved("kandev_dispatches_claimed_total", &[], 2.0);
    moved("kandev_dispatches_acknowledged_total", &[], 1.0);
    moved("kandev_dispatches_ambiguous_total", &[], 1.0);
    moved("kandev_failures_total", &[("class", "hard")], 2.0);
    // By code and provider, both bounded label sets.
    moved(
        "kandev_failures_by_code_total",
        &[("code", "quota_limited"), ("provider", "anthropic")],
        2.0,
    );
    moved("kandev_timer_lateness_seconds_count", &[], 2.0);
    moved(
        "kandev_http_requests_total",
        &[
            ("method", "POST"),
            ("route", "/api/v1/routes/{id}/failures"),
            ("status", "200"),
        ],
        2.0,
    );
    moved(
        "kandev_http_requests_total",
        &[("method", "GET"), ("route", "/api/v1/routes/{id}")],
        1.0,
    );
    moved(
        "kandev_http_request_duration_seconds_count",
        &[("method", "POST"), ("route", "/api/v1/routes")],
        2.0,
    );
    moved(
        "kandev_http_request_duration_seconds_bucket",
        &[
            ("method", "POST"),
            ("route", "/api/v1/routes"),
            ("le", "+Inf"),
        ],
        2.0,
    );
    assert!(
        !text.contains(&id) && !text.contains(&other),
        "route ids never become labels"
    );

    // The gauges are this database's, exactly.
    let gauge = |name: &str, labels: &[(&str, &str)]| sum(&after, name, labels);
    assert_eq!(gauge("kandev_routes", &[("state", "active")]), 1.0);
    assert_eq!(gauge("kandev_routes", &[("state", "action_required")]), 1.0);
    assert_eq!(gauge("kandev_routes", &[]), 2.0);
    assert_eq!(gauge("kandev_circuits", &[("state", "closed")]), 1.0);
    assert_eq!(gauge("kandev_circuits", &[]), 1.0);
    assert_eq!(gauge("kandev_schedules_pending", &[]), 0.0);
    assert_eq!(gauge("kandev_dispatches_open", &[]), 0.0);
    assert_eq!(gauge("kandev_database_up", &[]), 1.0);
}

/// Two servers on one PostgreSQL database answer the same shared gauges.
#[tokio::test]
async fn gauges_are_the_same_on_every_instance() {
    let a = TestServer::start_prefixed(Engine::Postgres, "metrics").await;
    let b = Instance::start(&a.db.url).await;
    let api = a.api();
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(3, 5, 0, "skip"))])
        .await;
    for _ in 0..3 {
        api.route(&p, "kanban").await;
    }
    let (_, on_a) = scrape(&a.url("/metrics")).await;
    let (_, on_b) = scrape(&b.url("/metrics")).await;
    for samples in [&on_a, &on_b] {
        assert_eq!(sum(samples, "kandev_routes", &[("state", "active")]), 3.0);
    }
    b.stop().await;
}

on_both_engines!(metrics_move_with_a_scripted_scenario);
