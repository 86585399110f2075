//! Catalogue fixtures: sanitised evidence with the classification it must
//! get, one JSON file per provider or agent under `catalogue/fixtures/`.
//! One runner serves the table test and `kandev-recovery catalogue check`.

use super::catalogue::Catalogue;
use super::classifier::{classify_at, Classification};
use super::evidence::Evidence;
use chrono::{DateTime, Utc};
use serde::Deserialize;

/// Reference time for fixtures without `occurred_at`.
pub const FIXTURE_NOW: &str = "2026-11-30T12:00:00Z";

/// Fixture files, embedded like the rules.
pub const FIXTURE_SOURCES: &[(&str, &str)] = &[
    (
        "fixtures/generic.json",
        include_str!("../../catalogue/fixtures/generic.json"),
    ),
    (
        "fixtures/anthropic.json",
        include_str!("../../catalogue/fixtures/anthropic.json"),
    ),
    (
        "fixtures/claude-code.json",
        include_str!("../../catalogue/fixtures/claude-code.json"),
    ),
    (
        "fixtures/openai.json",
        include_str!("../../catalogue/fixtures/openai.json"),
    ),
    (
        "fixtures/codex.json",
        include_str!("../../catalogue/fixtures/codex.json"),
    ),
    (
        "fixtures/google.json",
        include_str!("../../catalogue/fixtures/google.json"),
    ),
    (
        "fixtures/gemini-cli.json",
        include_str!("../../catalogue/fixtures/gemini-cli.json"),
    ),
    (
        "fixtures/bedrock.json",
        include_str!("../../catalogue/fixtures/bedrock.json"),
    ),
    (
        "fixtures/openrouter.json",
        include_str!("../../catalogue/fixtures/openrouter.json"),
    ),
    (
        "fixtures/github-models.json",
        include_str!("../../catalogue/fixtures/github-models.json"),
    ),
    (
        "fixtures/cerebras.json",
        include_str!("../../catalogue/fixtures/cerebras.json"),
    ),
    (
        "fixtures/litellm-aider.json",
        include_str!("../../catalogue/fixtures/litellm-aider.json"),
    ),
    (
        "fixtures/opencode.json",
        include_str!("../../catalogue/fixtures/opencode.json"),
    ),
    (
        "fixtures/copilot.json",
        include_str!("../../catalogue/fixtures/copilot.json"),
    ),
    (
        "fixtures/other-agents.json",
        include_str!("../../catalogue/fixtures/other-agents.json"),
    ),
    (
        "fixtures/agent-wordings.json",
        include_str!("../../catalogue/fixtures/agent-wordings.json"),
    ),
    (
        "fixtures/cli-runs.json",
        include_str!("../../catalogue/fixtures/cli-runs.json"),
    ),
    (
        "fixtures/openai-compatible.json",
        include_str!("../../catalogue/fixtures/openai-compatible.json"),
    ),
    (
        "fixtures/cn-providers.json",
        include_str!("../../catalogue/fixtures/cn-providers.json"),
    ),
    (
        "fixtures/cn-provider-codes.json",
        include_str!("../../catalogue/fixtures/cn-provider-codes.json"),
    ),
    (
        "fixtures/gateways.json",
        include_str!("../../catalogue/fixtures/gateways.json"),
    ),
    (
        "fixtures/local-inference.json",
        include_str!("../../catalogue/fixtures/local-inference.json"),
    ),
    (
        "fixtures/agent-runtime.json",
        include_str!("../../catalogue/fixtures/agent-runtime.json"),
    ),
    (
        "fixtures/generic-tier.json",
        include_str!("../../catalogue/fixtures/generic-tier.json"),
    ),
    (
        "fixtures/generic-services.json",
        include_str!("../../catalogue/fixtures/generic-services.json"),
    ),
    (
        "fixtures/generic-components.json",
        include_str!("../../catalogue/fixtures/generic-components.json"),
    ),
    (
        "fixtures/generic-libraries.json",
        include_str!("../../catalogue/fixtures/generic-libraries.json"),
    ),
    (
        "fixtures/agent-components.json",
        include_str!("../../catalogue/fixtures/agent-components.json"),
    ),
];

/// One fixture.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fixture {
    pub id: String,
    #[serde(default)]
    pub note: String,
    #[serde(default)]
    pub source: Option<String>,
    pub evidence: serde_json::Value,
    pub expect: Expectation,
    /// The file it came from (set while loading).
    #[serde(skip)]
    pub file: String,
}

/// What the classification must be. Absent timing means "no timing".
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    pub code: String,
    #[serde(default)]
    pub class: Option<String>,
    /// The rule that must decide.
    pub rule: String,
    #[serde(default)]
    pub retry_after_s: Option<f64>,
    #[serde(default)]
    pub reset_at: Option<DateTime<Utc>>,
    /// Substrings that must not appear anywhere in the output.
    #[serde(default)]
    pub must_not_leak: Vec<String>,
}

/// Loads every embedded fixture; errors name the file.
pub fn builtin_fixtures() -> Result<Vec<Fixture>, Vec<String>> {
    load(FIXTURE_SOURCES)
}

/// Loads fixtures from `(file name, JSON array text)` pairs.
pub fn load(sources: &[(&str, &str)]) -> Result<Vec<Fixture>, Vec<String>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (name, text) in sources {
        match serde_json::from_str::<Vec<Fixture>>(text) {
            Ok(v) => out.extend(v.into_iter().map(|mut f| {
                f.file = (*name).to_owned();
                f
            })),
            Err(e) => errors.push(format!("{name}: {e}")),
        }
    }
    let mut ids = std::collections::HashSet::new();
    for f in &out {
        if !ids.insert(f.id.clone()) {
            errors.push(format!("{}: duplicate fixture id `{}`", f.file, f.id));
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Classifies a fixture and lists every way the result differs from the
/// expectation, including a collision in the deciding tier.
pub fn check(catalogue: &Catalogue, f: &Fixture) -> (Option<Classification>, Vec<String>) {
    let mut problems = Vec::new();
    let ev = match Evidence::from_json_value(&f.evidence) {
        Ok(ev) => ev,
        Err(e) => return (None, vec![format!("evidence does not parse: {e}")]),
    };
    let now: DateTime<Utc> = FIXTURE_NOW.parse().unwrap_or_else(|_| Utc::now());
    let c = classify_at(catalogue, &ev, now);
    let e = &f.expect;
    if c.code != e.code {
        problems.push(format!("code {} (want {})", c.code, e.code));
    }
    match catalogue.class_of(&e.code) {
        None => problems.push(format!("expected code `{}` is not in the registry", e.code)),
        Some(class) => {
            if let Some(want) = &e.class {
                if class.as_str() != want {
                    problems.push(format!(
                        "expected class {want} but the registry says {class}"
                    ));
                }
            }
        }
    }
    if c.classifier_rule != e.rule {
        problems.push(format!("rule {} (want {})", c.classifier_rule, e.rule));
    }
    let want_deadline = e.reset_at.or_else(|| {
        e.retry_after_s.and_then(|s| {
            chrono::Duration::try_milliseconds((s * 1000.0).round() as i64)
                .map(|d| c.occurred_at + d)
        })
    });
    let got_deadline = c.reset_at;
    match (want_deadline, got_deadline) {
        (None, None) => {}
        (Some(w), Some(g)) => {
            let delta = (g - w).num_milliseconds().abs() as f64 / 1000.0;
            let span = (w - c.occurred_at).num_milliseconds().abs() as f64 / 1000.0;
            if delta > f64::max(1.0, 0.01 * span) {
                problems.push(format!("reset_at {g} (want {w})"));
            }
        }
        (Some(w), None) => problems.push(format!("no timing (want reset at {w})")),
        (None, Some(g)) => problems.push(format!("unexpected timing: reset at {g}")),
    }
    let json = serde_json::to_string(&c).unwrap_or_default();
    for leak in &e.must_not_leak {
        if json.contains(leak.as_str()) {
            problems.push(format!("output leaks `{leak}`"));
        }
    }
    let explanation = catalogue.explain(&ev);
    if !explanation.conflicting.is_empty() {
        problems.push(format!(
            "collision in the deciding tier: {}",
            explanation.conflicting.join(", ")
        ));
    }
    (Some(c), problems)
}
