//! The unknown-evidence log lives in the database: sanitised,
//! de-duplicated, counted and bounded on both engines; it survives a
//! restart, and two servers on one PostgreSQL database answer
//! `GET /api/v1/catalogue/unknown` with the same log.

use crate::support::{policy, Api, Engine, Instance, TestDb};
use classify::{classify_line, Catalogue, Classification};
use serde_json::{json, Value};
use server::unknown::UnknownLog;

const SECRET: &str = "sk-ant-api03-Abcdefghijklmnop1234";

fn classify(line: &str) -> Classification {
    classify_line(Catalogue::builtin(), line, chrono::Utc::now()).expect("classifies")
}

fn unknown_at(text: &str, at: &str) -> Classification {
    classify(&format!(
        r#"{{"occurred_at":"{at}","items":[{{"kind":"stderr","lines":["{text}"]}}]}}"#
    ))
}

async fn unknown_log_keeps_sanitised_counted_entries(engine: Engine) {
    let db = TestDb::with_prefix(engine, "metrics_unknown").await;
    let log = UnknownLog::new(db.store.clone(), 8);
    for _ in 0..3 {
        let c = classify(
            r#"{"items":[{"kind":"stderr","lines":["weird failure for dev@example.com with key sk-ant-api03-Abcdefghijklmnop1234"]}]}"#,
        );
        assert!(log.record(&c).await.expect("recorded"));
    }
    let known = classify(r#"{"items":[{"kind":"acp_error","code":-32800}]}"#);
    assert!(!log.record(&known).await.expect("recorded"));
    let snap = log.snapshot().await.expect("snapshot");
    assert_eq!(snap.entries.len(), 1);
    assert_eq!(snap.entries[0].count, 3);
    let json = serde_json::to_string(&snap).expect("json");
    assert!(
        !json.contains("dev@example.com") && !json.contains("Abcdefghijklmnop1234"),
        "{json}"
    );
    // What is stored is the sanitised excerpt, not the evidence.
    let (rows, _) = db.store.unknown_evidence(100).await.expect("rows");
    let stored = format!("{rows:?}");
    assert!(
        !stored.contains("dev@example.com") && !stored.contains("Abcdefghijklmnop1234"),
        "{stored}"
    );
}

async fn dedupes_counts_and_bounds(engine: Engine) {
    let db = TestDb::with_prefix(engine, "metrics_unknown").await;
    let log = UnknownLog::new(db.store.clone(), 2);
    let record = |c: Classification| {
        let log = log.clone();
        async move { log.record(&c).await.expect("recorded") }
    };
    assert!(record(unknown_at("mystery failure 1", "2026-11-30T12:00:00Z")).await);
    assert!(record(unknown_at("mystery failure 2", "2026-11-30T12:00:01Z")).await);
    let snap = log.snapshot().await.expect("snapshot");
    assert_eq!(snap.entries.len(), 1, "digits fold: one entry");
    assert_eq!(snap.entries[0].count, 2);
    assert_eq!(
        snap.entries[0].first_seen.to_rfc3339(),
        "2026-11-30T12:00:00+00:00"
    );
    assert_eq!(
        snap.entries[0].last_seen.to_rfc3339(),
        "2026-11-30T12:00:01+00:00"
    );
    assert!(record(unknown_at("other oddity", "2026-11-30T12:00:02Z")).await);
    assert!(record(unknown_at("third thing", "2026-11-30T12:00:03Z")).await);
    let snap = log.snapshot().await.expect("snapshot");
    assert_eq!(snap.capacity, 2);
    assert_eq!(snap.entries.len(), 2);
    assert_eq!(snap.evicted, 1);
    assert!(snap
        .entries
        .iter()
        .all(|e| !e.safe_excerpt.contains("mystery")));
    // A new entry seen earlier than everything kept still stays: the
    // bound drops the others, never the entry just recorded.
    assert!(record(unknown_at("late report", "2026-11-30T11:00:00Z")).await);
    let snap = log.snapshot().await.expect("snapshot");
    assert_eq!(snap.entries.len(), 2);
    assert_eq!(snap.evicted, 2);
    let kept: Vec<&str> = snap
        .entries
        .iter()
        .map(|e| e.safe_excerpt.as_str())
        .collect();
    assert!(
        kept.iter().any(|e| e.contains("late report"))
            && kept.iter().any(|e| e.contains("third thing")),
        "{kept:?}"
    );
}

/// Sightings recorded at once (as several instances would) all count:
/// the upsert is one statement, never a read and a write.
async fn concurrent_sightings_all_count(engine: Engine) {
    let db = TestDb::with_prefix(engine, "metrics_unknown").await;
    let log = UnknownLog::new(db.store.clone(), 8);
    let sightings = (0..24).map(|i| {
        let log = log.clone();
        let c = unknown_at(&format!("intermittent gremlin {i}"), "2026-11-30T12:00:00Z");
        async move { log.record(&c).await.expect("recorded") }
    });
    let recorded = futures::future::join_all(sightings).await;
    assert!(recorded.into_iter().all(|r| r));
    let snap = log.snapshot().await.expect("snapshot");
    assert_eq!(snap.entries.len(), 1, "{snap:?}");
    assert_eq!(snap.entries[0].count, 24);
    assert_eq!(snap.evicted, 0);
}

/// Reports `text` on stderr as a new route's failure: unknown evidence.
async fn report_unknown(api: &Api, profile: &str, text: &str) {
    let route = api.route(profile, "kanban").await;
    let answer = api
        .fail(&route, json!([{"kind": "stderr", "lines": [text]}]))
        .await;
    assert_eq!(
        answer["classification"]["class"], "unclassified",
        "{answer}"
    );
}

async fn one_candidate_profile(api: &Api) -> String {
    api.profile(&[("Claude", policy(3, 5, 0, "skip"), policy(3, 5, 0, "skip"))])
        .await
}

fn entries(snapshot: &Value) -> &Vec<Value> {
    snapshot["entries"].as_array().expect("entries")
}

async fn survives_a_restart(engine: Engine) {
    let db = TestDb::with_prefix(engine, "metrics_unknown").await;
    let first = Instance::start(&db.url).await;
    let profile = one_candidate_profile(&first.api()).await;
    let text = format!("the flux capacitor desynchronised 3 times holding {SECRET}");
    report_unknown(&first.api(), &profile, &text).await;
    report_unknown(&first.api(), &profile, &text.replace('3', "4")).await;
    let before = first.api().get("/api/v1/catalogue/unknown").await;
    assert_eq!(entries(&before).len(), 1, "{before}");
    assert_eq!(entries(&before)[0]["count"], 2);
    assert!(!before.to_string().contains(SECRET), "{before}");
    first.stop().await;

    let second = Instance::start(&db.url).await;
    let after = second.api().get("/api/v1/catalogue/unknown").await;
    assert_eq!(
        after, before,
        "the log is the database's, not the process's"
    );
    report_unknown(&second.api(), &profile, &text).await;
    let counted = second.api().get("/api/v1/catalogue/unknown").await;
    assert_eq!(entries(&counted)[0]["count"], 3);
    second.stop().await;
}

#[tokio::test]
async fn two_servers_on_one_postgres_database_share_the_log() {
    let db = TestDb::with_prefix(Engine::Postgres, "metrics_unknown").await;
    let a = Instance::start(&db.url).await;
    let b = Instance::start(&db.url).await;
    let profile = one_candidate_profile(&a.api()).await;
    report_unknown(&a.api(), &profile, "the warp core hiccuped after 12 ms").await;
    report_unknown(&b.api(), &profile, "the warp core hiccuped after 90 ms").await;
    report_unknown(&b.api(), &profile, "the dilithium matrix is misaligned").await;
    let seen_by_a = a.api().get("/api/v1/catalogue/unknown").await;
    let seen_by_b = b.api().get("/api/v1/catalogue/unknown").await;
    assert_eq!(seen_by_a, seen_by_b);
    let e = entries(&seen_by_a);
    assert_eq!(e.len(), 2, "{seen_by_a}");
    assert!(e[0]["safe_excerpt"]
        .as_str()
        .is_some_and(|x| x.contains("warp core")));
    assert_eq!(e[0]["count"], 2, "one count from each instance");
    assert_eq!(e[1]["count"], 1);
    a.stop().await;
    b.stop().await;
}

on_both_engines!(
    flavor = multi_thread;
    unknown_log_keeps_sanitised_counted_entries,
    concurrent_sightings_all_count,
    dedupes_counts_and_bounds,
    survives_a_restart,
);
