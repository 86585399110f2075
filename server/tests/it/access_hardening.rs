//! Issue 37's findings, one test each: stored markup is rendered as text on
//! every page (the `<title>` included), and names and references refuse
//! hidden characters.

use crate::support::{client, policy, Engine, TestServer};
use reqwest::Method;
use serde_json::{json, Value};

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

on_both_engines!(
    hostile_names_render_as_text_on_every_page,
    hidden_characters_are_refused_with_a_field_error
);
