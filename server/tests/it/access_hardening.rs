//! Issue 37's findings, one test each: stored markup is rendered as text on
//! every page (the `<title>` included), and names and references refuse
//! hidden characters.

use crate::support::{client, policy, Api, Engine, TestServer};
use reqwest::Method;
use serde_json::{json, Value};
use server::auth::{Access, Permission, Permissions, Rule};
use server::clock::Clock;
use server::http::api::endpoints;

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

on_both_engines!(
    routes_belong_to_their_opener,
    hostile_names_render_as_text_on_every_page,
    hidden_characters_are_refused_with_a_field_error
);
