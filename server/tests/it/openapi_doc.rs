//! The OpenAPI document's structure, checked without Python: what
//! `openapi-spec-validator` (`scripts/clients check`) and the client
//! generators need of it, so a change that would break them fails here
//! first. Every operation has its own meaningful `operationId` (the
//! clients' function names), path parameters are exactly the template's
//! `{param}`s, every `$ref` resolves, the bodies the server reads strictly
//! say `additionalProperties: false`, and rate-limited or unavailable
//! answers document their `retry-after`.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

fn document() -> Value {
    serde_json::to_value(server::http::api::document()).expect("the document serialises")
}

/// Every operation: (method, path, operation).
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("a path item") {
            if METHODS.contains(&method.as_str()) {
                out.push((method.to_uppercase(), path.clone(), op.clone()));
            }
        }
    }
    assert!(out.len() >= 30, "the document's operations: {}", out.len());
    out
}

/// The `{name}`s of a path template.
fn template_params(path: &str) -> BTreeSet<String> {
    path.split('{')
        .skip(1)
        .map(|rest| {
            rest.split_once('}')
                .unwrap_or_else(|| panic!("{path}: an unclosed {{"))
                .0
                .to_string()
        })
        .collect()
}

#[test]
fn every_operation_id_is_unique_and_a_snake_case_name() {
    let doc = document();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (method, path, op) in operations(&doc) {
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"));
        assert!(
            !id.is_empty()
                && id.starts_with(|c: char| c.is_ascii_lowercase())
                && id
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{method} {path}: operationId `{id}` is not a snake_case name"
        );
        // Bare verbs (`get`, `list`) are what collided: an id names its thing.
        assert!(
            id.contains('_') || ["healthz", "readyz"].contains(&id),
            "{method} {path}: operationId `{id}` names no thing (e.g. `list_routes`)"
        );
        if let Some(earlier) = seen.insert(id.to_string(), format!("{method} {path}")) {
            panic!("operationId `{id}` is both {earlier}'s and {method} {path}'s");
        }
    }
}

#[test]
fn path_parameters_are_exactly_the_path_templates_params() {
    let doc = document();
    for (method, path, op) in operations(&doc) {
        let params = op["parameters"].as_array().cloned().unwrap_or_default();
        let mut declared = BTreeSet::new();
        let mut names = BTreeSet::new();
        for p in &params {
            let (name, place) = (
                p["name"].as_str().expect("a parameter's name"),
                p["in"].as_str().expect("a parameter's `in`"),
            );
            assert!(
                ["path", "query", "header", "cookie"].contains(&place),
                "{method} {path}: parameter `{name}` in `{place}`"
            );
            assert!(
                names.insert((name.to_ascii_lowercase(), place)),
                "{method} {path}: parameter `{name}` ({place}) is declared twice"
            );
            if place == "path" {
                assert_eq!(
                    p["required"], true,
                    "{method} {path}: path parameter `{name}` must be required"
                );
                declared.insert(name.to_string());
            }
        }
        let template = template_params(&path);
        let undeclared: Vec<_> = template.difference(&declared).collect();
        assert!(
            undeclared.is_empty(),
            "{method} {path}: {undeclared:?} in the path are not declared as path parameters"
        );
        let stray: Vec<_> = declared.difference(&template).collect();
        assert!(
            stray.is_empty(),
            "{method} {path}: {stray:?} are declared path parameters but are not in the path \
             (a query struct without #[into_params(parameter_in = Query)]?)"
        );
    }
}

/// Every `$ref` in `value`, with where it is.
fn refs(value: &Value, at: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                if k == "$ref" {
                    out.push((at.to_string(), v.as_str().expect("a $ref string").into()));
                } else {
                    refs(v, &format!("{at}/{k}"), out);
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                refs(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_ref_resolves_and_every_response_is_described() {
    let doc = document();
    let mut all = Vec::new();
    refs(&doc, "", &mut all);
    assert!(!all.is_empty());
    for (at, target) in all {
        let name = target
            .strip_prefix("#/components/schemas/")
            .unwrap_or_else(|| panic!("{at}: `{target}` is not a component schema"));
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "{at}: `{target}` names no schema"
        );
    }
    for (method, path, op) in operations(&doc) {
        let responses = op["responses"].as_object().expect("responses");
        assert!(
            responses
                .keys()
                .any(|s| s.starts_with('2') || s.starts_with('3')),
            "{method} {path} documents no success"
        );
        for (status, response) in responses {
            assert!(
                response["description"].is_string(),
                "{method} {path} {status}: no description"
            );
        }
    }
}

/// Request bodies whose readers let unknown fields through. The evidence
/// envelope is read leniently on purpose: an adapter's extra or newer
/// fields must still get a classification, never a refused report
/// (`domain::evidence`). Every other body is read with
/// `#[serde(deny_unknown_fields)]` (or a reader that refuses unknown
/// fields) and its schema says `additionalProperties: false`.
const OPEN_BODIES: &[&str] = &["Evidence"];

#[test]
fn strictly_read_request_bodies_are_closed() {
    let doc = document();
    let mut checked = 0;
    for (method, path, op) in operations(&doc) {
        let Some(target) =
            op["requestBody"]["content"]["application/json"]["schema"]["$ref"].as_str()
        else {
            continue;
        };
        let name = target.trim_start_matches("#/components/schemas/");
        if OPEN_BODIES.contains(&name) {
            continue;
        }
        assert_eq!(
            doc["components"]["schemas"][name]["additionalProperties"], false,
            "{method} {path}: its body {name} is read refusing unknown fields, but its schema \
             does not say `additionalProperties: false`"
        );
        checked += 1;
    }
    assert!(checked >= 8, "JSON request bodies checked: {checked}");
    // The profile's candidates are read as strictly as the profile.
    assert_eq!(
        doc["components"]["schemas"]["CandidateWrite"]["additionalProperties"],
        false
    );
}

#[test]
fn rate_limits_and_outages_document_retry_after() {
    let doc = document();
    for (method, path, op) in operations(&doc) {
        for status in ["429", "503"] {
            let response = &op["responses"][status];
            // `/readyz`'s 503 is a probe's verdict in words, not a refusal.
            if response.is_null() || path == "/readyz" {
                continue;
            }
            assert!(
                response["headers"]["retry-after"]["schema"]["type"] == "integer",
                "{method} {path} {status}: no `retry-after` header: {response}"
            );
        }
    }
    // Route creation has its own rate limit (`--routes-per-minute`).
    assert!(doc["paths"]["/api/v1/routes"]["post"]["responses"]["429"].is_object());
}
