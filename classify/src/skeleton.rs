//! The sanitised skeleton of an evidence envelope, kept with each entry of
//! the unknown log, and what grows the catalogue from it: a fixture ready
//! to label ([`fixture`]) and a catalogue's verdict on every logged entry
//! ([`reclassify`]).
//!
//! A skeleton keeps the item kinds, HTTP statuses and header names (never
//! values), ACP codes, exits, the agent, provider, model and phase, and per
//! item a bounded excerpt of its text through the same sanitiser as every
//! classification's `safe_excerpt`: enough to label the failure and to
//! classify its words again with a newer catalogue; nothing secret.

use super::catalogue::Catalogue;
use super::classifier::classify_at;
use super::evidence::{Evidence, Item};
use super::fixtures::FIXTURE_NOW;
use super::sanitize;
use chrono::{DateTime, Utc};
use domain::catalogue::{
    EvidenceSkeleton, ReclassifiedCode, ReclassifiedEntry, SkeletonItem, UnknownEntry,
    UnknownReclassification,
};
use domain::policy::ErrorClass;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Header names kept per item, at most.
pub const MAX_HEADER_NAMES: usize = 32;

/// Items kept per skeleton, at most (the last ones: an agent prints its
/// error at the end).
pub const MAX_ITEMS: usize = 32;

/// What a fixture written from the log says where a person must decide:
/// `catalogue check` refuses it (no code is called that) until labelled.
pub const LABEL_ME: &str = "LABEL-ME";

/// The skeleton of `evidence`.
pub fn skeleton(evidence: &Evidence) -> EvidenceSkeleton {
    let id = |s: &Option<String>| {
        s.as_deref()
            .map(sanitize::identifier)
            .filter(|s| !s.is_empty())
    };
    let skip = evidence.items.len().saturating_sub(MAX_ITEMS);
    EvidenceSkeleton {
        agent: id(&evidence.agent),
        provider_id: id(&evidence.provider_id),
        model_id: id(&evidence.model_id),
        phase: evidence.phase,
        items: evidence.items.iter().skip(skip).map(item).collect(),
    }
}

fn item(i: &Item) -> SkeletonItem {
    let kind = match i {
        Item::Http(_) => "http",
        Item::AcpError(_) => "acp_error",
        Item::AcpUpdate(_) => "acp_update",
        Item::AcpStop(_) => "acp_stop",
        Item::Stderr(_) => "stderr",
        Item::Stdout(_) => "stdout",
        Item::ProcessExit(_) => "process_exit",
        Item::Other(_) => "other",
    };
    let mut out = SkeletonItem {
        kind: kind.to_owned(),
        ..SkeletonItem::default()
    };
    let text = match i {
        Item::Http(h) => {
            out.status = h.status;
            out.header_names = h
                .headers
                .keys()
                .take(MAX_HEADER_NAMES)
                .map(|k| sanitize::identifier(k))
                .collect();
            [h.body.as_deref(), h.error.as_deref()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("\n")
        }
        Item::AcpError(e) => {
            out.code = e.code;
            let data = match &e.data {
                Some(Value::String(s)) => s.clone(),
                Some(v) => v.to_string(),
                None => String::new(),
            };
            [e.message.clone().unwrap_or_default(), data]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("\n")
        }
        Item::AcpUpdate(u) => {
            out.update = Some(sanitize::identifier(&u.update)).filter(|s| !s.is_empty());
            u.text.clone().unwrap_or_default()
        }
        Item::AcpStop(s) => s.stop_reason.clone().unwrap_or_default(),
        Item::Stderr(s) | Item::Stdout(s) => s.lines.join("\n"),
        Item::ProcessExit(p) => {
            out.exit_code = p.exit_code;
            out.signal = p.signal.as_deref().map(sanitize::identifier);
            String::new()
        }
        // An unknown kind's name only: its content is not read at all.
        Item::Other(o) => {
            out.kind = o
                .original_kind
                .as_deref()
                .map(sanitize::identifier)
                .filter(|k| !k.is_empty())
                .unwrap_or_else(|| "other".to_owned());
            String::new()
        }
    };
    // The end of a stream or body is where an agent prints its error.
    out.excerpt = if text.trim().is_empty() {
        String::new()
    } else {
        sanitize::excerpt(&text, text.len())
    };
    out
}

/// The envelope a skeleton stands for, as JSON: each item with its
/// excerpt as its text and its header names with empty values (the values
/// were never kept). What [`reclassify`] classifies and [`fixture`] writes.
pub fn envelope(s: &EvidenceSkeleton, occurred_at: Option<DateTime<Utc>>) -> Value {
    let mut env = Map::new();
    for (name, v) in [
        ("agent", &s.agent),
        ("provider_id", &s.provider_id),
        ("model_id", &s.model_id),
    ] {
        env.insert(name.into(), v.clone().map_or(Value::Null, Value::String));
    }
    if let Some(p) = s.phase {
        env.insert("phase".into(), json!(p));
    }
    if let Some(at) = occurred_at {
        env.insert("occurred_at".into(), json!(at.to_rfc3339()));
    }
    let text = |i: &SkeletonItem| Some(i.excerpt.clone()).filter(|t| !t.is_empty());
    let items: Vec<Value> = s
        .items
        .iter()
        .map(|i| match i.kind.as_str() {
            "http" => {
                let headers: BTreeMap<&str, &str> =
                    i.header_names.iter().map(|h| (h.as_str(), "")).collect();
                json!({"kind": "http", "status": i.status, "headers": headers, "body": text(i)})
            }
            "acp_error" => json!({"kind": "acp_error", "code": i.code, "message": text(i)}),
            "acp_update" => json!({"kind": "acp_update",
                "update": i.update.clone().unwrap_or_default(), "text": text(i)}),
            "acp_stop" => json!({"kind": "acp_stop", "stop_reason": text(i)}),
            "stderr" | "stdout" => json!({"kind": i.kind, "lines": [i.excerpt]}),
            "process_exit" => {
                json!({"kind": "process_exit", "exit_code": i.exit_code, "signal": i.signal})
            }
            other => json!({"kind": other}),
        })
        .collect();
    env.insert("items".into(), Value::Array(items));
    Value::Object(env)
}

/// A fixture file (a JSON array of one fixture, the catalogue's fixture
/// format) for the unknown-log entry `entry`, ready to label: its expected
/// code and rule say [`LABEL_ME`], which `catalogue check` refuses until a
/// person fills them in.
pub fn fixture(entry: &UnknownEntry, s: &EvidenceSkeleton) -> Value {
    let mut evidence = envelope(s, None);
    evidence["occurred_at"] = json!(FIXTURE_NOW);
    let headers = s.items.iter().any(|i| !i.header_names.is_empty());
    let mut note = format!(
        "From the unknown log, entry {} ({} sightings, {} to {}, catalogue {}). {LABEL_ME}: set \
         expect.code (a code of catalogue.toml) and expect.rule (the rule that must decide), \
         then run `kandev-recovery catalogue check DIR`.",
        entry.id,
        entry.count,
        entry.first_seen.to_rfc3339(),
        entry.last_seen.to_rfc3339(),
        entry.catalogue_version,
    );
    if headers {
        note.push_str(" Header values were not kept: fill in those the rule or timing needs.");
    }
    json!([{
        "id": format!("unknown-{}", entry.id),
        "note": note,
        "source": "unknown-log",
        "evidence": evidence,
        "expect": {
            "code": format!("{LABEL_ME}: a code of catalogue.toml"),
            "rule": format!("{LABEL_ME}: the rule that must decide"),
        },
    }])
}

/// What `catalogue` makes of the logged entries: each skeleton classified
/// again at the time it was last seen. Entries without a skeleton (logged
/// before skeletons were kept) count as still unknown.
pub fn reclassify(
    catalogue: &Catalogue,
    entries: &[(UnknownEntry, Option<EvidenceSkeleton>)],
) -> UnknownReclassification {
    let mut out = UnknownReclassification {
        catalogue_version: catalogue.version().to_owned(),
        entries: entries.len() as u64,
        with_skeleton: 0,
        classified: 0,
        classified_sightings: 0,
        still_unknown: 0,
        by_code: Vec::new(),
        changed: Vec::new(),
    };
    let mut codes: BTreeMap<String, ReclassifiedCode> = BTreeMap::new();
    for (entry, s) in entries {
        let Some(s) = s else {
            out.still_unknown += 1;
            continue;
        };
        out.with_skeleton += 1;
        let env = envelope(s, Some(entry.last_seen));
        let c = match Evidence::from_json_value(&env) {
            Ok(ev) => classify_at(catalogue, &ev, entry.last_seen),
            Err(_) => {
                // A skeleton this version cannot read is still unknown.
                out.still_unknown += 1;
                continue;
            }
        };
        if c.class == ErrorClass::Unclassified {
            out.still_unknown += 1;
            continue;
        }
        out.classified += 1;
        out.classified_sightings += entry.count;
        let code = codes
            .entry(c.code.clone())
            .or_insert_with(|| ReclassifiedCode {
                code: c.code.clone(),
                class: c.class.as_str().to_owned(),
                entries: 0,
                sightings: 0,
            });
        code.entries += 1;
        code.sightings += entry.count;
        out.changed.push(ReclassifiedEntry {
            id: entry.id.clone(),
            code: c.code,
            classifier_rule: c.classifier_rule,
        });
    }
    out.by_code = codes.into_values().collect();
    out.by_code
        .sort_by(|a, b| b.entries.cmp(&a.entries).then(a.code.cmp(&b.code)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    const KEY: &str = "sk-ant-api03-Abcdefghijklmnop1234";

    fn evidence(text: &str) -> Evidence {
        Evidence::from_json_str(&format!(
            r#"{{"agent":"claude-code","provider_id":"anthropic","model_id":"claude-sonnet-4-5","phase":"prompt",
               "items":[{{"kind":"http","status":418,"headers":{{"retry-after":"7","x-api-key":"{KEY}"}},
                         "body":"teapot for dev@example.com key {KEY}"}},
                        {{"kind":"stderr","lines":["Authorization: Bearer sk-proj-Zk4fQ9wLm2Rt7YxVb3NpHc8D","{text}"]}},
                        {{"kind":"process_exit","exit_code":3,"signal":null}}]}}"#
        ))
        .unwrap()
    }

    fn entry(id: &str, count: u64) -> UnknownEntry {
        let at: DateTime<Utc> = "2026-11-30T12:00:00Z".parse().unwrap();
        UnknownEntry {
            id: id.into(),
            safe_excerpt: String::new(),
            count,
            first_seen: at,
            last_seen: at,
            classifier_rule: "fallback.unmatched".into(),
            agent: None,
            provider_id: None,
            model_id: None,
            catalogue_version: "1.0.0".into(),
            attempts: Vec::new(),
        }
    }

    #[test]
    fn keeps_the_shape_and_no_secret() {
        let s = skeleton(&evidence("odd failure"));
        assert_eq!(s.agent.as_deref(), Some("claude-code"));
        assert_eq!(s.items.len(), 3);
        assert_eq!(s.items[0].kind, "http");
        assert_eq!(s.items[0].status, Some(418));
        assert_eq!(s.items[0].header_names, ["retry-after", "x-api-key"]);
        assert!(s.items[0].excerpt.contains("teapot"));
        assert_eq!(s.items[1].kind, "stderr");
        assert!(s.items[1].excerpt.contains("odd failure"));
        assert_eq!(s.items[2].exit_code, Some(3));
        let json = serde_json::to_string(&s).unwrap();
        for secret in [
            "Abcdefghijklmnop1234",
            "dev@example.com",
            "Zk4fQ9wLm2Rt7YxVb3NpHc8D",
            "\"7\"",
        ] {
            assert!(!json.contains(secret), "{secret} in {json}");
        }
        for i in &s.items {
            assert!(i.excerpt.chars().count() <= sanitize::MAX_EXCERPT_CHARS);
        }
    }

    #[test]
    fn the_envelope_reads_back_as_evidence() {
        let s = skeleton(&evidence("odd failure"));
        let ev = Evidence::from_json_value(&envelope(&s, None)).expect("reads");
        assert_eq!(ev.items.len(), 3);
        assert_eq!(ev.agent.as_deref(), Some("claude-code"));
        assert_eq!(skeleton(&ev).items[0].header_names, s.items[0].header_names);
    }

    #[test]
    fn a_fixture_is_refused_until_labelled_then_passes() {
        let catalogue = Catalogue::builtin();
        let ev = evidence("upstream said: the quota of this workspace is exhausted for today");
        let s = skeleton(&ev);
        let text = serde_json::to_string(&fixture(&entry("abc", 2), &s)).unwrap();
        let loaded = fixtures::load(&[("fixtures/unknown.json", &text)]).expect("fixture format");
        let (_, problems) = fixtures::check(catalogue, &loaded[0]);
        assert!(
            problems.iter().any(|p| p.contains(LABEL_ME)),
            "{problems:?}"
        );
        // A person labels it with what the catalogue answers.
        let c = classify_at(catalogue, &ev, FIXTURE_NOW.parse().unwrap());
        let labelled = text
            .replace(&format!("{LABEL_ME}: a code of catalogue.toml"), &c.code)
            .replace(
                &format!("{LABEL_ME}: the rule that must decide"),
                &c.classifier_rule,
            );
        let loaded = fixtures::load(&[("fixtures/unknown.json", &labelled)]).unwrap();
        let (_, problems) = fixtures::check(catalogue, &loaded[0]);
        assert_eq!(problems, Vec::<String>::new());
    }

    #[test]
    fn reclassify_counts_what_a_catalogue_now_knows() {
        let catalogue = Catalogue::builtin();
        let known = skeleton(
            &Evidence::from_json_str(r#"{"items":[{"kind":"acp_error","code":-32800}]}"#).unwrap(),
        );
        let unknown = skeleton(&evidence("the flux capacitor desynchronised"));
        let r = reclassify(
            catalogue,
            &[
                (entry("a", 3), Some(known)),
                (entry("b", 1), Some(unknown)),
                (entry("c", 5), None),
            ],
        );
        assert_eq!(r.entries, 3);
        assert_eq!(r.with_skeleton, 2);
        assert_eq!(r.classified, 1);
        assert_eq!(r.classified_sightings, 3);
        assert_eq!(r.still_unknown, 2);
        assert_eq!(r.by_code.len(), 1);
        assert_eq!(r.by_code[0].entries, 1);
        assert_eq!(r.changed[0].id, "a");
    }
}
