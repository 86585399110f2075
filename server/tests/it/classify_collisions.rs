//! Priority is data, not file order: no fixture is matched by two rules of
//! its deciding tier with different codes, and shuffling rules or files does
//! not change a single classification.

use classify::catalogue::{CATALOGUE_SOURCE, RULE_SOURCES};
use classify::{classify_at, fixtures, Catalogue, CatalogueSpec, Evidence, RULE_CONFLICT};

fn now() -> chrono::DateTime<chrono::Utc> {
    "2026-11-30T12:00:00Z".parse().expect("time")
}

fn evidences() -> Vec<(String, Evidence)> {
    let mut out: Vec<(String, Evidence)> = fixtures::builtin_fixtures()
        .expect("fixtures")
        .into_iter()
        .map(|f| {
            let ev = Evidence::from_json_value(&f.evidence).expect("fixture evidence");
            (f.id, ev)
        })
        .collect();
    let corpus = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/corpus/public.jsonl"
    );
    if let Ok(text) = std::fs::read_to_string(corpus) {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: serde_json::Value = serde_json::from_str(line).expect("corpus line");
            let ev = Evidence::from_json_value(&v["evidence"]).expect("corpus evidence");
            out.push((v["id"].as_str().unwrap_or("?").to_owned(), ev));
        }
    }
    out
}

fn classify_all(c: &Catalogue, evs: &[(String, Evidence)]) -> Vec<String> {
    evs.iter()
        .map(|(id, ev)| {
            format!(
                "{id}: {}",
                serde_json::to_string(&classify_at(c, ev, now())).expect("json")
            )
        })
        .collect()
}

#[test]
fn no_fixture_collides_in_its_deciding_tier() {
    let catalogue = Catalogue::builtin();
    let mut collisions = Vec::new();
    for f in fixtures::builtin_fixtures().expect("fixtures") {
        let ev = Evidence::from_json_value(&f.evidence).expect("evidence");
        let ex = catalogue.explain(&ev);
        if !ex.conflicting.is_empty() {
            collisions.push(format!("{}: {:?}", f.id, ex.conflicting));
        }
        // The deciding tier's rules agree on one code.
        if let Some(top) = ex.matches.first() {
            let codes: std::collections::BTreeSet<&str> = ex
                .matches
                .iter()
                .filter(|m| m.tier_rank == top.tier_rank)
                .map(|m| m.code.as_str())
                .collect();
            if codes.len() > 1 {
                collisions.push(format!("{}: {codes:?}", f.id));
            }
        }
    }
    assert!(
        collisions.is_empty(),
        "collisions:\n{}",
        collisions.join("\n")
    );
}

/// A small deterministic shuffle (no RNG dependency needed).
fn shuffle<T>(v: &mut [T], mut seed: u64) {
    for i in (1..v.len()).rev() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let j = (seed >> 33) as usize % (i + 1);
        v.swap(i, j);
    }
}

#[test]
fn results_do_not_depend_on_rule_or_file_order() {
    let evs = evidences();
    let baseline = classify_all(Catalogue::builtin(), &evs);

    let mut files: Vec<(&str, &str)> = RULE_SOURCES.to_vec();
    files.reverse();
    let reversed = Catalogue::from_sources(CATALOGUE_SOURCE.1, &files).expect("reversed files");
    assert_eq!(
        classify_all(&reversed, &evs),
        baseline,
        "file order changed results"
    );

    for seed in [1u64, 7, 42, 2026] {
        let mut spec: CatalogueSpec =
            Catalogue::parse(CATALOGUE_SOURCE.1, RULE_SOURCES).expect("parse");
        shuffle(&mut spec.rules, seed);
        let shuffled = Catalogue::compile(spec).expect("compile");
        assert_eq!(
            classify_all(&shuffled, &evs),
            baseline,
            "rule order (seed {seed}) changed results"
        );
    }
}

#[test]
fn disagreeing_rules_in_the_deciding_tier_give_unknown() {
    let ev = Evidence::from_json_str(
        r#"{"items":[{"kind":"stderr","lines":[
            "Error: getaddrinfo ENOTFOUND api.example.com",
            "Error: Rate limit exceeded, please slow down"]}]}"#,
    )
    .expect("envelope");
    let c = classify_at(Catalogue::builtin(), &ev, now());
    assert_eq!(c.code, "unknown");
    assert_eq!(c.classifier_rule, RULE_CONFLICT);
    assert_eq!(c.retry_after_seconds, None);
    let ex = Catalogue::builtin().explain(&ev);
    assert_eq!(ex.conflicting, vec!["net.dns", "text.rate_limit"]);
}
