//! The audit trail: every kind of change leaves an entry naming who made
//! it; a profile keeps its revisions; route events name their actor.

use crate::support::{overloaded, policy, Api, Engine, TestServer, ADMIN_TOKEN};
use serde_json::{json, Value};
use server::auth::{Access, Permission, Permissions};
use server::clock::Clock;

on_both_engines!(
    profile_changes_keep_revisions_and_are_audited,
    manual_actions_token_and_person_changes_are_audited,
    route_events_name_their_actor,
    the_trail_is_for_administrators_and_pages_by_id,
);

/// The audit entries about `subject`, as `(action, actor kind, actor name)`.
async fn trail(api: &Api, subject: &str) -> Vec<(String, String, String)> {
    let entries = api
        .get(&format!("/api/v1/audit?subject={subject}&limit=500"))
        .await;
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["actor"]["kind"].as_str().unwrap().to_string(),
                e["actor"]["name"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn by_token(action: &str) -> (String, String, String) {
    (action.into(), "token".into(), "test admin".into())
}

async fn profile_changes_keep_revisions_and_are_audited(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let id = api
        .profile(&[("A", policy(1, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let mut p = api.get(&format!("/api/v1/profiles/{id}")).await;
    p["name"] = json!("renamed");
    let (st, saved) = api
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/profiles/{id}"),
            Some(p),
        )
        .await;
    assert_eq!(st, 200, "{saved}");

    let revisions = api.get(&format!("/api/v1/profiles/{id}/revisions")).await;
    let revisions = revisions.as_array().unwrap();
    assert_eq!(revisions.len(), 2, "{revisions:?}");
    assert_eq!(
        (
            revisions[0]["revision"].clone(),
            revisions[0]["name"].clone()
        ),
        (json!(1), json!("scenario"))
    );
    assert_eq!(
        (
            revisions[1]["revision"].clone(),
            revisions[1]["name"].clone()
        ),
        (json!(2), json!("renamed"))
    );
    assert_eq!(revisions[1]["actor"]["kind"], "token");
    assert_eq!(revisions[1]["document"]["candidates"], saved["candidates"]);
    assert_eq!(revisions[1]["document"]["prefer"], saved["prefer"]);

    let (st, _) = api
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/profiles/{id}"),
            None,
        )
        .await;
    assert_eq!(st, 204);
    assert_eq!(
        trail(&api, &id).await,
        [
            by_token("profile.created"),
            by_token("profile.updated"),
            by_token("profile.deleted")
        ]
    );
    // What it was is kept after it is gone.
    let kept = api.get(&format!("/api/v1/profiles/{id}/revisions")).await;
    assert_eq!(kept.as_array().unwrap().len(), 2);
    let (st, _) = api
        .call(
            reqwest::Method::GET,
            "/api/v1/profiles/nope/revisions",
            None,
        )
        .await;
    assert_eq!(st, 404);
}

async fn manual_actions_token_and_person_changes_are_audited(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    // A manual action.
    let p = api
        .profile(&[("A", policy(3, 60, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let route = api.route(&p, "kanban").await;
    let waiting = api.fail(&route, overloaded()).await["route"].clone();
    let rid = waiting["id"].as_str().unwrap().to_string();
    let stopped = api
        .post_ok(
            &format!("/api/v1/routes/{rid}/actions"),
            json!({"action": "stop", "expected_generation": waiting["generation"]}),
        )
        .await;
    assert_eq!(trail(&api, &rid).await, [by_token("route.action")]);
    let entry = &api.get(&format!("/api/v1/audit?subject={rid}")).await[0];
    assert_eq!(entry["detail"]["action"], "stop");
    assert_eq!(entry["detail"]["generation"], stopped["generation"]);

    // Token and person changes on the host's command line (no request):
    // the operator's.
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let cli = server::audit::command_line();
    let (token, person) = server::audit::acting(cli.clone(), async {
        let token = access
            .create_token("ci", Permissions::of(&[Permission::EvidenceSubmit]))
            .await
            .unwrap();
        access.revoke_token("ci").await.unwrap();
        let person = access
            .create_user("bob", Permissions::of(&[Permission::ProfilesSelect]))
            .await
            .unwrap();
        (token.row, person)
    })
    .await;
    let operator = cli.name.unwrap();
    assert_eq!(
        trail(&api, &token.id).await,
        [
            (
                "token.created".into(),
                "command_line".into(),
                operator.clone()
            ),
            (
                "token.revoked".into(),
                "command_line".into(),
                operator.clone()
            ),
        ]
    );
    // The secret is nowhere in the trail.
    let all = api.get("/api/v1/audit?limit=500").await.to_string();
    assert!(!all.contains(ADMIN_TOKEN));

    // Person changes through the API: the administrator's.
    let pid = &person.id;
    api.post_ok(&format!("/api/v1/people/{pid}/disable"), json!({}))
        .await;
    api.post_ok(&format!("/api/v1/people/{pid}/enable"), json!({}))
        .await;
    let (st, _) = api
        .call(
            reqwest::Method::PUT,
            &format!("/api/v1/people/{pid}/permissions"),
            Some(json!({"permissions": ["routes:act"]})),
        )
        .await;
    assert_eq!(st, 200);
    let (st, _) = api
        .call(
            reqwest::Method::DELETE,
            &format!("/api/v1/people/{pid}"),
            None,
        )
        .await;
    assert_eq!(st, 204);
    assert_eq!(
        trail(&api, pid).await,
        [
            ("person.added".into(), "command_line".into(), operator),
            by_token("person.disabled"),
            by_token("person.enabled"),
            by_token("person.permissions"),
            by_token("person.removed"),
        ]
    );
}

async fn route_events_name_their_actor(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("A", policy(3, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let route = api.route(&p, "kanban").await;
    let rid = route["id"].as_str().unwrap().to_string();
    let waiting = api.fail(&route, overloaded()).await["route"].clone();
    api.advance(5.0).await;
    let now = api.snapshot(&rid).await;
    api.post_ok(
        &format!("/api/v1/routes/{rid}/actions"),
        json!({"action": "stop", "expected_generation": now["generation"]}),
    )
    .await;
    assert_eq!(waiting["state"], "retry_wait");

    let events = s.db.store.events_after(0, Some(&rid), 100).await.unwrap();
    let actors: Vec<(String, Value)> = events
        .iter()
        .map(|e| {
            let actor: Value = serde_json::from_str(e.actor.as_deref().unwrap()).unwrap();
            (e.kind.clone(), actor)
        })
        .collect();
    let caller = json!({"kind": "caller", "id": actors[0].1["id"], "name": "test admin"});
    let admin = json!({"kind": "token", "id": actors[0].1["id"], "name": "test admin"});
    assert_eq!(
        actors,
        [
            ("route.created".to_string(), caller.clone()),
            ("route.failure".to_string(), caller),
            ("route.fired".to_string(), json!({"kind": "timer"})),
            ("route.action".to_string(), admin),
        ]
    );
}

async fn the_trail_is_for_administrators_and_pages_by_id(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    for _ in 0..3 {
        api.profile(&[("A", policy(1, 1, 0, "stop"), policy(0, 0, 0, "stop"))])
            .await;
    }
    let first = api.get("/api/v1/audit?limit=2").await;
    let first = first.as_array().unwrap();
    assert_eq!(first.len(), 2);
    let after = first[1]["id"].as_i64().unwrap();
    let rest = api.get(&format!("/api/v1/audit?after={after}")).await;
    let ids: Vec<i64> = first
        .iter()
        .chain(rest.as_array().unwrap())
        .map(|e| e["id"].as_i64().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");
    let (st, body) = api
        .call(reqwest::Method::GET, "/api/v1/audit?limit=0", None)
        .await;
    assert_eq!(st, 422, "{body}");
    assert_eq!(body["errors"][0]["field"], "limit");

    // Someone who may only pick profiles may not read who did what.
    let access = Access::new(s.db.store.clone(), Clock::system(), false);
    let viewer = access
        .create_token("viewer", Permissions::of(&[Permission::ProfilesSelect]))
        .await
        .unwrap();
    let viewer = Api::with_token(s.base.clone(), Some(&viewer.secret));
    let (st, _) = viewer
        .call(reqwest::Method::GET, "/api/v1/audit", None)
        .await;
    assert_eq!(st, 403);
}
