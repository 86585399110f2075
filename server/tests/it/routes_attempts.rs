//! The attempt history keeps the whole classification each decision was
//! made from (docs/design.md, “Data model”), as the failure report answered it.

use crate::support::{
    overloaded, policy, usage_limit_in, Engine, TestServer, CLASSIFICATION_FIELDS,
};

async fn attempts_keep_the_whole_classification(engine: Engine) {
    let s = TestServer::start(engine).await;
    let api = s.api();
    let p = api
        .profile(&[("Claude", policy(3, 5, 0, "skip"), policy(0, 0, 600, "stop"))])
        .await;
    let route = api.route(&p, "kanban").await;
    let first = api.fail(&route, overloaded()).await;
    api.advance(5.0).await;
    let route = api.deliver(route["id"].as_str().unwrap()).await;
    let second = api.fail(&route, usage_limit_in(300)).await;
    let history = api
        .get(&format!(
            "/api/v1/routes/{}/attempts",
            route["id"].as_str().unwrap()
        ))
        .await;
    let history = history.as_array().unwrap();
    assert_eq!(history.len(), 2);
    // Newest first, each exactly the classification its report answered.
    for (attempt, answer) in history.iter().zip([&second, &first]) {
        let kept = &attempt["classification"];
        for field in CLASSIFICATION_FIELDS {
            assert!(kept.get(field).is_some(), "{field} missing from {kept}");
        }
        assert_eq!(kept, &answer["classification"]);
    }
    assert_eq!(history[0]["classification"]["code"], "quota_limited");
    assert_eq!(history[0]["classification"]["confidence"], "high");
    assert_eq!(
        history[0]["classification"]["reset_at"],
        "2026-11-30T12:05:00Z"
    );
    assert_eq!(history[1]["classification"]["scope"], "provider");
    // Each says why: the deciding rule, in the first tier that matched,
    // where its evidence was and which timing source gave the reset.
    for attempt in history {
        let c = &attempt["classification"];
        let why = &c["explain"];
        assert_eq!(why["outcome"], "rule", "{c}");
        assert_eq!(why["decided_by"], c["classifier_rule"], "{c}");
        let first_tier = why["tiers"][0]["rules"].as_array().expect("rules");
        assert!(
            first_tier.iter().any(|r| r["rule"] == c["classifier_rule"]),
            "{c}"
        );
    }
    let usage = &history[0]["classification"]["explain"];
    assert_eq!(usage["evidence"]["kind"], "stderr", "{usage}");
    assert_eq!(usage["evidence"]["text"], "error", "{usage}");
    assert_eq!(usage["evidence"]["line"], 0, "{usage}");
    assert_eq!(usage["timing"]["source"], "epoch", "{usage}");
    let overloaded = &history[1]["classification"]["explain"];
    assert_eq!(overloaded["evidence"]["item"], 0, "{overloaded}");
    assert_eq!(overloaded["evidence"]["kind"], "http", "{overloaded}");
}

on_both_engines!(attempts_keep_the_whole_classification);
