//! `kandev-recovery routes list|show|act` and `circuits list|release|probe` against a
//! running server with a token (docs/operations.md, “The operator's
//! command line”).

use crate::support::{overloaded, policy, Engine, TestServer, ADMIN_TOKEN};

/// Runs the binary with `args` against `s` (the token from the
/// environment): (exit code, stdout, stderr).
async fn cli(s: &TestServer, token: Option<&str>, args: &[&str]) -> (i32, String, String) {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"));
    c.args(args)
        .env("KANDEV_SERVER", &s.base)
        .env_remove("KANDEV_TOKEN");
    if let Some(t) = token {
        c.env("KANDEV_TOKEN", t);
    }
    let out = c.output().await.expect("the binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn the_operator_cli_lists_shows_and_acts(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 0, "stop"))])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    api.fail(&route, overloaded()).await;
    let token = Some(ADMIN_TOKEN);

    let (code, out, err) = cli(&s, token, &["routes", "list", "--ref", "task-1"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("ID"), "{out}");
    assert!(out.contains(&id) && out.contains("retry_wait"), "{out}");
    let (code, out, _) = cli(&s, token, &["routes", "list", "--ref", "nobody", "--json"]).await;
    assert_eq!(code, 0);
    assert_eq!(out.trim(), "[]");

    let (code, out, err) = cli(&s, token, &["routes", "show", &id]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("state       retry_wait"), "{out}");
    assert!(out.contains("SEQ") && out.contains("retry"), "{out}");

    let (code, _, err) = cli(&s, token, &["routes", "act", &id, "jump"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("not an action"), "{err}");
    // A stale generation is refused by the server: exit 4, its message.
    let (code, _, err) = cli(
        &s,
        token,
        &["routes", "act", &id, "stop", "--generation", "1"],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("409"), "{err}");
    let (code, out, err) = cli(&s, token, &["routes", "act", &id, "stop"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("action_required"), "{out}");
    let (code, out, err) = cli(&s, token, &["routes", "act", &id, "complete", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let done: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(done["state"], "completed");

    let (code, out, err) = cli(&s, token, &["circuits", "list"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("SCOPE"), "{out}");

    // An account's circuit opened by a usage limit: probed, then released.
    let team = api
        .post_ok(
            "/api/v1/profiles",
            serde_json::json!({"name": "team-a", "candidates": [{
                "label": "Claude", "agent": "claude-code", "provider_id": "anthropic",
                "account_ref": "team-a",
                "policy": {"version": 1, "transient": policy(0, 0, 0, "skip"), "hard": policy(0, 0, 3600, "stop")}
            }]}),
        )
        .await;
    let held = api.route(team["id"].as_str().unwrap(), "office").await;
    api.fail(&held, crate::support::usage_limit_in(900)).await;
    let (code, _, err) = cli(&s, token, &["circuits", "release", "anthropic"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("SCOPE:RESOURCE"), "{err}");
    let (code, _, err) = cli(
        &s,
        token,
        &["circuits", "probe", "account:anthropic/nobody"],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("404"), "{err}");
    let (code, out, err) = cli(
        &s,
        token,
        &["circuits", "probe", "account:anthropic/team-a"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("account:anthropic/team-a is open"), "{out}");
    let (code, out, err) = cli(
        &s,
        token,
        &["circuits", "release", "account:anthropic/team-a", "--json"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let released: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(released["state"], "closed");
    let (code, _, err) = cli(
        &s,
        token,
        &["circuits", "release", "account:anthropic/team-a"],
    )
    .await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("409") && err.contains("closed"), "{err}");

    // Without a token the server refuses: exit 4 and why.
    let (code, _, err) = cli(&s, None, &["routes", "list"]).await;
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("401"), "{err}");
}

on_both_engines!(the_operator_cli_lists_shows_and_acts);
