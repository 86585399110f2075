//! Paths no other test walks, each on SQLite and PostgreSQL:
//!
//! - a dispatch lease running out unacknowledged while the server runs (no
//!   restart, no clock call): the timer loop alone stops the route as
//!   `ambiguous_dispatch`, once — one event, one transition, nothing
//!   re-dispatched — and an acknowledgement racing the expiry either wins
//!   or is refused, never both;
//! - `retry_now` and `stop` while waiting (`retry_wait` and
//!   `waiting_for_reset`) through the API: one dispatch, early, and the
//!   voided timer never fires a second one; a stop leaves nothing armed;
//! - a stored legacy document that cannot be mapped, written behind the
//!   service's back while a route on it is live: the next failure is kept
//!   in the history but authorises nothing, the route says why, work that
//!   needs the profile is refused with a clear error, and saving the
//!   profile again repairs it with nothing about the route lost;
//! - docs/design.md's “a restart never repeats a dispatch whose completion
//!   is ambiguous” (“Durable scheduling”) under kill -9 of the real binary
//!   at every step of claim → deliver → acknowledge, quiescent and with
//!   requests in flight.

use crate::routes_crash::{spawn, Server};
use crate::support::{overloaded, policy, usage_limit_in, Api, Engine, TestDb, TestServer};
use serde_json::{json, Value};
use sqlx::Connection;
use std::time::{Duration, Instant};

fn id(v: &Value) -> String {
    v["id"].as_str().expect("an id").to_string()
}

/// One number from the test database, read behind the server's back.
async fn count(db: &TestDb, sql: &str) -> i64 {
    if db.url.starts_with("sqlite:") {
        let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
        sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
    } else {
        let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
        sqlx::query_scalar(sql).fetch_one(&mut c).await.unwrap()
    }
}

/// Runs one statement on the test database behind the server's back.
async fn execute(db: &TestDb, sql: &str) {
    if db.url.starts_with("sqlite:") {
        let mut c = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
        sqlx::query(sql).execute(&mut c).await.unwrap();
    } else {
        let mut c = sqlx::PgConnection::connect(&db.url).await.unwrap();
        sqlx::query(sql).execute(&mut c).await.unwrap();
    }
}

/// The kinds of the route's events, in order.
async fn event_kinds(db: &TestDb, route_id: &str) -> Vec<String> {
    db.store
        .events_after(0, Some(route_id), 10_000)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect()
}

async fn ambiguous_events(db: &TestDb, route_id: &str) -> usize {
    event_kinds(db, route_id)
        .await
        .iter()
        .filter(|k| *k == "route.ambiguous")
        .count()
}

async fn act(api: &Api, route: &Value, action: &str) -> (u16, Value) {
    api.post(
        &format!("/api/v1/routes/{}/actions", id(route)),
        json!({"action": action, "expected_generation": route["generation"]}),
    )
    .await
}

/// Polls the route until `done` holds (the timer loop acts in real time,
/// about once a second), or panics after `within`.
async fn until(
    api: &Api,
    route_id: &str,
    within: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let since = Instant::now();
    loop {
        let r = api.snapshot(route_id).await;
        if done(&r) {
            return r;
        }
        assert!(
            since.elapsed() < within,
            "not reached within {within:?}: {r}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A route on a fresh one-candidate profile (no provider id, so no shared
/// circuit holds one test's routes back for another's failures), failed
/// once into `retry_wait`, its one-second retry fired: `retrying`, with a
/// pending dispatch.
async fn retrying(api: &Api, profile: &str) -> Value {
    let route = api.route(profile, "kanban").await;
    let waiting = api.fail(&route, overloaded()).await["route"].clone();
    assert_eq!(waiting["state"], "retry_wait", "{waiting}");
    waiting
}

// ---- a lease running out at run time ----

async fn a_lease_running_out_at_run_time_stops_the_route_once(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(2, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let route = retrying(&api, &p).await;
    let rid = id(&route);
    api.advance(1.0).await;
    let claimed = api.claim_leased(&rid, 5, 0).await;
    assert_eq!(claimed.len(), 1, "{claimed:?}");
    let before = api.snapshot(&rid).await;
    assert_eq!(before["state"], "retrying");
    let events_before = event_kinds(&s.db, &rid).await;

    // Four of the five seconds pass, moved on the clock itself (no clock
    // call, which would look for expired leases on its own): the timer
    // loop wakes, looks (it does every second) and leaves the lease alone.
    s.clock.advance(chrono::Duration::seconds(4));
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    assert_eq!(api.snapshot(&rid).await["generation"], before["generation"]);
    assert_eq!(api.snapshot(&rid).await["state"], "retrying");

    // The lease runs out: the running timer loop, alone, stops the route.
    s.clock.advance(chrono::Duration::seconds(2));
    let stopped = until(&api, &rid, Duration::from_secs(10), |r| {
        r["state"] == "action_required"
    })
    .await;
    assert_eq!(stopped["reason"], "ambiguous_dispatch");
    assert_eq!(
        stopped["generation"].as_i64(),
        before["generation"].as_i64().map(|g| g + 1),
        "one transition"
    );
    // More lease checks, from the loop and from a clock call, change nothing.
    s.clock.advance(chrono::Duration::seconds(60));
    api.advance(60.0).await;
    tokio::time::sleep(Duration::from_millis(2_200)).await;
    let after = api.snapshot(&rid).await;
    assert_eq!(after["generation"], stopped["generation"]);
    let mut expected = events_before.clone();
    expected.push("route.ambiguous".into());
    assert_eq!(event_kinds(&s.db, &rid).await, expected, "one event");
    // Nothing re-dispatched, and the late acknowledgement is refused with
    // the route as it is now.
    assert!(api.claim(&rid).await.is_empty(), "never re-offered");
    assert_eq!(s.db.store.list_dispatches(&rid).await.unwrap().len(), 1);
    let (status, body) = api.ack(&claimed[0]).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["route"]["state"], "action_required");
    assert_eq!(s.db.store.list_attempts(&rid).await.unwrap().len(), 1);
}

/// Acknowledgements sent just as leases run out: each route ends either
/// acknowledged (and never ambiguous) or ambiguous (and its
/// acknowledgement refused), never both, never neither.
async fn an_acknowledgement_racing_the_expiry_wins_or_is_refused(engine: Engine) {
    const ROUTES: usize = 12;
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(2, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let mut claims = Vec::new();
    for _ in 0..ROUTES {
        let route = retrying(&api, &p).await;
        claims.push(route);
    }
    api.advance(1.0).await;
    for c in claims.iter_mut() {
        let ds = api.claim_leased(&id(c), 5, 0).await;
        assert_eq!(ds.len(), 1);
        *c = ds[0].clone();
    }
    // The leases end. The acknowledgements race the timer loop and clock
    // calls (each looks for expired leases), interleaved.
    s.clock.advance(chrono::Duration::seconds(6));
    let acks = claims.iter().map(|d| {
        let api = Api::new(api.base.clone());
        let d = d.clone();
        tokio::spawn(async move { api.ack(&d).await })
    });
    let stoppers: Vec<_> = (0..4)
        .map(|_| {
            let api = Api::new(api.base.clone());
            tokio::spawn(async move { api.advance(0.0).await })
        })
        .collect();
    let acks: Vec<_> = futures::future::join_all(acks)
        .await
        .into_iter()
        .map(|a| a.unwrap())
        .collect();
    for s in stoppers {
        s.await.unwrap();
    }
    api.advance(0.0).await;
    let (mut won, mut lost) = (0, 0);
    for (d, (status, body)) in claims.iter().zip(acks) {
        let rid = d["route_id"].as_str().unwrap();
        let now = api.snapshot(rid).await;
        let ambiguous = ambiguous_events(&s.db, rid).await;
        match status {
            200 => {
                won += 1;
                assert_eq!(now["state"], "retrying", "{now}");
                assert_eq!(ambiguous, 0, "acknowledged, then stopped too: {now}");
            }
            409 => {
                lost += 1;
                assert_eq!(body["route"]["state"], "action_required", "{body}");
                assert_eq!(now["reason"], "ambiguous_dispatch", "{now}");
                assert_eq!(ambiguous, 1);
            }
            other => panic!("acknowledgement answered {other}: {body}"),
        }
        assert_eq!(s.db.store.list_dispatches(rid).await.unwrap().len(), 1);
    }
    println!("{engine:?}: {won} acknowledgements won the race, {lost} were refused");
}

// ---- retry now and stop while waiting ----

/// The two waiting states.
const WAITING: [&str; 2] = ["retry_wait", "waiting_for_reset"];

/// Claude Code's usage limit resetting `seconds` from the test clock's now.
fn usage_limit_from_now(s: &TestServer, seconds: i64) -> Value {
    usage_limit_in((s.clock.now() - crate::support::start_time()).num_seconds() + seconds)
}

/// A fresh route waiting in `state`: a retry a minute out, or a
/// usage-limit reset two minutes out.
async fn waiting_route(s: &TestServer, state: &str) -> Value {
    let api = s.api();
    let p = api
        .profile(&[(
            "Claude",
            policy(3, 60, 0, "stop"),
            policy(0, 0, 300, "stop"),
        )])
        .await;
    let route = api.route(&p, "kanban").await;
    let items = if state == "retry_wait" {
        overloaded()
    } else {
        usage_limit_from_now(s, 120)
    };
    let waiting = api.fail(&route, items).await["route"].clone();
    assert_eq!(waiting["state"], state, "{waiting}");
    waiting
}

async fn retry_now_while_waiting_dispatches_once_early(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    for state in WAITING {
        let waiting = waiting_route(&s, state).await;
        let rid = id(&waiting);
        // A stale generation is refused with the route as it is.
        let stale = json!({"id": rid, "generation": waiting["generation"].as_i64().unwrap() - 1});
        let (status, body) = act(&api, &stale, "retry_now").await;
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("stale_generation")),
            "{body}"
        );
        assert_eq!(
            body["route"],
            api.snapshot(&rid).await,
            "{state}: unchanged"
        );

        let (status, now) = act(&api, &waiting, "retry_now").await;
        assert_eq!(status, 200, "{state}: {now}");
        assert_eq!(now["state"], "retrying");
        assert_eq!(now["pending"], Value::Null);
        assert_eq!(
            now["generation"].as_i64(),
            waiting["generation"].as_i64().map(|g| g + 1)
        );
        let ds = api.claim(&rid).await;
        assert_eq!(ds.len(), 1, "{state}: one dispatch, at once: {ds:?}");
        let reason = if state == "retry_wait" {
            "retry"
        } else {
            "reset_retry"
        };
        assert_eq!(ds[0]["reason"], reason);
        let (status, delivered) = api.ack(&ds[0]).await;
        assert_eq!(
            (status, delivered["state"].as_str()),
            (200, Some("retrying"))
        );
        // The original deadline passes: its schedule was voided, not fired.
        api.advance(600.0).await;
        assert!(
            api.claim(&rid).await.is_empty(),
            "{state}: the timer fired a second dispatch"
        );
        assert_eq!(s.db.store.list_dispatches(&rid).await.unwrap().len(), 1);
        assert_eq!(
            count(
                &s.db,
                &format!(
                    "SELECT COUNT(*) FROM schedules WHERE route_id = '{rid}' AND state = 'armed'"
                )
            )
            .await,
            0,
            "{state}: nothing left armed"
        );
        let kinds = event_kinds(&s.db, &rid).await;
        assert_eq!(
            kinds,
            [
                "route.created",
                "route.failure",
                "route.action",
                "route.dispatch_acked"
            ],
            "{state}: no firing after the action"
        );
        // The early attempt was the pending one: the next failure goes on
        // from it (retry 2 of 3 after a doubled delay; a reset already
        // waited for is not waited for again in the cycle).
        let again = api
            .fail(
                &delivered,
                if state == "retry_wait" {
                    overloaded()
                } else {
                    usage_limit_from_now(&s, 120)
                },
            )
            .await;
        if state == "retry_wait" {
            assert_eq!(again["route"]["pending"]["retry_ordinal"], 2, "{again}");
            assert_eq!(again["decision"]["kind"], "retry");
        } else {
            assert_eq!(again["route"]["state"], "action_required", "{again}");
            assert_eq!(again["route"]["reason"], "stopped_by_policy");
        }
    }
}

async fn stop_while_waiting_leaves_nothing_armed(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    for state in WAITING {
        let waiting = waiting_route(&s, state).await;
        let rid = id(&waiting);
        let (status, stopped) = act(&api, &waiting, "stop").await;
        assert_eq!(status, 200, "{state}: {stopped}");
        assert_eq!(
            (
                stopped["state"].as_str(),
                stopped["reason"].as_str(),
                &stopped["pending"]
            ),
            (
                Some("action_required"),
                Some("stopped_by_user"),
                &Value::Null
            ),
            "{state}"
        );
        // Stopping again, even naming the old generation, changes nothing.
        let (status, again) = act(&api, &waiting, "stop").await;
        assert_eq!((status, &again), (200, &stopped), "{state}: idempotent");
        // The deadline passes: nothing fires.
        api.advance(600.0).await;
        assert!(
            api.claim(&rid).await.is_empty(),
            "{state}: a stopped route was dispatched"
        );
        assert!(s.db.store.list_dispatches(&rid).await.unwrap().is_empty());
        assert_eq!(
            count(
                &s.db,
                &format!(
                    "SELECT COUNT(*) FROM schedules WHERE route_id = '{rid}' AND state = 'armed'"
                )
            )
            .await,
            0
        );
        let now = api.snapshot(&rid).await;
        assert_eq!(now["generation"], stopped["generation"], "{state}");
        assert_eq!(
            event_kinds(&s.db, &rid).await,
            ["route.created", "route.failure", "route.action"],
            "{state}: one transition"
        );
        // A person takes it up again: a new cycle, one dispatch.
        let (status, resumed) = act(&api, &now, "retry_now").await;
        assert_eq!(
            (status, resumed["state"].as_str()),
            (200, Some("retrying")),
            "{resumed}"
        );
        assert_eq!(
            resumed["cycle"].as_i64(),
            now["cycle"].as_i64().map(|c| c + 1)
        );
        assert_eq!(api.claim(&rid).await.len(), 1);
        assert_eq!(
            s.db.store.list_attempts(&rid).await.unwrap().len(),
            1,
            "history kept"
        );
    }
}

// ---- a legacy document that cannot be mapped, under a live route ----

async fn an_unmappable_legacy_document_refuses_work_on_a_live_route(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[
            ("Claude", policy(2, 1, 0, "skip"), policy(0, 0, 0, "skip")),
            ("Codex", policy(0, 0, 0, "stop"), policy(0, 0, 0, "stop")),
        ])
        .await;
    // Live and with a history: one failure retried, the retry delivered.
    let route = retrying(&api, &p).await;
    let rid = id(&route);
    api.advance(1.0).await;
    let live = api.deliver(&rid).await;
    assert_eq!(live["state"], "retrying");

    // The stored document becomes a legacy one the normaliser cannot map
    // (an `on_error` it does not know), written straight into the store
    // with the candidates' own ids, as an old release might have left it.
    let profile = api.get(&format!("/api/v1/profiles/{p}")).await;
    let legacy: Vec<Value> = profile["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| json!({"id": c["id"], "label": c["label"], "agent": c["agent"], "provider_id": "", "model_id": "",
                        "profile_ref": "", "policy": {"on_error": "retry_forever"}}))
        .collect();
    let document = serde_json::to_string(&legacy).unwrap();
    execute(
        &s.db,
        &format!("UPDATE profiles SET document = '{document}' WHERE id = '{p}'"),
    )
    .await;
    let shown = api.get(&format!("/api/v1/profiles/{p}")).await;
    assert_eq!(shown["candidates"], json!([]), "{shown}");
    assert_eq!(
        shown["configuration_error"]["errors"][0]["field"],
        "candidates[0].policy.on_error"
    );

    // The next failure would be retried by the old policy: it is recorded,
    // authorises nothing, and the route says why.
    let answer = api.fail(&live, overloaded()).await;
    assert_eq!(answer["decision"]["kind"], "stop", "{answer}");
    let stopped = answer["route"].clone();
    assert_eq!(
        (stopped["state"].as_str(), stopped["reason"].as_str()),
        (Some("action_required"), Some("profile_misconfigured")),
        "{stopped}"
    );
    assert_eq!(
        stopped["candidate"], live["candidate"],
        "the route keeps its place"
    );
    assert_eq!(stopped["last_failure"]["code"], "provider_overloaded");
    api.advance(600.0).await;
    assert!(api.claim(&rid).await.is_empty(), "nothing dispatched");
    assert_eq!(s.db.store.list_dispatches(&rid).await.unwrap().len(), 1);
    assert_eq!(
        count(
            &s.db,
            &format!("SELECT COUNT(*) FROM schedules WHERE route_id = '{rid}' AND state = 'armed'")
        )
        .await,
        0,
        "nothing armed"
    );

    // Work that needs the profile is refused, saying what to do, and the
    // route stays as it is.
    for action in ["retry_now", "skip_now"] {
        let (status, body) = act(&api, &stopped, action).await;
        assert_eq!(
            (status, body["error"].as_str()),
            (409, Some("profile_unusable")),
            "{action}: {body}"
        );
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("cannot be mapped"),
            "{action}: the refusal says why: {body}"
        );
        assert_eq!(
            api.snapshot(&rid).await["generation"],
            stopped["generation"]
        );
    }
    // The stored document is left for repair, and a new route is refused.
    let stored = s.db.store.get_profile(&p).await.unwrap().unwrap();
    assert_eq!(stored.document, document);
    let (status, body) = api
        .post(
            "/api/v1/routes",
            json!({"profile_id": p, "caller": {"kind": "kanban", "ref": "new"}}),
        )
        .await;
    assert_eq!(status, 409, "{body}");

    // Nothing about the route was lost: both attempts, the first with the
    // policy it was decided under, the second with none.
    let attempts = api.get(&format!("/api/v1/routes/{rid}/attempts")).await;
    let attempts = attempts.as_array().expect("attempts").clone();
    assert_eq!(attempts.len(), 2, "{attempts:?}");
    // Newest first: the refused one names no policy, the first its own.
    assert_eq!(attempts[0]["policy"], Value::Null, "{attempts:?}");
    assert_ne!(attempts[1]["policy"], Value::Null, "{attempts:?}");

    // Saving the profile again repairs it: the person's retry goes.
    let repaired = api
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/profiles/{p}"),
            Some(json!({"name": "scenario", "revision": shown["revision"], "candidates": profile["candidates"]})),
        )
        .await;
    assert_eq!(repaired.0, 200, "{}", repaired.1);
    let (status, resumed) = act(&api, &stopped, "retry_now").await;
    assert_eq!(
        (status, resumed["state"].as_str()),
        (200, Some("retrying")),
        "{resumed}"
    );
    assert_eq!(resumed["candidate"], live["candidate"]);
    assert_eq!(api.claim(&rid).await.len(), 1);
    let after = api.get(&format!("/api/v1/routes/{rid}/attempts")).await;
    assert_eq!(
        after.as_array().unwrap()[..],
        attempts[..],
        "history unchanged"
    );
}

// ---- kill -9 at every step of claim → deliver → acknowledge ----

/// Far enough to end every 30-second lease these tests take. Each server
/// starts its test clock at the real time again, so a lease taken on a
/// clock the previous server had moved on ends later than it seems.
const PAST_EVERY_LEASE: f64 = 3_600.0;

/// kill -9 and a start on the same database (a new test clock: now again).
async fn kill_and_restart(server: &mut Server, db: &TestDb) -> Server {
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    spawn(&db.url).await
}

/// The end of every route in these tests: delivered at most once (one
/// dispatch ever, never re-offered), and acknowledged (`retrying`) exactly
/// when its runner acknowledged it, ambiguous (stopped once) otherwise.
async fn check_ending(db: &TestDb, api: &Api, rid: &str, acknowledged: bool, step: &str) {
    let r = api.snapshot(rid).await;
    let dispatches = db.store.list_dispatches(rid).await.unwrap();
    assert_eq!(
        dispatches.len(),
        1,
        "{step}: one dispatch ever: {dispatches:?}"
    );
    assert!(
        api.claim(rid).await.is_empty(),
        "{step}: re-offered after the kill"
    );
    let ambiguous = ambiguous_events(db, rid).await;
    if acknowledged {
        assert_eq!(
            (r["state"].as_str(), ambiguous),
            (Some("retrying"), 0),
            "{step}: {r}"
        );
        assert_eq!(dispatches[0].state, "acked", "{step}");
    } else {
        assert_eq!(
            (r["state"].as_str(), r["reason"].as_str(), ambiguous),
            (Some("action_required"), Some("ambiguous_dispatch"), 1),
            "{step}: {r}"
        );
    }
}

/// Sends `requests` (path, body) at once and kills the server as soon as
/// the first answer arrives, so the kill lands while the others are
/// anywhere between unsent and answered. Answers each one's status, if an
/// answer came.
async fn kill_in_flight(
    server: &mut Server,
    requests: Vec<(String, Value)>,
) -> Vec<Option<(u16, Value)>> {
    let client = crate::support::client();
    let (first_tx, mut first_rx) = tokio::sync::mpsc::channel::<()>(requests.len());
    let tasks: Vec<_> = requests
        .into_iter()
        .map(|(url, body)| {
            let (client, first) = (client.clone(), first_tx.clone());
            tokio::spawn(async move {
                let answer = match client.post(url).json(&body).send().await {
                    Ok(resp) => {
                        let status = resp.status().as_u16();
                        match resp.json::<Value>().await {
                            Ok(v) => Some((status, v)),
                            Err(_) => None,
                        }
                    }
                    Err(_) => None,
                };
                let _ = first.send(()).await;
                answer
            })
        })
        .collect();
    first_rx.recv().await;
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

async fn kill_at_every_step_never_repeats_a_dispatch(engine: Engine) {
    const IN_FLIGHT: usize = 16;
    let db = TestDb::new(engine).await;
    // The spawned server checks tokens like any other: the tests' admin.
    crate::support::grant_admin(&db.store).await;
    let mut server = spawn(&db.url).await;
    let api = Api::new(server.api.base.clone());
    let p = api
        .profile(&[("Claude", policy(1, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;

    // 1. A kill with a route resting at each step.
    let mut steps = Vec::new();
    for _ in 0..5 {
        steps.push(id(&retrying(&api, &p).await));
    }
    api.advance(2.0).await;
    let [pending, unread, alive, dead, acked] = <[String; 5]>::try_from(steps).unwrap();
    // Claimed, but its answer never read: to the server the same as an
    // answer lost with the connection.
    assert_eq!(api.claim_leased(&unread, 30, 0).await.len(), 1);
    // Claimed and delivered; its runner outlives the server (ten minutes).
    let held = api.claim_leased(&alive, 600, 0).await;
    assert_eq!(held.len(), 1);
    // Claimed and delivered; its runner dies with the server.
    assert_eq!(api.claim_leased(&dead, 30, 0).await.len(), 1);
    // Delivered and acknowledged.
    assert_eq!(api.deliver(&acked).await["state"], "retrying");

    server = kill_and_restart(&mut server, &db).await;
    let api = Api::new(server.api.base.clone());
    // Never claimed: provably undispatched, offered again, once.
    assert_eq!(api.deliver(&pending).await["state"], "retrying");
    // The runner that survived acknowledges within its lease.
    let (status, r) = api.ack(&held[0]).await;
    assert_eq!(
        (status, r["state"].as_str()),
        (200, Some("retrying")),
        "{r}"
    );
    // The other leases run out unacknowledged.
    api.advance(PAST_EVERY_LEASE).await;
    for (rid, acknowledged, step) in [
        (&pending, true, "never claimed"),
        (&unread, false, "claimed, answer unread"),
        (&alive, true, "delivered, acknowledged after the restart"),
        (&dead, false, "delivered, never acknowledged"),
        (&acked, true, "acknowledged before the kill"),
    ] {
        check_ending(&db, &api, rid, acknowledged, step).await;
    }

    // 2. A kill while claims are in flight.
    let mut routes = Vec::new();
    for _ in 0..IN_FLIGHT {
        routes.push(id(&retrying(&api, &p).await));
    }
    api.advance(2.0).await;
    let claims = routes
        .iter()
        .map(|rid| {
            (
                api_url(&api, "/api/v1/dispatches/claim"),
                json!({"route_id": rid, "lease_seconds": 30, "wait_seconds": 0}),
            )
        })
        .collect();
    let answers = kill_in_flight(&mut server, claims).await;
    server = spawn(&db.url).await;
    let api = Api::new(server.api.base.clone());
    let (mut answered, mut reoffered, mut lost) = (0, 0, 0);
    let mut acknowledged = Vec::new();
    for (rid, answer) in routes.iter().zip(&answers) {
        let handed = match answer {
            Some((200, v)) => v["dispatches"].as_array().unwrap().clone(),
            _ => Vec::new(),
        };
        let ds = if handed.is_empty() {
            // No answer: the runner asks again. A claim that never
            // committed is offered again; one that did is never re-offered.
            let again = api.claim_leased(rid, 30, 0).await;
            if again.is_empty() {
                lost += 1
            } else {
                reoffered += 1
            }
            again
        } else {
            answered += 1;
            handed
        };
        if let Some(d) = ds.first() {
            let (status, r) = api.ack(d).await;
            assert_eq!(
                (status, r["state"].as_str()),
                (200, Some("retrying")),
                "{r}"
            );
        }
        acknowledged.push(!ds.is_empty());
    }
    // The new server's test clock starts at the real now again, while the
    // killed one's had been moved an hour on (step 1's check): a claim it
    // committed holds a lease that ends an hour later by the new clock.
    api.advance(2.0 * PAST_EVERY_LEASE).await;
    for (rid, acked) in routes.iter().zip(acknowledged) {
        check_ending(&db, &api, rid, acked, "claim in flight").await;
    }
    println!(
        "{engine:?}, claims in flight at the kill: {answered} answered, {reoffered} not committed \
         (offered again), {lost} committed but unanswered (ambiguous)"
    );

    // 3. A kill while acknowledgements are in flight: the runners have
    // delivered, and send their acknowledgements again after the restart.
    let mut claimed = Vec::new();
    for _ in 0..IN_FLIGHT {
        claimed.push(retrying(&api, &p).await);
    }
    api.advance(2.0).await;
    for c in claimed.iter_mut() {
        let ds = api.claim_leased(&id(c), 30, 0).await;
        assert_eq!(ds.len(), 1);
        *c = ds[0].clone();
    }
    let acks = claimed
        .iter()
        .map(|d| {
            (
                api_url(&api, &format!("/api/v1/dispatches/{}/ack", id(d))),
                json!({"generation": d["generation"]}),
            )
        })
        .collect();
    let answers = kill_in_flight(&mut server, acks).await;
    let before = answers
        .iter()
        .filter(|a| matches!(a, Some((200, _))))
        .count();
    server = spawn(&db.url).await;
    let api = Api::new(server.api.base.clone());
    for d in &claimed {
        let (status, r) = api.ack(d).await;
        assert_eq!(
            (status, r["state"].as_str()),
            (200, Some("retrying")),
            "again: {r}"
        );
    }
    api.advance(PAST_EVERY_LEASE).await;
    for d in &claimed {
        check_ending(
            &db,
            &api,
            d["route_id"].as_str().unwrap(),
            true,
            "ack in flight",
        )
        .await;
    }
    println!("{engine:?}, acknowledgements in flight at the kill: {before} of {IN_FLIGHT} answered before it");
    server.child.kill().unwrap();
    server.child.wait().unwrap();
}

fn api_url(api: &Api, path: &str) -> String {
    format!("{}{}", api.base, path)
}

on_both_engines!(
    flavor = multi_thread;
    a_lease_running_out_at_run_time_stops_the_route_once,
    an_acknowledgement_racing_the_expiry_wins_or_is_refused,
    retry_now_while_waiting_dispatches_once_early,
    stop_while_waiting_leaves_nothing_armed,
    an_unmappable_legacy_document_refuses_work_on_a_live_route,
    kill_at_every_step_never_repeats_a_dispatch,
);
