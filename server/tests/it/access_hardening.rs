//! Issue 37's findings, one test each: stored markup is rendered as text on
//! every page (the `<title>` included), and names and references refuse
//! hidden characters; routes belong to their opener; connections are
//! bounded in time and number.

use crate::support::{client, policy, Api, Engine, TestServer};
use reqwest::Method;
use serde_json::{json, Value};
use server::auth::{Access, Permission, Permissions, Rule};
use server::clock::Clock;
use server::http::api::endpoints;
use server::http::conn::ConnectionLimits;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Ends the title and adds a refresh to another site (the probe's finding).
const TITLE_BREAKOUT: &str =
    "</title><meta http-equiv=\"refresh\" content=\"0;url=https://evil.example/\">";
/// Leaves an attribute and adds an element with a script handler.
const ATTRIBUTE_BREAKOUT: &str = "\"><img src=x onerror=alert(1)>";
/// Ends an inline script (the island props and resources travel in the page).
const SCRIPT_BREAKOUT: &str = "</script><img src=x onerror=alert(2)>";

/// Markup of the page the hostile values must never become.
fn assert_inert(path: &str, html: &str) {
    assert_eq!(html.matches("<title>").count(), 1, "{path}: {html}");
    assert_eq!(html.matches("</title>").count(), 1, "{path}: {html}");
    // No element of the app is an `<img>` or a `<meta http-equiv>`: any
    // is a planted one. (`onerror=alert` itself may appear, escaped, as
    // text.)
    for planted in ["<img", "<meta http-equiv"] {
        assert!(!html.contains(planted), "{path} holds {planted}: {html}");
    }
}

async fn hostile_names_render_as_text_on_every_page(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let t = policy(2, 5, 0, "skip");
    let created = api
        .post_ok(
            "/api/v1/profiles",
            json!({"name": TITLE_BREAKOUT, "candidates": [
                {"label": ATTRIBUTE_BREAKOUT, "agent": "claude-code",
                 "policy": {"version": 1, "transient": t, "hard": t}},
                {"label": SCRIPT_BREAKOUT, "agent": "codex"}
            ]}),
        )
        .await;
    let profile = created["id"].as_str().unwrap().to_string();
    assert_eq!(created["name"], TITLE_BREAKOUT, "markup is valid text");
    let route = api
        .post_ok(
            "/api/v1/routes",
            json!({"profile_id": profile, "caller": {"kind": "kanban", "ref": TITLE_BREAKOUT}}),
        )
        .await;
    let route_id = route["id"].as_str().unwrap().to_string();
    // A person named with markup, for the people page.
    Access::new(s.db.store.clone(), Clock::system(), false)
        .create_user(
            ATTRIBUTE_BREAKOUT,
            Permissions::of(&[Permission::RoutesAct]),
        )
        .await
        .unwrap();
    // A failure, so the route page also shows a last failure and a pending
    // retry with the candidate's label.
    api.fail(&route, crate::support::overloaded()).await;

    let pages = [
        "/".to_string(),
        "/profiles".to_string(),
        "/profiles/new".to_string(),
        format!("/profiles/{profile}"),
        "/profiles/p_missing".to_string(),
        "/routes".to_string(),
        format!("/routes/{route_id}"),
        "/routes/r_missing".to_string(),
        "/circuits".to_string(),
        "/admin/people".to_string(),
    ];
    for path in &pages {
        let resp = client().get(s.url(path)).send().await.unwrap();
        let html = resp.text().await.unwrap();
        assert_inert(path, &html);
    }
    // Where a hostile value is the title, it is there as escaped text.
    for path in [
        format!("/profiles/{profile}"),
        format!("/routes/{route_id}"),
    ] {
        let html = client()
            .get(s.url(&path))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        let title = &html[html.find("<title>").unwrap()..html.find("</title>").unwrap()];
        assert!(
            title.contains("&lt;/title&gt;&lt;meta http-equiv="),
            "{path}: {title}"
        );
    }
    // The labels reach the profile page's editor and the route page as
    // escaped text too.
    let html = client()
        .get(s.url(&format!("/routes/{route_id}")))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("&lt;img src=x onerror=alert(1)&gt;"),
        "{html}"
    );
}

/// Each kind of hidden character in each field that names something.
async fn hidden_characters_are_refused_with_a_field_error(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let ok = api
        .profile(&[("A", policy(1, 1, 0, "skip"), policy(1, 1, 0, "skip"))])
        .await;
    for hidden in [
        "\u{202E}", "\u{2066}", "\u{200B}", "\u{200D}", "\u{FEFF}", "\n", "\u{1B}",
    ] {
        let text = format!("ab{hidden}cd");
        let cases: [(&str, Value, &str); 4] = [
            (
                "/api/v1/profiles",
                json!({"name": text, "candidates": [{"label": "A", "agent": "x"}]}),
                "name",
            ),
            (
                "/api/v1/profiles",
                json!({"name": "n", "candidates": [{"label": text, "agent": "x"}]}),
                "candidates[0].label",
            ),
            (
                "/api/v1/profiles",
                json!({"name": "n", "candidates": [{"label": "A", "agent": "x", "profile_ref": text}]}),
                "candidates[0].profile_ref",
            ),
            (
                "/api/v1/routes",
                json!({"profile_id": ok, "caller": {"kind": "workflow", "ref": text}}),
                "caller.ref",
            ),
        ];
        for (path, body, field) in cases {
            let (st, answer) = api.call(Method::POST, path, Some(body)).await;
            assert_eq!(st, 422, "{hidden:?} in {field}: {answer}");
            let errors = answer["errors"].as_array().unwrap();
            assert_eq!(errors.len(), 1, "{answer}");
            assert_eq!(errors[0]["field"], field, "{answer}");
            assert_eq!(errors[0]["code"], "invalid_value", "{answer}");
            let code = format!("U+{:04X}", hidden.chars().next().unwrap() as u32);
            assert!(
                errors[0]["message"].as_str().unwrap().contains(&code),
                "{answer}"
            );
        }
    }
    // Nothing was opened by the refused requests.
    let routes = api.get("/api/v1/routes").await;
    assert_eq!(routes.as_array().map(Vec::len), Some(0), "{routes}");
}

async fn token_api(s: &TestServer, name: &str, perms: &[Permission]) -> Api {
    let made = Access::new(s.db.store.clone(), Clock::system(), false)
        .create_token(name, Permissions::of(perms))
        .await
        .unwrap();
    Api::with_token(s.base.clone(), Some(&made.secret))
}

/// What an evidence endpoint is sent for the route `route` (its dispatch
/// `dispatch` for acknowledgements), by the path template in the route list.
fn evidence_request(path: &str, route: &Value, dispatch: &Value) -> (String, Value) {
    let id = route["id"].as_str().unwrap();
    let current = json!({"generation": route["generation"], "invocation_id": route["invocation_id"],
        "prompt_generation": route["prompt_generation"]});
    let with = |extra: Value| {
        let mut v = current.clone();
        v.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        v
    };
    match path {
        "/api/v1/routes/{id}/failures" => (
            format!("/api/v1/routes/{id}/failures"),
            with(
                json!({"phase": "prompt", "agent": "claude-code", "provider_id": "anthropic",
                "items": crate::support::overloaded()}),
            ),
        ),
        "/api/v1/routes/{id}/effects" => (
            format!("/api/v1/routes/{id}/effects"),
            with(json!({"kind": "agent_message_chunk"})),
        ),
        "/api/v1/routes/{id}/success" => (format!("/api/v1/routes/{id}/success"), current),
        "/api/v1/dispatches/claim" => (
            "/api/v1/dispatches/claim".into(),
            json!({"route_id": id, "lease_seconds": 60, "wait_seconds": 0}),
        ),
        "/api/v1/dispatches/{id}/ack" => (
            format!(
                "/api/v1/dispatches/{}/ack",
                dispatch["id"].as_str().unwrap()
            ),
            json!({"generation": dispatch["generation"]}),
        ),
        other => panic!("{other} takes evidence: say here what it is sent"),
    }
}

/// Routes belong to their opener: every endpoint of the route list that
/// takes evidence (reports, claims, acknowledgements) answers another
/// caller exactly as it answers for a route or dispatch that does not
/// exist, changes nothing, and serves the opener and `routes:any`.
async fn routes_belong_to_their_opener(engine: Engine) {
    let s = TestServer::start(engine).await;
    let admin = s.api();
    let profile = admin
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 0, "skip"))])
        .await;
    let runner = [
        Permission::ProfilesSelect,
        Permission::EvidenceSubmit,
        Permission::OfficeAssign,
    ];
    let opener = token_api(&s, "opener", &runner).await;
    let other = token_api(&s, "other", &runner).await;
    let supervisor = token_api(
        &s,
        "supervisor",
        &[Permission::EvidenceSubmit, Permission::RoutesAny],
    )
    .await;

    // The opener's route with a claimed dispatch, and the other caller's
    // own route with one due (to see what claims without a route id get).
    let route = opener.route(&profile, "office").await;
    let id = route["id"].as_str().unwrap().to_string();
    opener.fail(&route, crate::support::overloaded()).await;
    let theirs = other.route(&profile, "kanban").await;
    other.fail(&theirs, crate::support::overloaded()).await;
    admin.advance(10.0).await;
    let any_claim = json!({"lease_seconds": 60, "wait_seconds": 0});
    let (st, claimed) = other
        .post("/api/v1/dispatches/claim", any_claim.clone())
        .await;
    assert_eq!(st, 200, "{claimed}");
    let claimed = claimed["dispatches"].as_array().unwrap().clone();
    assert_eq!(
        claimed.len(),
        1,
        "only its own route's dispatch: {claimed:?}"
    );
    assert_eq!(claimed[0]["route_id"], theirs["id"]);
    let (_, named) = other
        .post(
            "/api/v1/dispatches/claim",
            json!({"route_id": id, "lease_seconds": 60, "wait_seconds": 0}),
        )
        .await;
    assert_eq!(named["dispatches"], json!([]), "{named}");
    let dispatches = opener.claim(&id).await;
    assert_eq!(
        dispatches.len(),
        1,
        "the opener's dispatch was left: {dispatches:?}"
    );
    let dispatch = dispatches[0].clone();
    let route = opener.snapshot(&id).await;

    let evidence: Vec<_> = endpoints()
        .into_iter()
        .filter(|e| e.rule == Rule::Need(Permission::EvidenceSubmit))
        // Concrete sessions' classification and evaluation name no route:
        // there is nothing of anyone's to own.
        .filter(|e| !["/api/v1/classify", "/api/v1/policies/evaluate"].contains(&e.path.as_str()))
        .collect();
    assert!(evidence.len() >= 5, "{evidence:?}");
    let missing_route = json!({"id": "no-such-route", "generation": 1, "invocation_id": "x",
        "prompt_generation": 1});
    let missing_dispatch = json!({"id": "no-such-dispatch", "generation": 1});
    for e in &evidence {
        let (path, body) = evidence_request(&e.path, &route, &dispatch);
        let (st, refused) = other
            .call(e.method.clone(), &path, Some(body.clone()))
            .await;
        let (nst, nothing) = {
            let (path, body) = evidence_request(&e.path, &missing_route, &missing_dispatch);
            other.call(e.method.clone(), &path, Some(body)).await
        };
        assert_eq!(
            (st, &refused),
            (nst, &nothing),
            "{} {}: another caller is answered as for nothing there",
            e.method,
            e.path
        );
        if e.path != "/api/v1/dispatches/claim" {
            assert_eq!(st, 404, "{} {}: {refused}", e.method, e.path);
        }
    }
    assert_eq!(
        opener.snapshot(&id).await,
        route,
        "the refusals changed nothing"
    );

    // The opener and `routes:any` are served: the acknowledgement by the
    // opener, an effect by the supervisor, success by the opener.
    let (st, body) = opener.ack(&dispatch).await;
    assert_eq!(st, 200, "{body}");
    let route = opener.snapshot(&id).await;
    let (path, body) = evidence_request("/api/v1/routes/{id}/effects", &route, &dispatch);
    let (st, answer) = supervisor.post(&path, body).await;
    assert_eq!(st, 200, "{answer}");
    let (path, body) = evidence_request("/api/v1/routes/{id}/success", &route, &dispatch);
    let (st, answer) = opener.post(&path, body).await;
    assert_eq!(st, 200, "{answer}");
}

/// Answers made for a credential are never cached; public ones may be.
async fn authenticated_answers_are_not_stored(engine: Engine) {
    let s = TestServer::start(engine).await;
    for path in ["/api/v1/routes", "/api/v1/session", "/profiles", "/metrics"] {
        let resp = client().get(s.url(path)).send().await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
        assert_eq!(
            resp.headers()
                .get("cache-control")
                .map(|v| v.to_str().unwrap()),
            Some("no-store"),
            "{path}"
        );
    }
    let health = reqwest::get(s.url("/healthz")).await.unwrap();
    assert_eq!(health.headers().get("cache-control"), None);
}

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// A sign-in link redeems only when its page's button posts the code:
/// GET and HEAD (link scanners, previews) use nothing up, and a post from
/// another site's page is refused (login CSRF) without using it up.
async fn sign_in_links_redeem_on_post_only(engine: Engine) {
    let s = TestServer::start(engine).await;
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let user = access
        .create_user("linked", Permissions::of(&[Permission::ProfilesSelect]))
        .await
        .unwrap();
    let path = access.sign_in_path(&user).await.unwrap();
    let code = path.split("code=").nth(1).unwrap().to_string();
    let http = no_redirects();
    for _ in 0..2 {
        let page = http.get(s.url(&path)).send().await.unwrap();
        assert_eq!(page.status(), 200);
        assert!(page.headers().get("set-cookie").is_none());
        let head = http.head(s.url(&path)).send().await.unwrap();
        assert_eq!(head.status(), 200);
        assert!(head.headers().get("set-cookie").is_none());
    }
    let post = |extra: &'static [(&'static str, &'static str)]| {
        let mut req = http
            .post(s.url("/sign-in"))
            .form(&[("code", code.as_str())]);
        for (k, v) in extra {
            req = req.header(*k, *v);
        }
        req.send()
    };
    for cross in [
        &[("sec-fetch-site", "cross-site")][..],
        &[("origin", "https://evil.example")][..],
    ] {
        let refused = post(cross).await.unwrap();
        assert_eq!(refused.status(), 403, "{cross:?}");
        assert!(refused.headers().get("set-cookie").is_none());
    }
    let signed_in = post(&[("sec-fetch-site", "same-origin")]).await.unwrap();
    assert_eq!(signed_in.status(), 303);
    assert_eq!(signed_in.headers()["location"], "/profiles");
    assert!(signed_in.headers().get("set-cookie").is_some());
    assert_eq!(post(&[]).await.unwrap().status(), 401, "once only");
    // The code a page puts back in its form is escaped.
    let hostile = http
        .get(s.url("/sign-in?code=%22%3E%3Cscript%3Ealert(1)%3C/script%3E"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!hostile.contains("<script>"), "{hostile}");
}

/// `--no-auth` answers only requests addressed to this machine, and no
/// write from another site's page.
async fn no_auth_refuses_foreign_hosts_and_cross_site_writes(engine: Engine) {
    let db = crate::support::TestDb::new(engine).await;
    let state = server::http::AppState::new(&server::http::Setup {
        no_auth: true,
        ..server::http::Setup::new(
            db.store.clone(),
            Clock::manual(crate::support::start_time()),
        )
    });
    let (addr, _stop, _) = crate::support::serve(state).await;
    let base = format!("http://{addr}");
    let profile = json!({"name": "local", "candidates": [{"label": "A", "agent": "x"}]});
    let http = no_redirects();
    // DNS rebinding: the right address, another name.
    for host in ["evil.example", &format!("evil.example:{}", addr.port())] {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        tcp.write_all(
            format!("GET /api/v1/profiles HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await
        .unwrap();
        let (_, answer) = read_until_closed(&mut tcp, Duration::from_secs(3)).await;
        assert!(answer.starts_with("HTTP/1.1 403"), "{host}: {answer}");
    }
    // A cross-site form (text/plain, no preflight) and a foreign Origin.
    let form = http
        .post(format!("{base}/api/v1/profiles"))
        .header("content-type", "text/plain")
        .header("sec-fetch-site", "cross-site")
        .body(profile.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(form.status(), 403);
    let foreign = http
        .post(format!("{base}/api/v1/profiles"))
        .header("origin", "https://evil.example")
        .json(&profile)
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let listed: Value = http
        .get(format!("{base}/api/v1/profiles"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(0), "{listed}");
    // This machine's own page, and a script, may write.
    for origin in [Some(base.clone()), None] {
        let mut req = http.post(format!("{base}/api/v1/profiles")).json(&profile);
        if let Some(o) = &origin {
            req = req.header("origin", o.as_str());
        }
        assert_eq!(req.send().await.unwrap().status(), 201, "{origin:?}");
    }
}

/// Route creation is limited per token: the allowance used up answers
/// 429 with `retry-after`, for that token only.
async fn route_creation_is_limited_per_principal(engine: Engine) {
    let db = crate::support::TestDb::new(engine).await;
    let state = server::http::AppState::new(&server::http::Setup {
        routes_per_minute: 3,
        ..server::http::Setup::new(
            db.store.clone(),
            Clock::manual(crate::support::start_time()),
        )
    });
    let (addr, _stop, _) = crate::support::serve(state).await;
    let s_base = format!("http://{addr}");
    let admin = Api::new(s_base.clone());
    let profile = admin
        .profile(&[("A", policy(1, 1, 0, "skip"), policy(1, 1, 0, "skip"))])
        .await;
    let made = Access::new(db.store.clone(), Clock::system(), false)
        .create_token("opener", Permissions::of(&[Permission::ProfilesSelect]))
        .await
        .unwrap();
    let opener = Api::with_token(s_base.clone(), Some(&made.secret));
    let open = json!({"profile_id": profile, "caller": {"kind": "kanban", "ref": "t"}});
    for _ in 0..3 {
        let (st, body) = opener.post("/api/v1/routes", open.clone()).await;
        assert_eq!(st, 201, "{body}");
    }
    let limited = client_with_token(&made.secret)
        .post(format!("{s_base}/api/v1/routes"))
        .json(&open)
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
    // Another token has its own allowance.
    let (st, body) = admin.post("/api/v1/routes", open).await;
    assert_eq!(st, 201, "{body}");
    assert_eq!(
        admin.get("/api/v1/routes").await.as_array().map(Vec::len),
        Some(4)
    );
}

fn client_with_token(token: &str) -> reqwest::Client {
    crate::support::client_with(Some(token))
}

/// Sign-in traffic without a valid link only reads: on a database that
/// refuses writes (where any write answers 503), the sign-in page and a
/// post of an unknown code answer as always.
async fn sign_in_without_a_valid_link_only_reads(engine: Engine) {
    let db = crate::support::TestDb::new(engine).await;
    let read_only = db.read_only_store().await;
    let s = TestServer::start_with(db, read_only).await;
    let http = no_redirects();
    let page = http.get(s.url("/sign-in?code=abc")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let post = http
        .post(s.url("/sign-in"))
        .form(&[("code", "no-such-code")])
        .send()
        .await
        .unwrap();
    assert_eq!(post.status(), 401);
    // A write does answer 503 here: the database really refuses writes.
    let (st, _) = s
        .api()
        .post(
            "/api/v1/profiles",
            json!({"name": "n", "candidates": [{"label": "A", "agent": "x"}]}),
        )
        .await;
    assert_eq!(st, 503);
}

async fn cli_ok(args: &[&str], db: &str) -> String {
    let out = crate::access::cli(args, db).await;
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// `user list|disable|enable|link|grant|revoke|remove`: disabling and
/// removing end a person's sessions at once, permission changes apply to
/// the next request, and unknown people are a clear error.
async fn people_are_managed_from_the_command_line(engine: Engine) {
    let s = TestServer::start(engine).await;
    let db = s.db.url.clone();
    let (session, _) =
        crate::access::sign_in(&s, "Ada", Permissions::of(&[Permission::ProfilesSelect])).await;
    let browser = crate::support::client_with(None);
    let me = || {
        browser
            .get(s.url("/api/v1/session"))
            .header("cookie", format!("kandev_session={session}"))
            .send()
    };
    assert_eq!(me().await.unwrap().status(), 200);
    let listed = cli_ok(&["user", "list"], &db).await;
    let line = listed
        .lines()
        .find(|l| l.starts_with("Ada "))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(
        line.contains("profiles:select") && line.contains("enabled") && line.contains("1 session"),
        "{line}"
    );

    cli_ok(
        &[
            "user",
            "grant",
            "Ada",
            "--permissions",
            "routes:act,catalogue:read",
        ],
        &db,
    )
    .await;
    let now: Value = me().await.unwrap().json().await.unwrap();
    assert_eq!(
        now["permissions"],
        json!(["profiles:select", "routes:act", "catalogue:read"]),
        "{now}"
    );
    cli_ok(
        &["user", "revoke", "Ada", "--permissions", "catalogue:read"],
        &db,
    )
    .await;
    let now: Value = me().await.unwrap().json().await.unwrap();
    assert_eq!(
        now["permissions"],
        json!(["profiles:select", "routes:act"]),
        "{now}"
    );

    cli_ok(&["user", "disable", "Ada"], &db).await;
    assert_eq!(
        me().await.unwrap().status(),
        401,
        "a disabled person's session ends at once"
    );
    let listed = cli_ok(&["user", "list"], &db).await;
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("Ada ") && l.contains("disabled") && l.contains("0 sessions")),
        "{listed}"
    );
    let refused = crate::access::cli(&["user", "link", "Ada"], &db).await;
    assert!(!refused.status.success());
    cli_ok(&["user", "enable", "Ada"], &db).await;
    let linked = cli_ok(&["user", "link", "Ada", "--url", &s.base], &db).await;
    let link = linked.lines().last().unwrap().to_string();
    let signed_in = crate::access::open_link(&no_redirects(), &link).await;
    assert_eq!(signed_in.status(), 303);

    let again =
        crate::access::sign_in(&s, "Grace", Permissions::of(&[Permission::RoutesAct])).await;
    cli_ok(&["user", "remove", "Grace"], &db).await;
    let gone = browser
        .get(s.url("/api/v1/session"))
        .header("cookie", format!("kandev_session={}", again.0))
        .send()
        .await
        .unwrap();
    assert_eq!(
        gone.status(),
        401,
        "a removed person's session ends at once"
    );
    assert!(!cli_ok(&["user", "list"], &db).await.contains("Grace"));
    let unknown = crate::access::cli(&["user", "disable", "Nobody"], &db).await;
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("`Nobody`"));
}

/// Reads an event stream until it ends or `within` passes: whether it ended.
async fn stream_ends_within(mut stream: reqwest::Response, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, stream.chunk()).await {
            Err(_) => return false,
            Ok(Ok(Some(_))) => continue,
            Ok(Ok(None)) | Ok(Err(_)) => return true,
        }
    }
}

/// An open event stream ends within seconds once its token is revoked,
/// its session signed out, or its person disabled.
async fn event_streams_end_with_their_credential(engine: Engine) {
    let s = TestServer::start(engine).await;
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let made = access
        .create_token("watcher", Permissions::of(&[Permission::CatalogueRead]))
        .await
        .unwrap();
    let (ada, ada_csrf) = crate::access::sign_in(&s, "Ada", Permissions::admin()).await;
    let (bob, _) = crate::access::sign_in(&s, "Bob", Permissions::admin()).await;
    let open = |header: (&'static str, String)| {
        crate::support::client_with(None)
            .get(s.url("/api/v1/events"))
            .header(header.0, header.1)
            .send()
    };
    let by_token = open(("authorization", format!("Bearer {}", made.secret)))
        .await
        .unwrap();
    let by_ada = open(("cookie", format!("kandev_session={ada}")))
        .await
        .unwrap();
    let by_bob = open(("cookie", format!("kandev_session={bob}")))
        .await
        .unwrap();
    let kept = crate::support::client()
        .get(s.url("/api/v1/events"))
        .send()
        .await
        .unwrap();
    for r in [&by_token, &by_ada, &by_bob, &kept] {
        assert_eq!(r.status(), 200);
    }
    access.revoke_token("watcher").await.unwrap();
    let signed_out = crate::support::client_with(None)
        .post(s.url("/api/v1/session/sign-out"))
        .header("cookie", format!("kandev_session={ada}"))
        .header("x-csrf-token", ada_csrf)
        .send()
        .await
        .unwrap();
    assert_eq!(signed_out.status(), 204);
    access.disable_user("Bob").await.unwrap();
    let within = server::http::STREAM_RECHECK * 3;
    let (t, a, b) = tokio::join!(
        stream_ends_within(by_token, within),
        stream_ends_within(by_ada, within),
        stream_ends_within(by_bob, within)
    );
    assert!(t, "the revoked token's stream is open");
    assert!(a, "the signed-out session's stream is open");
    assert!(b, "the disabled person's stream is open");
    assert!(
        !stream_ends_within(kept, within).await,
        "a valid stream ended"
    );
}

/// The people page and API: administrators only; disabling through the
/// API ends the person's session at once; the page lists every permission
/// the server knows.
async fn people_are_managed_by_administrators(engine: Engine) {
    let s = TestServer::start(engine).await;
    let (session, _) =
        crate::access::sign_in(&s, "Ada", Permissions::of(&[Permission::ProfilesSelect])).await;
    let page = client().get(s.url("/admin/people")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("<h2>Ada</h2>"), "{html}");
    assert!(html.contains("Save permissions"), "{html}");
    let reader = token_api(&s, "reader", &[Permission::ProfilesManage]).await;
    let (_, html) = reader.call(Method::GET, "/admin/people", None).await;
    let html = html.as_str().unwrap().to_string();
    assert!(html.contains("needs the admin permission"), "{html}");
    assert!(!html.contains("<h2>Ada</h2>"), "{html}");
    let (st, _) = reader.call(Method::GET, "/api/v1/people", None).await;
    assert_eq!(st, 403);

    let admin = s.api();
    let people = admin.get("/api/v1/people").await;
    let ada = people
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Ada")
        .unwrap()
        .clone();
    assert_eq!(ada["sessions"], 1, "{ada}");
    let id = ada["id"].as_str().unwrap();
    let (st, body) = admin
        .call(
            Method::PUT,
            &format!("/api/v1/people/{id}/permissions"),
            Some(json!({"permissions": ["routes:act", "root"]})),
        )
        .await;
    assert_eq!(st, 422, "{body}");
    assert_eq!(body["errors"][0]["field"], "permissions", "{body}");
    let (st, body) = admin
        .call(
            Method::PUT,
            &format!("/api/v1/people/{id}/permissions"),
            Some(json!({"permissions": ["routes:act"]})),
        )
        .await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(body["permissions"], json!(["routes:act"]));
    let (st, body) = admin
        .post(&format!("/api/v1/people/{id}/disable"), json!(null))
        .await;
    assert_eq!(st, 200, "{body}");
    assert_eq!(
        (body["disabled"].clone(), body["sessions"].clone()),
        (json!(true), json!(0))
    );
    let me = crate::support::client_with(None)
        .get(s.url("/api/v1/session"))
        .header("cookie", format!("kandev_session={session}"))
        .send()
        .await
        .unwrap();
    assert_eq!(me.status(), 401);
    let (st, _) = admin
        .call(Method::DELETE, &format!("/api/v1/people/{id}"), None)
        .await;
    assert_eq!(st, 204);
    let (st, _) = admin
        .call(Method::DELETE, &format!("/api/v1/people/{id}"), None)
        .await;
    assert_eq!(st, 404);
}

on_both_engines!(
    people_are_managed_by_administrators,
    people_are_managed_from_the_command_line,
    event_streams_end_with_their_credential,
    sign_in_without_a_valid_link_only_reads,
    route_creation_is_limited_per_principal,
    sign_in_links_redeem_on_post_only,
    no_auth_refuses_foreign_hosts_and_cross_site_writes,
    authenticated_answers_are_not_stored,
    connections_are_bounded_in_time,
    connections_are_capped,
    routes_belong_to_their_opener,
    hostile_names_render_as_text_on_every_page,
    hidden_characters_are_refused_with_a_field_error
);

/// A server on port 0 with `limits`, the test administrator's token and
/// the test clock.
async fn limited(
    engine: Engine,
    limits: ConnectionLimits,
) -> (crate::support::TestDb, String, std::net::SocketAddr) {
    let db = crate::support::TestDb::new(engine).await;
    let state = server::http::AppState::new(&server::http::Setup {
        test_clock: true,
        limits,
        ..server::http::Setup::new(
            db.store.clone(),
            Clock::manual(crate::support::start_time()),
        )
    });
    let (addr, stop, _) = crate::support::serve(state).await;
    // Served until the test ends.
    std::mem::forget(stop);
    (db, format!("http://{addr}"), addr)
}

/// Reads until the server closes the connection (or `within` passes):
/// whether it closed, and what it sent.
async fn read_until_closed(tcp: &mut TcpStream, within: Duration) -> (bool, String) {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, tcp.read(&mut buf)).await {
            Err(_) => return (false, String::from_utf8_lossy(&got).into_owned()),
            Ok(Ok(0)) | Ok(Err(_)) => return (true, String::from_utf8_lossy(&got).into_owned()),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
        }
    }
}

/// Slowloris, idle and silent connections are closed on time; a body
/// announced too large is refused at once, one that never arrives whole
/// answers 400; long polls and event streams outlive the idle timeout.
async fn connections_are_bounded_in_time(engine: Engine) {
    let limits = ConnectionLimits::from_seconds(1, 1, 1, 64);
    let (_db, base, addr) = limited(engine, limits).await;

    // Partial headers, a byte every 200 ms: closed about a second in.
    let started = Instant::now();
    let mut slow = TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut closed = false;
    for _ in 0..25 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if slow.write_all(b"X").await.is_err() {
            closed = true;
            break;
        }
    }
    if !closed {
        closed = read_until_closed(&mut slow, Duration::from_millis(100))
            .await
            .0;
    }
    assert!(closed, "partial headers held for {:?}", started.elapsed());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );

    // A connection that says nothing, and one idle after an answer.
    let mut silent = TcpStream::connect(addr).await.unwrap();
    assert!(
        read_until_closed(&mut silent, Duration::from_secs(3))
            .await
            .0,
        "a silent connection is held"
    );
    let mut idle = TcpStream::connect(addr).await.unwrap();
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let (closed, answer) = read_until_closed(&mut idle, Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(closed, "an idle kept-alive connection is held: {answer}");

    // Ten gigabytes announced: 413 at once, with nothing of it sent and no
    // credential (the size is decided first).
    let started = Instant::now();
    let mut huge = TcpStream::connect(addr).await.unwrap();
    huge.write_all(
        b"POST /api/v1/routes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n",
    )
    .await
    .unwrap();
    let (_, answer) = read_until_closed(&mut huge, Duration::from_millis(900)).await;
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("payload_too_large"), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );

    // A body that stops halfway: 400 saying so, within the body timeout.
    let mut half = TcpStream::connect(addr).await.unwrap();
    half.write_all(
        format!(
            "POST /api/v1/profiles HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"name\":",
            crate::support::ADMIN_TOKEN
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let (closed, answer) = read_until_closed(&mut half, Duration::from_secs(4)).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(answer.contains("did not arrive within 1 s"), "{answer}");
    assert!(closed, "{answer}");

    // A long poll (3 s) and an event stream (3 s) outlive the 1 s idle
    // and header timeouts.
    let api = Api::new(base.clone());
    let started = Instant::now();
    let (st, body) = api
        .post(
            "/api/v1/dispatches/claim",
            json!({"lease_seconds": 60, "wait_seconds": 3}),
        )
        .await;
    assert_eq!(st, 200, "{body}");
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let mut events = client()
        .get(format!("{base}/api/v1/events"))
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        let chunk = tokio::time::timeout(Duration::from_secs(2), events.chunk()).await;
        let chunk = chunk
            .expect("a keep-alive within 2 s")
            .expect("the stream is open");
        assert!(chunk.is_some(), "the event stream was closed");
    }
}

/// At most `max_connections` are served: a third connection's request is
/// answered only once one of two held connections closes.
async fn connections_are_capped(engine: Engine) {
    let limits = ConnectionLimits::from_seconds(30, 30, 30, 2);
    let (_db, _base, addr) = limited(engine, limits).await;
    let first = TcpStream::connect(addr).await.unwrap();
    let _second = TcpStream::connect(addr).await.unwrap();
    // Both accepted before the third arrives.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut third = TcpStream::connect(addr).await.unwrap();
    third
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let (_, early) = read_until_closed(&mut third, Duration::from_millis(700)).await;
    assert_eq!(early, "", "a third connection was served");
    drop(first);
    let (closed, answer) = read_until_closed(&mut third, Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(closed);
}
