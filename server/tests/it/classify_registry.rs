//! The code registry: every code has exactly one class, the catalogue agrees
//! with the built-in v1 table the policy core uses, both configurable classes
//! have codes, and a broken catalogue fails loudly with every problem named.

use classify::catalogue::{CATALOGUE_SOURCE, RULE_SOURCES};
use classify::Catalogue;
use domain::policy::class::BUILTIN_CODES;
use domain::policy::{ErrorClass, PolicyClass};
use std::collections::BTreeMap;

#[test]
fn every_code_has_exactly_one_valid_class() {
    let summary = Catalogue::builtin().describe();
    let mut seen = BTreeMap::new();
    for c in &summary.codes {
        assert!(
            seen.insert(c.code.clone(), c.class).is_none(),
            "code `{}` listed twice",
            c.code
        );
        assert!(
            !c.description.is_empty() && !c.example.is_empty(),
            "{}",
            c.code
        );
    }
    assert_eq!(seen.get("unknown"), Some(&ErrorClass::Unclassified));
}

#[test]
fn catalogue_agrees_with_the_builtin_table() {
    let catalogue = Catalogue::builtin();
    for (code, class) in BUILTIN_CODES {
        assert_eq!(
            catalogue.class_of(code),
            Some(*class),
            "catalogue class of `{code}` differs from domain::policy::class::BUILTIN_CODES"
        );
    }
}

#[test]
fn every_policy_class_has_codes() {
    let catalogue = Catalogue::builtin();
    for &pc in PolicyClass::ALL {
        assert!(
            catalogue.codes().any(|(_, c)| c.policy_class() == Some(pc)),
            "no code for policy class {pc}"
        );
    }
    for &class in ErrorClass::ALL {
        assert!(
            catalogue.codes().any(|(_, c)| c == class),
            "no code for {class}"
        );
    }
}

#[test]
fn describe_serialises_for_the_api() {
    let v = serde_json::to_value(Catalogue::builtin().describe()).expect("json");
    assert_eq!(v["version"], Catalogue::builtin().version());
    let codes = v["codes"].as_array().expect("codes");
    let rate = codes
        .iter()
        .find(|c| c["code"] == "rate_limited")
        .expect("rate_limited");
    assert_eq!(rate["class"], "transient");
    assert!(rate["description"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(rate["example"].as_str().is_some_and(|s| !s.is_empty()));
}

fn problems_with(catalogue: &str, rules: &str) -> Vec<String> {
    match Catalogue::from_sources(catalogue, &[("rules/test.toml", rules)]) {
        Ok(_) => Vec::new(),
        Err(e) => e.problems,
    }
}

fn assert_rejected(rules: &str, needle: &str) {
    let p = problems_with(CATALOGUE_SOURCE.1, rules);
    assert!(
        p.iter().any(|x| x.contains(needle)),
        "expected a problem containing `{needle}`, got {p:#?}"
    );
}

#[test]
fn broken_catalogues_fail_loudly() {
    assert_rejected(
        "[[rule]]\nid = \"x.a\"\ntier = \"text\"\ncode = \"nope\"\ntext = 'a'\n",
        "unknown code `nope`",
    );
    assert_rejected(
        "[[rule]]\nid = \"x.a\"\ntier = \"text\"\ncode = \"cancelled\"\ntext = 'a'\n\n[[rule]]\nid = \"x.a\"\ntier = \"text\"\ncode = \"cancelled\"\ntext = 'b'\n",
        "duplicate rule id",
    );
    assert_rejected(
        "[[rule]]\nid = \"x.a\"\ntier = \"text\"\ncode = \"cancelled\"\ntext = '(unclosed'\n",
        "bad text pattern",
    );
    assert_rejected(
        "[[rule]]\nid = \"x.a\"\ntier = \"best\"\ncode = \"cancelled\"\ntext = 'a'\n",
        "unknown tier `best`",
    );
    assert_rejected(
        "[[rule]]\nid = \"x.a\"\ntier = \"text\"\ncode = \"cancelled\"\ntext = 'a'\ntiming = \"short\"\n",
        "only transient or hard codes carry timing",
    );
    assert_rejected(
        "[[rule]]\nid = \"x.a\"\ntier = \"text\"\ncode = \"rate_limited\"\nconfidence = \"low\"\ntext = 'a'\n",
        "low-confidence rule cannot give a recovering code",
    );
    assert_rejected(
        "[[rule]]\nid = \"x.a\"\ntier = \"text\"\ncode = \"cancelled\"\n",
        "at least one positive condition",
    );
    assert_rejected(
        "[[rule]]\nid = \"x.a\"\ntier = \"structured\"\ncode = \"cancelled\"\nerror_type = [\"RateLimit\"]\n",
        "must be written normalised",
    );
    assert_rejected("[[rule]]\nid = \"x.a\"\nbogus = 1\n", "rules/test.toml");
    // A code without a class, and a class that does not exist.
    let broken = CATALOGUE_SOURCE
        .1
        .replacen(
            "class = \"transient\"\nscope = \"provider\"\ndescription = \"The network path",
            "scope = \"provider\"\ndescription = \"The network path",
            1,
        )
        .replacen(
            "class = \"hard\"\nscope = \"model\"",
            "class = \"fatal\"\nscope = \"model\"",
            1,
        );
    let p = problems_with(&broken, "");
    assert!(
        p.iter()
            .any(|x| x.contains("code `network_unavailable` has no class")),
        "{p:#?}"
    );
    assert!(
        p.iter().any(|x| x.contains("unknown class `fatal`")),
        "{p:#?}"
    );
}

#[test]
fn the_builtin_catalogue_loads_without_problems() {
    if let Err(e) = Catalogue::from_sources(CATALOGUE_SOURCE.1, RULE_SOURCES) {
        panic!("{e}");
    }
}
