//! Growing the catalogue from the unknown log (docs/catalogue.md, “Growing
//! the catalogue”): each entry keeps a sanitised skeleton of its envelope
//! and the route attempts it was seen in; `catalogue
//! fixture-from-unknown` writes a fixture ready to label, which `catalogue
//! check` refuses until labelled and accepts once a rule decides it;
//! `catalogue reclassify-unknown` (and `GET
//! /api/v1/catalogue/unknown/reclassify`) count what a catalogue now knows.

use crate::catalogue_dir::{catalogue_copy, set_version};
use crate::support::{policy, Api, Engine, TestDb, TestServer, ADMIN_TOKEN};
use reqwest::Method;
use serde_json::{json, Value};
use server::auth::{Access, Permission, Permissions};
use server::catalogue::Catalogues;
use server::clock::Clock;
use std::path::Path;

const KEY: &str = "sk-ant-api03-Abcdefghijklmnop1234";
const BEARER: &str = "sk-proj-Zk4fQ9wLm2Rt7YxVb3NpHc8D";
const MYSTERY: &str = "the flux capacitor desynchronised 3 times";

/// A failure nothing in the catalogue knows, with secrets in a header, a
/// body and a stderr line.
fn mystery_items() -> Value {
    json!([
        {"kind": "http", "status": 418,
         "headers": {"x-api-key": KEY, "x-request-id": "req_7"},
         "body": format!("teapot for dev@example.com holding {KEY}")},
        {"kind": "stderr", "lines": [format!("Authorization: Bearer {BEARER}"), MYSTERY]},
        {"kind": "process_exit", "exit_code": 3, "signal": null}
    ])
}

async fn one_candidate_profile(api: &Api) -> String {
    api.profile(&[("Claude", policy(3, 5, 0, "skip"), policy(3, 5, 0, "skip"))])
        .await
}

/// Reports the mystery failure on a new route; answers the route id.
async fn mystery_on_a_route(api: &Api, profile: &str) -> String {
    let route = api.route(profile, "kanban").await;
    let answer = api.fail(&route, mystery_items()).await;
    assert_eq!(
        answer["classification"]["class"], "unclassified",
        "{answer}"
    );
    route["id"].as_str().unwrap().to_string()
}

async fn token(s: &TestServer, name: &str, perms: Permissions) -> String {
    Access::new(s.db.store.clone(), Clock::system(), false)
        .create_token(name, perms)
        .await
        .unwrap()
        .secret
}

/// Runs the binary against `s` with `token`: (exit code, stdout, stderr).
async fn cli(s: &TestServer, token: &str, args: &[&str]) -> (i32, String, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args(args)
        .env("KANDEV_SERVER", &s.base)
        .env("KANDEV_TOKEN", token)
        .output()
        .await
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn check(dir: &Path) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args(["catalogue", "check"])
        .arg(dir)
        .output()
        .expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

async fn skeletons_are_kept_without_secrets_and_link_their_attempts(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let profile = one_candidate_profile(&api).await;
    let first = mystery_on_a_route(&api, &profile).await;
    let second = mystery_on_a_route(&api, &profile).await;
    // Outside a route it counts, with no attempt to link.
    let (st, c) = api
        .post(
            "/api/v1/classify",
            json!({"agent": "claude-code", "items": mystery_items()}),
        )
        .await;
    assert_eq!(st, 200, "{c}");

    let log = api.get("/api/v1/catalogue/unknown").await;
    let entries = log["entries"].as_array().expect("entries");
    assert_eq!(entries.len(), 1, "{log}");
    let e = &entries[0];
    assert_eq!(e["count"], 3);
    assert_eq!(e["agent"], "claude-code");
    let id = e["id"].as_str().expect("an id").to_string();
    assert_eq!(id.len(), 16);
    // The attempts it was seen in (the test clock stands still: one
    // time for both), each the route's own.
    let attempts = e["attempts"].as_array().expect("attempts");
    let mut linked: Vec<&str> = attempts
        .iter()
        .map(|a| a["route_id"].as_str().unwrap())
        .collect();
    linked.sort_unstable();
    let mut want = [first.as_str(), second.as_str()];
    want.sort_unstable();
    assert_eq!(linked, want, "{e}");
    for a in attempts {
        let route = a["route_id"].as_str().unwrap();
        let history = api.attempts(route).await;
        assert!(
            history
                .iter()
                .any(|h| h["seq"] == a["attempt_seq"] && h["class"] == "unclassified"),
            "{a} in {history:?}"
        );
    }

    let detail = api.get(&format!("/api/v1/catalogue/unknown/{id}")).await;
    assert_eq!(detail["entry"]["id"], id.as_str());
    let sk = &detail["skeleton"];
    assert_eq!(sk["agent"], "claude-code");
    let kinds: Vec<&str> = sk["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["http", "stderr", "process_exit"], "{sk}");
    assert_eq!(sk["items"][0]["status"], 418);
    assert_eq!(
        sk["items"][0]["header_names"],
        json!(["x-api-key", "x-request-id"])
    );
    assert!(sk["items"][1]["excerpt"]
        .as_str()
        .unwrap()
        .contains("flux capacitor"));
    assert_eq!(sk["items"][2]["exit_code"], 3);

    // No secret reached the answers or the stored rows.
    let (rows, _) = s.db.store.unknown_evidence(100).await.expect("rows");
    let stored = format!("{rows:?}");
    for shown in [log.to_string(), detail.to_string(), stored] {
        for secret in [
            KEY,
            BEARER,
            "Abcdefghijklmnop1234",
            "dev@example.com",
            "req_7",
        ] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
    }

    let (st, body) = api
        .call(
            Method::GET,
            "/api/v1/catalogue/unknown/0000000000000000",
            None,
        )
        .await;
    assert_eq!((st, body["error"].clone()), (404, json!("not_found")));

    // Classifier internals: a token without catalogue:read is refused,
    // by the API and through the command line.
    let select = token(
        &s,
        "select",
        Permissions::of(&[Permission::ProfilesSelect, Permission::EvidenceSubmit]),
    )
    .await;
    let other = Api::with_token(s.base.clone(), Some(&select));
    for path in [
        format!("/api/v1/catalogue/unknown/{id}"),
        "/api/v1/catalogue/unknown/reclassify".to_string(),
    ] {
        let (st, body) = other.call(Method::GET, &path, None).await;
        assert_eq!(st, 403, "{path}: {body}");
    }
    let (code, _, err) = cli(&s, &select, &["catalogue", "fixture-from-unknown", &id]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("403"), "{err}");
    let (code, _, err) = cli(
        &s,
        ADMIN_TOKEN,
        &["catalogue", "fixture-from-unknown", "nope"],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("404"), "{err}");
}

/// A server classifying with the catalogue directory `dir`.
async fn server_on(engine: Engine, dir: &Path) -> TestServer {
    let catalogue = Catalogues::from_dir(dir).expect("the directory loads");
    let db = TestDb::new(engine).await;
    let store = db.store.clone();
    TestServer::start_setup(db, store, move |s| server::http::Setup { catalogue, ..s }).await
}

async fn a_fixture_from_the_log_is_labelled_checked_and_reclassified(engine: Engine) {
    let dir = catalogue_copy();
    set_version(dir.path(), "9.9.9-before");
    let s = server_on(engine, dir.path()).await;
    let api = s.api();
    let profile = one_candidate_profile(&api).await;
    mystery_on_a_route(&api, &profile).await;
    let id = api.get("/api/v1/catalogue/unknown").await["entries"][0]["id"]
        .as_str()
        .unwrap()
        .to_string();

    // Nothing in the catalogue in force knows it.
    let before = api.get("/api/v1/catalogue/unknown/reclassify").await;
    assert_eq!(before["catalogue_version"], "9.9.9-before");
    assert_eq!(
        (before["entries"].clone(), before["classified"].clone()),
        (json!(1), json!(0))
    );

    // The fixture, ready to label: refused until labelled.
    let file = dir.path().join("fixtures/zz-unknown.json");
    let out = file.to_str().unwrap();
    let (code, said, err) = cli(
        &s,
        ADMIN_TOKEN,
        &["catalogue", "fixture-from-unknown", &id, "--out", out],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(said.contains("wrote"), "{said}");
    let text = std::fs::read_to_string(&file).expect("written");
    for secret in [KEY, BEARER, "dev@example.com"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let (code, stdout, _) = cli(&s, ADMIN_TOKEN, &["catalogue", "fixture-from-unknown", &id]).await;
    assert_eq!(code, 0);
    assert_eq!(stdout, text, "stdout and --out write the same fixture");
    let (code, report) = check(dir.path());
    assert_eq!(code, 1, "{report}");
    assert!(report.contains("LABEL-ME"), "{report}");

    // A person labels it and adds the rule: the directory checks.
    std::fs::write(
        dir.path().join("rules/zz-local.toml"),
        "about = \"local\"\n\n[[rule]]\nid = \"local.flux_capacitor\"\ntier = \"text\"\n\
         code = \"provider_overloaded\"\ntext = 'flux capacitor desynchronised'\n",
    )
    .expect("a rule");
    let labelled = text
        .replace("LABEL-ME: a code of catalogue.toml", "provider_overloaded")
        .replace(
            "LABEL-ME: the rule that must decide",
            "local.flux_capacitor",
        );
    std::fs::write(&file, labelled).expect("labelled");
    set_version(dir.path(), "9.9.9-after");
    let (code, report) = check(dir.path());
    assert_eq!(code, 0, "{report}");

    // The candidate directory, tried on the server's log from here…
    let candidate = dir.path().to_str().unwrap();
    let (code, out, err) = cli(
        &s,
        ADMIN_TOKEN,
        &[
            "catalogue",
            "reclassify-unknown",
            "--catalogue",
            candidate,
            "--json",
        ],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let tried: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(tried["catalogue_version"], "9.9.9-after");
    assert_eq!(tried["classified"], 1, "{tried}");
    assert_eq!(tried["by_code"][0]["code"], "provider_overloaded");
    assert_eq!(tried["changed"][0]["id"], id.as_str());
    // …while the server's catalogue still does not know it…
    let (code, out, err) = cli(&s, ADMIN_TOKEN, &["catalogue", "reclassify-unknown"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("0 of 1 logged unknowns now classified"),
        "{out}"
    );
    // …until it is reloaded.
    api.post_ok("/api/v1/catalogue/reload", json!({})).await;
    let after = api.get("/api/v1/catalogue/unknown/reclassify").await;
    assert_eq!(after["catalogue_version"], "9.9.9-after");
    assert_eq!(after["classified"], 1, "{after}");
    let (code, out, err) = cli(&s, ADMIN_TOKEN, &["catalogue", "reclassify-unknown"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("1 of 1 logged unknowns now classified"),
        "{out}"
    );
    assert!(out.contains("provider_overloaded"), "{out}");
    // A candidate that does not load is a usage error, named.
    let (code, _, err) = cli(
        &s,
        ADMIN_TOKEN,
        &[
            "catalogue",
            "reclassify-unknown",
            "--catalogue",
            "/nonexistent",
        ],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not a directory"), "{err}");
}

on_both_engines!(
    flavor = multi_thread;
    skeletons_are_kept_without_secrets_and_link_their_attempts,
    a_fixture_from_the_log_is_labelled_checked_and_reclassified,
);
