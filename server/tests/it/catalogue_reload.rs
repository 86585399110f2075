//! The catalogue at run time: `serve --catalogue DIR` classifies with the
//! directory; a reload (the admin endpoint, or SIGHUP) swaps in a good
//! directory whole, or keeps the catalogue in force and says why; the
//! version in force is on `/readyz`, `/metrics`, `GET
//! /api/v1/catalogue/current` and every classification.

use crate::catalogue_dir::{break_rules, catalogue_copy, set_version};
use crate::support::{policy, Api, Engine, TestDb, TestServer};
use serde_json::{json, Value};
use server::catalogue::Catalogues;
use std::path::Path;
use std::time::Duration;

async fn server_on(dir: &Path) -> TestServer {
    let catalogue = Catalogues::from_dir(dir).expect("the directory loads");
    let db = TestDb::new(Engine::Sqlite).await;
    let store = db.store.clone();
    TestServer::start_setup(db, store, move |s| server::http::Setup { catalogue, ..s }).await
}

/// The catalogue version of a failure's classification on a fresh route.
async fn classified_with(api: &Api, profile: &str) -> Value {
    let route = api.route(profile, "kanban").await;
    let answer = api
        .fail(
            &route,
            json!([{"kind": "stderr", "lines": ["a failure no catalogue knows 42"]}]),
        )
        .await;
    answer["classification"]["catalogue_version"].clone()
}

async fn text(url: String) -> String {
    crate::support::get(url)
        .await
        .expect("answers")
        .text()
        .await
        .expect("text")
}

#[tokio::test]
async fn a_good_directory_swaps_in_and_a_bad_one_keeps_the_old_and_says_why() {
    let tmp = catalogue_copy();
    set_version(tmp.path(), "9.9.9-a");
    let s = server_on(tmp.path()).await;
    let api = s.api();
    let current = api.get("/api/v1/catalogue/current").await;
    assert_eq!(current["version"], "9.9.9-a");
    assert_eq!(current["source"], "directory");
    assert!(current["rule_count"].as_u64().unwrap() > 100, "{current}");
    assert_eq!(api.get("/api/v1/catalogue").await["version"], "9.9.9-a");
    let ready = text(s.url("/readyz")).await;
    assert_eq!(ready, "ready\ncatalogue 9.9.9-a (directory)\n");
    let metrics = text(s.url("/metrics")).await;
    assert!(
        metrics.contains("kandev_catalogue_info{version=\"9.9.9-a\",source=\"directory\"} 1"),
        "{metrics}"
    );
    // The app's header names it on every page.
    let page = text(s.url("/circuits")).await;
    assert!(page.contains("Catalogue 9.9.9-a"), "{page}");
    let p = policy(2, 5, 0, "stop");
    let profile = api.profile(&[("A", p.clone(), p)]).await;
    assert_eq!(classified_with(&api, &profile).await, "9.9.9-a");

    // A good directory: swapped in, and the answer says what it replaced.
    set_version(tmp.path(), "9.9.9-b");
    let reloaded = api.post_ok("/api/v1/catalogue/reload", json!({})).await;
    assert_eq!(reloaded["in_force"]["version"], "9.9.9-b");
    assert_eq!(reloaded["previous_version"], "9.9.9-a");
    assert_eq!(classified_with(&api, &profile).await, "9.9.9-b");
    assert!(text(s.url("/readyz"))
        .await
        .contains("catalogue 9.9.9-b (directory)"));

    // A bad directory: the old catalogue stays, and the answer says why.
    set_version(tmp.path(), "9.9.9-c");
    break_rules(tmp.path());
    let (status, err) = api.post("/api/v1/catalogue/reload", json!({})).await;
    assert_eq!(status, 422, "{err}");
    assert_eq!(err["error"], "invalid_catalogue");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("9.9.9-b stays in force"),
        "{err}"
    );
    let errors = err["errors"].as_array().expect("errors");
    assert!(
        errors.iter().any(|e| e["field"]
            .as_str()
            .unwrap()
            .starts_with("rules/zz-broken.toml, rule `broken.rule`")),
        "{err}"
    );
    assert_eq!(
        api.get("/api/v1/catalogue/current").await["version"],
        "9.9.9-b"
    );
    assert_eq!(classified_with(&api, &profile).await, "9.9.9-b");
    let metrics = text(s.url("/metrics")).await;
    assert!(
        metrics.contains("kandev_catalogue_info{version=\"9.9.9-b\",source=\"directory\"} 1"),
        "{metrics}"
    );

    // Repaired: the next reload takes it.
    std::fs::remove_file(tmp.path().join("rules/zz-broken.toml")).expect("rm");
    let reloaded = api.post_ok("/api/v1/catalogue/reload", json!({})).await;
    assert_eq!(reloaded["in_force"]["version"], "9.9.9-c");
}

#[tokio::test]
async fn the_embedded_catalogue_does_not_reload_and_readers_may_not_reload() {
    let s = TestServer::start(Engine::Sqlite).await;
    let api = s.api();
    let (status, err) = api.post("/api/v1/catalogue/reload", json!({})).await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(err["error"], "catalogue_not_reloadable");
    let current = api.get("/api/v1/catalogue/current").await;
    assert_eq!(current["source"], "embedded");
    assert_eq!(current["version"], classify::Catalogue::builtin().version());
    assert!(current.get("directory").is_none(), "{current}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Waits until `/readyz` names `version`; answers its last body.
async fn readyz_names(base: &str, version: &str) -> String {
    let mut last = String::new();
    // Up to a minute: a debug build on a busy machine starts slowly.
    for _ in 0..1200 {
        if let Ok(r) = reqwest::get(format!("{base}/readyz")).await {
            last = r.text().await.unwrap_or_default();
            if last.contains(&format!("catalogue {version} ")) {
                return last;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("/readyz never named {version}; last: {last:?}");
}

fn hangup(child: &std::process::Child) {
    let status = std::process::Command::new("kill")
        .args(["-HUP", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// The real binary: `serve --catalogue DIR` refuses a broken directory at
/// start, and reloads on SIGHUP (a good directory swaps in, a bad one is
/// logged and the old one stays).
#[tokio::test]
async fn serve_loads_the_directory_at_start_and_reloads_on_sighup() {
    let tmp = catalogue_copy();
    let data = tempfile::tempdir().expect("tempdir");
    let db = format!("sqlite://{}/c.db", data.path().display());
    let broken = catalogue_copy();
    break_rules(broken.path());
    // Awaited under a bound: a regression that let it serve would otherwise
    // hold the test (and the runtime of its server) for ever.
    let mut serve = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"));
    serve
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", &db])
        .arg("--catalogue")
        .arg(broken.path())
        .env("KANDEV_NO_SEED", "1");
    let refused = crate::access::awaited(serve).await;
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("does not load") && stderr.contains("rules/zz-broken.toml"),
        "{stderr}"
    );

    set_version(tmp.path(), "9.9.9-a");
    let port = free_port();
    let log = data.path().join("server.log");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--database-url",
            &db,
        ])
        .arg("--catalogue")
        .arg(tmp.path())
        .env("KANDEV_NO_SEED", "1")
        .env("RUST_LOG", "info")
        // Logs go to stdout.
        .stdout(std::fs::File::create(&log).expect("log file"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawns");
    let base = format!("http://127.0.0.1:{port}");
    readyz_names(&base, "9.9.9-a").await;

    set_version(tmp.path(), "9.9.9-b");
    hangup(&child);
    readyz_names(&base, "9.9.9-b").await;

    set_version(tmp.path(), "9.9.9-c");
    break_rules(tmp.path());
    hangup(&child);
    let mut logged = String::new();
    for _ in 0..1200 {
        logged = std::fs::read_to_string(&log).unwrap_or_default();
        if logged.contains("catalogue reload rejected") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ready = reqwest::get(format!("{base}/readyz"))
        .await
        .expect("answers")
        .text()
        .await
        .expect("text");
    let _ = child.kill();
    let _ = child.wait();
    assert!(logged.contains("catalogue reload rejected"), "{logged}");
    assert!(logged.contains("9.9.9-b stays in force"), "{logged}");
    assert!(logged.contains("rules/zz-broken.toml"), "{logged}");
    assert!(ready.contains("catalogue 9.9.9-b (directory)"), "{ready}");
}
