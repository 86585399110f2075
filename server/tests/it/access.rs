//! Access control: the permission matrix over every endpoint of the route
//! list, docs/design.md's permission rules as requests, and tokens (revocation,
//! secrets never stored).

use crate::support::{policy, Api, Engine, TestServer};
use reqwest::Method;
use serde_json::{json, Value};
use server::auth::rules::{decide, Credential, Decision, Principal, Via};
use server::auth::{Access, Permission, Permissions, Rule};
use server::clock::Clock;
use server::http::api::{endpoints, Endpoint};

/// One kind of credential the matrix tries.
struct Who {
    label: String,
    /// The headers that carry it (a bearer token, a session cookie and
    /// its CSRF token).
    headers: Vec<(&'static str, String)>,
    /// What the pure rules see for this credential.
    credential: Credential,
}

fn bearer(token: &str) -> Vec<(&'static str, String)> {
    vec![("authorization", format!("Bearer {token}"))]
}

/// A client sending `headers` with every request.
fn client_for(headers: &[(&'static str, String)]) -> reqwest::Client {
    let mut map = reqwest::header::HeaderMap::new();
    for (name, value) in headers {
        map.insert(*name, value.parse().unwrap());
    }
    reqwest::Client::builder()
        .default_headers(map)
        .redirect(reqwest::redirect::Policy::none())
        // A request that never gets an answer fails here, naming itself,
        // instead of holding the whole suite (one such hang was seen in
        // `browser_sessions` on SQLite, once, under a full run's load).
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .unwrap()
}

/// Opens a sign-in link as a browser does: its page (which uses nothing
/// up), then the page's button (a POST of the code).
pub async fn open_link(client: &reqwest::Client, link: &str) -> reqwest::Response {
    let page = client.get(link).send().await.unwrap();
    assert_eq!(page.status(), 200, "{link}");
    let html = page.text().await.unwrap();
    let code = link.split("code=").nth(1).unwrap();
    assert!(html.contains(&format!("value=\"{code}\"")), "{html}");
    assert!(
        html.contains("<form method=\"post\" action=\"/sign-in\">"),
        "{html}"
    );
    let base = &link[..link.find("/sign-in").unwrap()];
    client
        .post(format!("{base}/sign-in"))
        .form(&[("code", code)])
        .send()
        .await
        .unwrap()
}

/// Signs `user` in through a fresh sign-in link; answers the session
/// cookie's and the CSRF cookie's values.
pub async fn sign_in(s: &TestServer, name: &str, perms: Permissions) -> (String, String) {
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let user = access.create_user(name, perms).await.unwrap();
    let path = access.sign_in_path(&user).await.unwrap();
    let resp = open_link(&client_for(&[]), &s.url(&path)).await;
    assert_eq!(resp.status(), 303);
    let cookies: Vec<String> = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .collect();
    let value = |name: &str| {
        cookies
            .iter()
            .find_map(|c| c.strip_prefix(&format!("{name}=")))
            .map(|rest| rest.split(';').next().unwrap().to_string())
            .unwrap_or_else(|| panic!("{name} in {cookies:?}"))
    };
    (value("kandev_session"), value("kandev_csrf"))
}

fn session_headers(session: &str, csrf: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![("cookie", format!("kandev_session={session}"))];
    if let Some(c) = csrf {
        h.push(("x-csrf-token", c.to_string()));
    }
    h
}

async fn token(s: &TestServer, name: &str, perms: Permissions) -> String {
    Access::new(s.db.store.clone(), Clock::system(), false)
        .create_token(name, perms)
        .await
        .unwrap()
        .secret
}

fn principal(perms: Permissions, via: Via) -> Credential {
    Credential::Valid(Principal {
        id: String::new(),
        name: String::new(),
        permissions: perms,
        via,
    })
}

async fn everyone(s: &TestServer) -> Vec<Who> {
    let mut all = vec![
        Who {
            label: "no credentials".into(),
            headers: Vec::new(),
            credential: Credential::Missing,
        },
        Who {
            label: "an unknown token".into(),
            headers: bearer("kr_not_a_token"),
            credential: Credential::Invalid("API token"),
        },
        Who {
            label: "an unknown session".into(),
            headers: session_headers("not-a-session", Some("x")),
            credential: Credential::Invalid("session"),
        },
    ];
    for p in Permission::ALL {
        let perms = Permissions::of(&[p]);
        all.push(Who {
            label: format!("a token with only {p}"),
            headers: bearer(&token(s, &format!("only {p}"), perms).await),
            credential: principal(perms, Via::Token),
        });
    }
    let (session, csrf) = sign_in(s, "matrix admin", Permissions::admin()).await;
    all.push(Who {
        label: "an admin's browser session without its CSRF token".into(),
        headers: session_headers(&session, None),
        credential: principal(Permissions::admin(), Via::Session { csrf: false }),
    });
    all.push(Who {
        label: "an admin's browser session with a wrong CSRF token".into(),
        headers: session_headers(&session, Some(&"0".repeat(csrf.len()))),
        credential: principal(Permissions::admin(), Via::Session { csrf: false }),
    });
    // Last: on the sign-out endpoint this one really signs out.
    all.push(Who {
        label: "an admin's browser session with its CSRF token".into(),
        headers: session_headers(&session, Some(&csrf)),
        credential: principal(Permissions::admin(), Via::Session { csrf: true }),
    });
    all
}

/// A concrete path for an endpoint's `{param}` placeholders.
fn concrete(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = rest[open..].find('}').expect("a closed placeholder") + open;
        out.push_str("no-such-id");
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

async fn request(s: &TestServer, headers: &[(&'static str, String)], e: &Endpoint) -> (u16, Value) {
    let path = concrete(&e.path);
    let mut req = client_for(headers).request(e.method.clone(), s.url(&path));
    if e.method != Method::GET && e.method != Method::DELETE {
        req = req.json(&json!({}));
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    // The event stream answers its headers and then stays open: read only
    // the status.
    if e.path.ends_with("/events") && status == 200 {
        return (status, Value::Null);
    }
    let text = resp.text().await.unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Every endpoint × every kind of credential answers what the rules say:
/// 401 without a valid credential, 403 without the permission, and
/// otherwise the handler's own answer (never 401 or 403). The list comes
/// from the route list itself, so a new endpoint is in the matrix the
/// moment it is served, and cannot be served without a rule.
async fn permission_matrix(engine: Engine) {
    let s = TestServer::start(engine).await;
    let mut list = endpoints();
    assert!(list.len() >= 20, "the route list: {list:?}");
    // Signing out ends the matrix's session: that endpoint goes last.
    list.sort_by_key(|e| e.path.ends_with("/sign-out"));
    let who = everyone(&s).await;
    let mut checked = 0;
    for e in &list {
        for w in &who {
            let (status, body) = request(&s, &w.headers, e).await;
            let mutating = e.method != Method::GET;
            let what = format!("{} {} with {}: {status} {body}", e.method, e.path, w.label);
            match decide(e.rule, &w.credential, mutating) {
                Decision::Allow => {
                    assert!(status != 401 && status != 403, "{what} (should be allowed)");
                    // The route exists: not the API's 404 for unknown paths.
                    assert!(status != 405, "{what}");
                }
                Decision::Unauthenticated(_) => {
                    assert_eq!(status, 401, "{what}");
                    assert_eq!(body["error"], "unauthorized", "{what}");
                    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
                }
                Decision::Forbidden(_) => {
                    assert_eq!(status, 403, "{what}");
                    assert_eq!(body["error"], "forbidden", "{what}");
                }
            }
            checked += 1;
        }
        // The administrator may do everything.
        let (status, body) = request(&s, &bearer(crate::support::ADMIN_TOKEN), e).await;
        assert!(
            status != 401 && status != 403,
            "{} {} as admin: {status} {body}",
            e.method,
            e.path
        );
    }
    assert_eq!(checked, list.len() * who.len());
}

/// The route list and the OpenAPI document agree: every documented
/// operation has a rule (the document is built from the same list).
#[test]
fn every_documented_operation_has_a_rule() {
    let doc = serde_json::to_value(server::http::api::document()).unwrap();
    let list = endpoints();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if !["get", "put", "post", "delete", "patch"].contains(&method.as_str()) {
                continue;
            }
            assert!(
                list.iter()
                    .any(|e| e.path == *path && e.method.as_str().eq_ignore_ascii_case(method)),
                "{method} {path} is documented but has no rule in the route list"
            );
        }
    }
    // And the rules docs/design.md (“Permissions”) fixes.
    let rule = |m: Method, p: &str| {
        list.iter()
            .find(|e| e.method == m && e.path == p)
            .unwrap_or_else(|| panic!("{m} {p} is in the route list"))
            .rule
    };
    let manage = Rule::Need(Permission::ProfilesManage);
    assert_eq!(rule(Method::POST, "/api/v1/profiles"), manage);
    assert_eq!(rule(Method::PUT, "/api/v1/profiles/{id}"), manage);
    assert_eq!(rule(Method::DELETE, "/api/v1/profiles/{id}"), manage);
    assert_eq!(rule(Method::GET, "/healthz"), Rule::Public);
    assert_eq!(rule(Method::GET, "/readyz"), Rule::Public);
    assert_eq!(
        rule(Method::GET, "/api/v1/catalogue/unknown"),
        Rule::Need(Permission::CatalogueRead)
    );
    // Nothing but profiles:manage (or admin) changes a policy.
    for e in &list {
        if e.path.starts_with("/api/v1/profiles") && e.method != Method::GET {
            if e.path.ends_with("/validate") {
                continue;
            }
            assert_eq!(e.rule, manage, "{} {}", e.method, e.path);
        }
    }
}

/// docs/design.md's permission rules with real requests: selecting a profile and Office
/// assignment open routes (each for its own caller) and change no policy;
/// evidence submission reports but does not act; only profiles:manage edits.
async fn spec_permission_rules(engine: Engine) {
    let s = TestServer::start(engine).await;
    let admin = s.api();
    let profile = admin
        .profile(&[("Claude", policy(1, 5, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    let stored = admin.get(&format!("/api/v1/profiles/{profile}")).await;
    let as_token = |perms: &[Permission]| {
        let perms = Permissions::of(perms);
        let name = format!("rules {}", perms.to_list_string());
        let s = &s;
        async move { Api::with_token(s.base.clone(), Some(&token(s, &name, perms).await)) }
    };
    let select = as_token(&[Permission::ProfilesSelect]).await;
    let office = as_token(&[Permission::OfficeAssign]).await;
    let evidence = as_token(&[Permission::EvidenceSubmit]).await;
    let manage = as_token(&[Permission::ProfilesManage]).await;
    let open = |kind: &str| json!({"profile_id": profile, "caller": {"kind": kind, "ref": "t"}});

    let (st, kanban) = select.post("/api/v1/routes", open("kanban")).await;
    assert_eq!(st, 201, "{kanban}");
    let (st, body) = select.post("/api/v1/routes", open("office")).await;
    assert_eq!(
        (st, body["error"].clone()),
        (403, json!("forbidden")),
        "{body}"
    );
    let (st, body) = office.post("/api/v1/routes", open("office")).await;
    assert_eq!(st, 201, "{body}");
    let (st, body) = office.post("/api/v1/routes", open("kanban")).await;
    assert_eq!(st, 403, "{body}");

    // No permission but profiles:manage changes a policy.
    let edit = json!({"name": "changed", "revision": stored["revision"], "candidates": stored["candidates"]});
    for (who, api) in [
        ("select", &select),
        ("office", &office),
        ("evidence", &evidence),
    ] {
        let (st, body) = api
            .call(
                Method::PUT,
                &format!("/api/v1/profiles/{profile}"),
                Some(edit.clone()),
            )
            .await;
        assert_eq!(st, 403, "{who}: {body}");
        // Nor the unknown-evidence log (classifier internals).
        let (st, _) = api
            .call(Method::GET, "/api/v1/catalogue/unknown", None)
            .await;
        assert_eq!(st, 403, "{who}");
    }
    assert_eq!(
        admin.get(&format!("/api/v1/profiles/{profile}")).await,
        stored
    );
    let (st, body) = manage
        .call(
            Method::PUT,
            &format!("/api/v1/profiles/{profile}"),
            Some(edit),
        )
        .await;
    assert_eq!(st, 200, "{body}");

    // Evidence submission reports failures on routes it opened, or with
    // `routes:any` on any route, but takes no manual action; on another
    // caller's route it is told there is no such route.
    let kanban_id = kanban["id"].as_str().unwrap();
    let (st, body) = evidence
        .post(
            &format!("/api/v1/routes/{kanban_id}/failures"),
            json!({"generation": kanban["generation"], "invocation_id": kanban["invocation_id"],
                "prompt_generation": kanban["prompt_generation"], "phase": "prompt",
                "agent": "claude-code", "provider_id": "anthropic",
                "items": crate::support::overloaded()}),
        )
        .await;
    assert_eq!(
        (st, body["error"].clone()),
        (404, json!("not_found")),
        "{body}"
    );
    let evidence = as_token(&[Permission::EvidenceSubmit, Permission::RoutesAny]).await;
    let answer = evidence.fail(&kanban, crate::support::overloaded()).await;
    assert_eq!(answer["route"]["state"], "retry_wait", "{answer}");
    let (st, _) = evidence
        .post(
            &format!("/api/v1/routes/{}/actions", kanban["id"].as_str().unwrap()),
            json!({"action": "cancel", "expected_generation": answer["route"]["generation"]}),
        )
        .await;
    assert_eq!(st, 403);
    // Any token reads.
    let (st, _) = evidence.call(Method::GET, "/api/v1/routes", None).await;
    assert_eq!(st, 200);
}

/// A revoked token stops working at once; the database holds only digests.
async fn revoked_tokens_stop_at_once(engine: Engine) {
    let s = TestServer::start(engine).await;
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let made = access
        .create_token("short-lived", Permissions::of(&[Permission::RoutesAct]))
        .await
        .unwrap();
    let api = Api::with_token(s.base.clone(), Some(&made.secret));
    let (st, _) = api.call(Method::GET, "/api/v1/profiles", None).await;
    assert_eq!(st, 200);
    let stored = access.list_tokens().await.unwrap();
    for t in &stored {
        assert!(!t.secret_hash.contains(&made.secret[3..]), "{t:?}");
    }
    assert!(stored.iter().all(|t| t.secret_hash != made.secret));
    let revoked = access.revoke_token("short-lived").await.unwrap();
    assert_eq!(revoked.len(), 1);
    let (st, body) = api.call(Method::GET, "/api/v1/profiles", None).await;
    assert_eq!(st, 401, "{body}");
    assert_eq!(body["error"], "unauthorized");
    // Revoking again finds nothing live; the name can be used again.
    assert!(access.revoke_token("short-lived").await.unwrap().is_empty());
    access
        .create_token("short-lived", Permissions::admin())
        .await
        .unwrap();
}

/// A failure reported with a token is admitted exactly as before though
/// its route is read with the token (one read): a revoked token, one
/// without `evidence:submit` and a malformed header change nothing and
/// answer 401, 403 and 401; a route that does not exist answers 404; a
/// report after the route moved on is decided on the route as it is.
async fn a_failure_is_admitted_as_before_though_its_route_is_read_with_the_token(engine: Engine) {
    let s = TestServer::start(engine).await;
    let admin = s.api();
    let profile = admin
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    // The reporter opens the route it reports on (issue 37: routes belong
    // to their opener).
    let reporter = Api::with_token(
        s.base.clone(),
        Some(
            &token(
                &s,
                "reporter",
                Permissions::of(&[Permission::EvidenceSubmit, Permission::ProfilesSelect]),
            )
            .await,
        ),
    );
    let route = reporter.route(&profile, "kanban").await;
    let id = route["id"].as_str().unwrap();
    let failures = format!("/api/v1/routes/{id}/failures");
    let envelope = |route: &Value| {
        json!({
            "generation": route["generation"], "invocation_id": route["invocation_id"],
            "prompt_generation": route["prompt_generation"], "phase": "prompt",
            "agent": "claude-code", "provider_id": "anthropic",
            "items": crate::support::overloaded()
        })
    };
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let made = access
        .create_token("revoked", Permissions::of(&[Permission::EvidenceSubmit]))
        .await
        .unwrap();
    access.revoke_token("revoked").await.unwrap();
    let revoked = Api::with_token(s.base.clone(), Some(&made.secret));
    let acting = Api::with_token(
        s.base.clone(),
        Some(&token(&s, "acting", Permissions::of(&[Permission::RoutesAct])).await),
    );
    let (st, body) = revoked.post(&failures, envelope(&route)).await;
    assert_eq!(
        (st, body["error"].clone()),
        (401, json!("unauthorized")),
        "{body}"
    );
    let (st, body) = acting.post(&failures, envelope(&route)).await;
    assert_eq!(
        (st, body["error"].clone()),
        (403, json!("forbidden")),
        "{body}"
    );
    let malformed = client_for(&[("authorization", "Basic abc".into())])
        .post(s.url(&failures))
        .json(&envelope(&route))
        .send()
        .await
        .unwrap();
    assert_eq!(malformed.status().as_u16(), 401);
    let untouched = admin.snapshot(id).await;
    assert_eq!(untouched["state"], "active", "{untouched}");
    assert_eq!(untouched["generation"], route["generation"], "{untouched}");

    let (st, body) = reporter
        .post("/api/v1/routes/no-such-route/failures", envelope(&route))
        .await;
    assert_eq!(
        (st, body["error"].clone()),
        (404, json!("not_found")),
        "{body}"
    );
    let (st, answer) = reporter.post(&failures, envelope(&route)).await;
    assert_eq!(st, 200, "{answer}");
    assert_eq!(answer["route"]["state"], "retry_wait", "{answer}");
    // The same report again is stale evidence: the route read with the
    // token is the one it moved to, and nothing changes.
    let (st, again) = reporter.post(&failures, envelope(&route)).await;
    assert_eq!(st, 200, "{again}");
    assert_eq!(
        again["route"]["generation"], answer["route"]["generation"],
        "{again}"
    );
    assert_eq!(again["route"]["state"], "retry_wait", "{again}");
}

/// Runs the binary with `args` on `db`, awaited: the test's own server
/// runs on this thread, so a blocking wait would stop it mid-transaction
/// while the command may need what that transaction holds (for ever, on
/// PostgreSQL). Bounded, and the command is killed if it overruns.
pub async fn cli(args: &[&str], db: &str) -> std::process::Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"));
    command
        .args(args)
        .args(["--database-url", db])
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "debug")
        .kill_on_drop(true);
    awaited(command).await
}

/// `command`'s output, killed and failing the test after two minutes (it
/// takes a second or two).
pub async fn awaited(mut command: tokio::process::Command) -> std::process::Output {
    tokio::time::timeout(
        std::time::Duration::from_secs(120),
        command.kill_on_drop(true).output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{command:?} did not finish within 2 minutes"))
    .expect("run kandev-recovery")
}

/// `token create` prints the secret once, alone on its last line; `token
/// list` never shows it; `token revoke` stops it at once; bad input is a
/// clear error with a failing exit code.
async fn token_commands(engine: Engine) {
    let s = TestServer::start(engine).await;
    let db = s.db.url.clone();
    let out = cli(
        &[
            "token",
            "create",
            "--name",
            "ci runner",
            "--permissions",
            "evidence:submit,profiles:select",
        ],
        &db,
    )
    .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let secret = stdout.lines().last().unwrap().to_string();
    assert!(
        secret.starts_with("kr_") && !secret.contains(' '),
        "{stdout}"
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains(&secret));
    let api = Api::with_token(s.base.clone(), Some(&secret));
    let (st, _) = api.call(Method::GET, "/api/v1/routes", None).await;
    assert_eq!(st, 200);

    let list = cli(&["token", "list"], &db).await;
    assert!(list.status.success());
    let listed = String::from_utf8(list.stdout).unwrap();
    assert!(
        listed.contains("ci runner") && listed.contains("evidence:submit"),
        "{listed}"
    );
    assert!(!listed.contains(&secret[3..]), "{listed}");

    let dup = cli(
        &[
            "token",
            "create",
            "--name",
            "ci runner",
            "--permissions",
            "admin",
        ],
        &db,
    )
    .await;
    assert!(!dup.status.success());
    assert!(String::from_utf8_lossy(&dup.stderr).contains("already named"));
    let bad = cli(
        &["token", "create", "--name", "x", "--permissions", "root"],
        &db,
    )
    .await;
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("`root`") && err.contains("profiles:manage"),
        "{err}"
    );

    let revoke = cli(&["token", "revoke", "ci runner"], &db).await;
    assert!(
        revoke.status.success(),
        "{}",
        String::from_utf8_lossy(&revoke.stderr)
    );
    let (st, _) = api.call(Method::GET, "/api/v1/routes", None).await;
    assert_eq!(st, 401);
    let again = cli(&["token", "revoke", "ci runner"], &db).await;
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("no live token"));
}

/// The sign-in link works once and opens a session: an HttpOnly,
/// SameSite=Strict cookie (Secure behind HTTPS); the session reads, writes
/// only with its CSRF token and its user's permissions, survives a restart
/// (another server on the same database), expires, and signs out.
async fn browser_sessions(engine: Engine) {
    let s = TestServer::start(engine).await;
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let user = access
        .create_user("viewer", Permissions::of(&[Permission::ProfilesSelect]))
        .await
        .unwrap();
    let path = access.sign_in_path(&user).await.unwrap();
    let open = open_link(
        &client_for(&[("x-forwarded-proto", "https".into())]),
        &s.url(&path),
    )
    .await;
    assert_eq!(open.status(), 303);
    assert_eq!(open.headers()["location"], "/profiles");
    let cookies: Vec<&str> = open
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    let session_cookie = cookies
        .iter()
        .find(|c| c.starts_with("kandev_session="))
        .unwrap();
    for attr in [
        "HttpOnly",
        "SameSite=Strict",
        "Secure",
        "Path=/",
        "Max-Age=",
    ] {
        assert!(session_cookie.contains(attr), "{session_cookie}");
    }
    let csrf_cookie = cookies
        .iter()
        .find(|c| c.starts_with("kandev_csrf="))
        .unwrap();
    assert!(!csrf_cookie.contains("HttpOnly") && csrf_cookie.contains("SameSite=Strict"));
    let session = session_cookie["kandev_session=".len()..]
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let csrf = csrf_cookie["kandev_csrf=".len()..]
        .split(';')
        .next()
        .unwrap()
        .to_string();

    // Once only.
    let again = open_link(&client_for(&[]), &s.url(&path)).await;
    assert_eq!(again.status(), 401);
    // Without HTTPS the cookie is not Secure (it could never be sent back).
    let (plain, _) = sign_in(&s, "plain", Permissions::admin()).await;
    assert!(!plain.is_empty());

    let browser = client_for(&session_headers(&session, Some(&csrf)));
    let me: Value = browser
        .get(s.url("/api/v1/session"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        me,
        json!({"name": "viewer", "permissions": ["profiles:select"], "session": true})
    );
    // The pages render for a signed-in viewer; without a session they ask
    // for a sign-in.
    let page = browser.get(s.url("/profiles")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let anonymous = client_for(&[])
        .get(s.url("/profiles"))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
    assert!(anonymous.text().await.unwrap().contains("sign-in link"));
    // The viewer's permissions hold: no policy edits.
    let edit = browser
        .post(s.url("/api/v1/profiles"))
        .json(&json!({"name": "x", "candidates": []}))
        .send()
        .await
        .unwrap();
    assert_eq!(edit.status(), 403);

    // A restart: another server over the same database knows the session.
    let state = crate::support::services(
        s.db.store.clone(),
        Clock::manual(crate::support::start_time()),
    );
    let (addr, _stop, _served) = crate::support::serve(state).await;
    let after = browser
        .get(format!("http://{addr}/api/v1/session"))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 200);

    // Sessions expire.
    let later = Access::new(
        s.db.store.clone(),
        Clock::manual(chrono::Utc::now() + chrono::Duration::days(15)),
        false,
    );
    let mut headers = axum::http::HeaderMap::new();
    headers.insert(
        "cookie",
        format!("kandev_session={session}").parse().unwrap(),
    );
    assert!(matches!(
        later.resolve(&headers).await.unwrap(),
        Credential::Invalid(_)
    ));

    // Signing out needs the CSRF token too, then ends the session at once.
    let forged = client_for(&session_headers(&session, None))
        .post(s.url("/api/v1/session/sign-out"))
        .send()
        .await
        .unwrap();
    assert_eq!(forged.status(), 403);
    let out = browser
        .post(s.url("/api/v1/session/sign-out"))
        .send()
        .await
        .unwrap();
    assert_eq!(out.status(), 204);
    let cleared: Vec<&str> = out
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap())
        .collect();
    assert!(
        cleared
            .iter()
            .any(|c| c.starts_with("kandev_session=;") && c.contains("Max-Age=0")),
        "{cleared:?}"
    );
    let gone = browser.get(s.url("/api/v1/session")).send().await.unwrap();
    assert_eq!(gone.status(), 401);
}

/// `user add` prints a one-time sign-in link on its last line.
async fn user_add_prints_a_sign_in_link(engine: Engine) {
    let s = TestServer::start(engine).await;
    let mut add = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"));
    add.args([
        "user",
        "add",
        "Ada",
        "--permissions",
        "profiles:manage",
        "--url",
        &s.base,
    ])
    .args(["--database-url", &s.db.url]);
    let out = awaited(add).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    let link = stdout.lines().last().unwrap();
    assert!(
        link.starts_with(&format!("{}/sign-in?code=", s.base)),
        "{stdout}"
    );
    let resp = open_link(&client_for(&[]), link).await;
    assert_eq!(resp.status(), 303);
    let mut dup = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"));
    dup.args([
        "user",
        "add",
        "Ada",
        "--permissions",
        "admin",
        "--database-url",
        &s.db.url,
    ]);
    let dup = awaited(dup).await;
    assert!(!dup.status.success());
    assert!(String::from_utf8_lossy(&dup.stderr).contains("already named"));
}

/// The first start creates the administrator and prints a one-time
/// sign-in link on the server's address; `--no-auth` warns, and is refused
/// with a non-loopback address.
#[tokio::test]
async fn first_start_prints_a_sign_in_link_and_no_auth_stays_local() {
    use tokio::io::AsyncBufReadExt;
    // The servers are awaited, never read on a blocking thread: a server
    // that never prints (or a failed assertion that leaves it running)
    // would keep such a thread reading for ever, and the test's runtime
    // waits for its blocking threads when it shuts down. Here a timeout
    // fails the test, and the server is killed when its handle is dropped.
    // A guard against a server that never prints, not a speed check (the
    // classifier's set-up is measured in docs/benchmarks.md): a debug build
    // compiles the catalogue in ≈ 5 s of CPU, which a loaded 2-core machine
    // can stretch past a minute.
    let within = std::time::Duration::from_secs(180);
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite://{}/first.db", dir.path().display());
    // Port 0: the system picks a free port and the server says which (a
    // port chosen by the test could be taken by another test's server
    // while this one compiles its catalogue).
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args(["serve", "--listen", "127.0.0.1:0", "--database-url", &db])
        .env("KANDEV_NO_SEED", "1")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let link = tokio::time::timeout(within, async {
        while let Ok(Some(l)) = lines.next_line().await {
            if let Some(rest) = l.trim().strip_prefix("http://") {
                return Some(format!("http://{rest}"));
            }
        }
        None
    })
    .await
    .expect("the first start prints its sign-in link within three minutes");
    let link = link.expect("a sign-in link on stdout");
    let (origin, path) = link.split_at(link.find("/sign-in?code=").expect("a sign-in path"));
    assert!(
        origin
            .strip_prefix("http://127.0.0.1:")
            .is_some_and(|p| p.parse::<u16>().is_ok_and(|p| p > 0)),
        "{link}"
    );
    assert!(path.len() > "/sign-in?code=".len(), "{link}");
    let resp = open_link(&client_for(&[]), &link).await;
    assert_eq!(resp.status(), 303);
    let _ = child.kill().await;

    let mut refused = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"));
    refused.args([
        "serve",
        "--no-auth",
        "--listen",
        "0.0.0.0:0",
        "--database-url",
        &db,
    ]);
    // Refused at once, not served (a served one fails after 2 minutes).
    let refused = awaited(refused).await;
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(
        err.contains("--no-auth") && err.contains("0.0.0.0"),
        "{err}"
    );

    // On loopback it serves everything without credentials, and says so
    // (warned before it serves; its address read from its log, port 0 as
    // above).
    let mut open = tokio::process::Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .args([
            "serve",
            "--no-auth",
            "--listen",
            "127.0.0.1:0",
            "--database-url",
            &db,
        ])
        .env("RUST_LOG", "info")
        .env("KANDEV_NO_SEED", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut out = tokio::io::BufReader::new(open.stdout.take().unwrap()).lines();
    let (warned, address) = tokio::time::timeout(within, async {
        let mut warned = false;
        while let Ok(Some(l)) = out.next_line().await {
            warned |= l.contains("--no-auth") && l.contains("local development");
            if let Some(i) = l.find("serving http://") {
                let rest = &l[i + "serving http://".len()..];
                let end = rest
                    .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ':'))
                    .unwrap_or(rest.len());
                return (warned, Some(rest[..end].to_string()));
            }
        }
        (warned, None)
    })
    .await
    .expect("the --no-auth server says where it serves within three minutes");
    assert!(warned, "the --no-auth warning, before it serves");
    let address = address.expect("the address it serves on");
    let r = client_for(&[])
        .get(format!("http://{address}/api/v1/profiles"))
        .send()
        .await
        .expect("the --no-auth server answers");
    assert_eq!(r.status().as_u16(), 200);
    let _ = open.kill().await;
}

/// Every response carries the security headers; a page's inline scripts
/// carry the nonce its CSP names, and nothing else inline may run.
async fn security_headers_on_every_response(engine: Engine) {
    let s = TestServer::start(engine).await;
    let (session, csrf) = sign_in(&s, "headers", Permissions::admin()).await;
    let browser = client_for(&session_headers(&session, Some(&csrf)));
    let anonymous = client_for(&[]);
    let admin = client_for(&bearer(crate::support::ADMIN_TOKEN));
    let mut responses = vec![
        anonymous.get(s.url("/healthz")).send().await.unwrap(),
        anonymous
            .get(s.url("/api/v1/profiles"))
            .send()
            .await
            .unwrap(),
        anonymous.get(s.url("/profiles")).send().await.unwrap(),
        anonymous.get(s.url("/favicon.svg")).send().await.unwrap(),
        admin.get(s.url("/api/v1/profiles")).send().await.unwrap(),
        admin.get(s.url("/api/v1/nothing")).send().await.unwrap(),
        admin
            .post(s.url("/api/v1/profiles"))
            .body("{")
            .send()
            .await
            .unwrap(),
    ];
    let page = browser.get(s.url("/profiles")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let page_csp = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    responses.push(page);
    for r in &responses {
        let h = r.headers();
        let csp = h["content-security-policy"].to_str().unwrap();
        for directive in [
            "default-src 'self'",
            "frame-ancestors 'none'",
            "object-src 'none'",
            "'wasm-unsafe-eval'",
        ] {
            assert!(csp.contains(directive), "{} {csp}", r.url());
        }
        assert!(
            !csp.contains("unsafe-inline") && !csp.contains("'unsafe-eval'"),
            "{csp}"
        );
        assert_eq!(h["x-content-type-options"], "nosniff", "{}", r.url());
        assert_eq!(h["referrer-policy"], "no-referrer");
        assert_eq!(h["x-frame-options"], "DENY");
    }
    let nonce = page_csp
        .split("'nonce-")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("the page's CSP names a nonce")
        .to_string();
    let html = browser.get(s.url("/profiles")).send().await.unwrap();
    let html_csp = html.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    let html = html.text().await.unwrap();
    // A fresh nonce per response, on every inline script of that response.
    assert!(!html_csp.contains(&nonce), "the nonce is reused");
    let fresh = html_csp
        .split("'nonce-")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap();
    let scripts = html.matches("<script").count();
    assert!(scripts > 0, "{html}");
    assert_eq!(
        html.matches(&format!("nonce=\"{fresh}\"")).count(),
        scripts,
        "{html}"
    );
}

/// Evidence reports are limited per token: over the limit they answer 429
/// with `retry-after` (and record nothing); another token is unaffected.
async fn evidence_is_rate_limited_per_token(engine: Engine) {
    let db = crate::support::TestDb::new(engine).await;
    let state = server::http::AppState::new(&server::http::Setup {
        evidence_per_minute: 3,
        test_clock: true,
        ..server::http::Setup::new(
            db.store.clone(),
            Clock::manual(crate::support::start_time()),
        )
    });
    let (addr, _stop, _served) = crate::support::serve(state).await;
    let base = format!("http://{addr}");
    let admin = Api::new(base.clone());
    let profile = admin
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    let route = admin.route(&profile, "kanban").await;
    let id = route["id"].as_str().unwrap();
    let reporter_token = Access::new(db.store.clone(), Clock::system(), false)
        // Reporting on the administrator's route needs `routes:any`.
        .create_token(
            "adapter",
            Permissions::of(&[Permission::EvidenceSubmit, Permission::RoutesAny]),
        )
        .await
        .unwrap()
        .secret;
    let reporter = client_for(&bearer(&reporter_token));
    let effect = json!({"generation": route["generation"], "invocation_id": route["invocation_id"],
        "prompt_generation": route["prompt_generation"], "kind": "agent_message_chunk"});
    for _ in 0..3 {
        let r = reporter
            .post(format!("{base}/api/v1/routes/{id}/effects"))
            .json(&effect)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200);
    }
    let limited = reporter
        .post(format!("{base}/api/v1/routes/{id}/effects"))
        .json(&effect)
        .send()
        .await
        .unwrap();
    assert_eq!(limited.status(), 429);
    let wait: u64 = limited.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=20).contains(&wait), "{wait}");
    let body: Value = limited.json().await.unwrap();
    assert_eq!(body["error"], "rate_limited");
    // Reads are not limited, and the administrator's token has its own allowance.
    let (st, _) = Api::with_token(base.clone(), Some(&reporter_token))
        .call(Method::GET, "/api/v1/routes", None)
        .await;
    assert_eq!(st, 200);
    let (st, body) = admin
        .post(&format!("/api/v1/routes/{id}/effects"), effect.clone())
        .await;
    assert_eq!(st, 200, "{body}");
}

on_both_engines!(
    a_failure_is_admitted_as_before_though_its_route_is_read_with_the_token,
    security_headers_on_every_response,
    evidence_is_rate_limited_per_token,
    browser_sessions,
    user_add_prints_a_sign_in_link,
    token_commands,
    permission_matrix,
    spec_permission_rules,
    revoked_tokens_stop_at_once
);
