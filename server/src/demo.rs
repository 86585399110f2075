//! `kandev-recovery demo`: the app with demo profiles and built-in simulated
//! agents that loop through the scenarios of docs/design.md (“Scenarios”)
//! — capacity errors retried
//! on the schedule, a near quota reset waited for, a switch to the next
//! candidate, an unknown error and tool activity stopping for a person — so
//! a newcomer sees routes recover live within a minute of start.
//!
//! The simulated agents are the runner itself ([`runner::session`]) with a
//! launcher that, instead of starting a process, answers from a script of
//! real evidence shapes taken from the catalogue's fixtures. They talk to
//! this server over HTTP like any runner. Nothing touches the network
//! beyond this machine's loopback.

use domain::evidence::{Evidence, Item, StreamItem};
use domain::profile::{Candidate, Profile};
use domain::route::CallerKind;
use runner::attempt::{End, Outcome, Progress};
use runner::client::Service;
use runner::envelope::{effect_item, EffectKind, Phase, Record};
use runner::session::{Launcher, Session};
use runner::ui::Ui;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long a simulated attempt "works" before it answers, so each state
/// is visible on the routes page.
const ATTEMPT_SECONDS: u64 = 2;
/// The pause between rounds of scenarios.
const ROUND_PAUSE_SECONDS: u64 = 20;
/// How far away the near reset is.
const RESET_IN_SECONDS: i64 = 20;

/// What a simulated agent does on one attempt.
#[derive(Debug, Clone)]
enum Sim {
    Answer,
    /// Fails with the evidence of a catalogue fixture.
    Fail(&'static str),
    /// Streams some text, then fails like the fixture.
    WorkThenFail(&'static str),
    /// Claude Code's usage limit, resetting this many seconds from now.
    UsageLimit(i64),
}

/// One scenario: a profile and what each of its candidates does in turn.
struct Scenario {
    profile: &'static str,
    caller: CallerKind,
    reference: &'static str,
    candidates: Vec<Value>,
    scripts: Vec<(&'static str, Vec<Sim>)>,
}

fn candidate(
    label: &str,
    agent: &str,
    provider: &str,
    model: &str,
    r: &str,
    transient: Value,
    hard: Value,
) -> Value {
    json!({"label": label, "agent": agent, "provider_id": provider, "model_id": model,
           "profile_ref": r, "policy": {"version": 1, "transient": transient, "hard": hard}})
}

fn class_policy(retries: u32, initial: u32, wait: u32, outcome: &str) -> Value {
    json!({
        "retry": {"enabled": retries > 0, "max_retries": retries,
                  "initial_interval_seconds": if retries > 0 { initial } else { 0 }},
        "wait_for_reset": {"enabled": wait > 0, "max_wait_seconds": wait},
        "on_exhausted": outcome,
    })
}

fn claude(transient: Value, hard: Value) -> Value {
    candidate(
        "Claude Code (Sonnet)",
        "claude-code",
        "anthropic",
        "claude-sonnet-4-5",
        "demo-claude",
        transient,
        hard,
    )
}

fn codex() -> Value {
    candidate(
        "Codex (GPT-5)",
        "codex",
        "openai",
        "gpt-5-codex",
        "demo-codex",
        class_policy(2, 3, 0, "stop"),
        class_policy(0, 0, 0, "stop"),
    )
}

/// The scenarios of docs/design.md (“Scenarios”), as the demo plays them.
fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            profile: "Demo: capacity errors are retried",
            caller: CallerKind::Kanban,
            reference: "demo: capacity",
            candidates: vec![
                claude(
                    class_policy(3, 3, 0, "skip"),
                    class_policy(0, 0, 300, "skip"),
                ),
                codex(),
            ],
            scripts: vec![(
                "demo-claude",
                vec![Sim::Fail(CAPACITY), Sim::Fail(CAPACITY), Sim::Answer],
            )],
        },
        Scenario {
            profile: "Demo: a near quota reset is waited for",
            caller: CallerKind::Workflow,
            reference: "demo: quota reset",
            candidates: vec![
                claude(
                    class_policy(3, 3, 0, "skip"),
                    class_policy(0, 0, 300, "skip"),
                ),
                codex(),
            ],
            scripts: vec![(
                "demo-claude",
                vec![Sim::UsageLimit(RESET_IN_SECONDS), Sim::Answer],
            )],
        },
        Scenario {
            profile: "Demo: recovery exhausted, switch to the next candidate",
            caller: CallerKind::Utility,
            reference: "demo: switch",
            candidates: vec![
                candidate(
                    "Gemini CLI (2.5 Pro)",
                    "gemini-cli",
                    "google",
                    "gemini-2.5-pro",
                    "demo-gemini",
                    class_policy(1, 2, 0, "skip"),
                    class_policy(0, 0, 0, "skip"),
                ),
                claude(
                    class_policy(3, 3, 0, "skip"),
                    class_policy(0, 0, 300, "skip"),
                ),
            ],
            scripts: vec![
                (
                    "demo-gemini",
                    vec![Sim::Fail(GEMINI_OVERLOADED), Sim::Fail(GEMINI_OVERLOADED)],
                ),
                ("demo-claude", vec![Sim::Answer]),
            ],
        },
        Scenario {
            profile: "Demo: an unknown error stops for you",
            caller: CallerKind::Office,
            reference: "demo: unknown error",
            // Codex first: the scenarios above open Anthropic's circuits,
            // which would (rightly) steer a new route away from Claude.
            candidates: vec![
                codex(),
                claude(
                    class_policy(3, 3, 0, "skip"),
                    class_policy(0, 0, 300, "skip"),
                ),
            ],
            scripts: vec![("demo-codex", vec![Sim::Fail(UNKNOWN)])],
        },
        Scenario {
            profile: "Demo: tool activity makes a retry unsafe",
            caller: CallerKind::Kanban,
            reference: "demo: tool activity",
            candidates: vec![
                codex(),
                claude(
                    class_policy(3, 3, 0, "skip"),
                    class_policy(0, 0, 300, "skip"),
                ),
            ],
            // A dropped stream would be retried, but not after the agent
            // has already worked.
            scripts: vec![("demo-codex", vec![Sim::WorkThenFail(STREAM_DROPPED)])],
        },
    ]
}

// Catalogue fixtures whose evidence the simulated agents report.
const CAPACITY: &str = "anthropic-529-overloaded-retry-after";
const GEMINI_OVERLOADED: &str = "gemini-503-model-overloaded";
const UNKNOWN: &str = "claude-code-tip-is-not-a-limit";
const STREAM_DROPPED: &str = "codex-cli-stream-send-failed";
const USAGE_LIMIT: &str = "claude-code-usage-epoch-headless";

/// A fixture's evidence items, without its timestamp.
fn fixture_items(id: &str) -> Vec<Item> {
    let fixtures = classify::fixtures::builtin_fixtures().unwrap_or_default();
    let missing = || {
        vec![Item::Stderr(StreamItem {
            lines: vec![format!("demo: fixture {id} is missing")],
        })]
    };
    let Some(f) = fixtures.iter().find(|f| f.id == id) else {
        return missing();
    };
    // Read as the service reads any envelope.
    match Evidence::from_json_value(&f.evidence) {
        Ok(evidence) => evidence.items,
        Err(_) => missing(),
    }
}

/// The usage-limit fixture with its reset epoch moved to `seconds` from now.
fn usage_limit(seconds: i64) -> Vec<Item> {
    let epoch = (chrono::Utc::now().timestamp() + seconds).to_string();
    let pattern = regex::Regex::new(r"\|\d{9,}").expect("valid pattern");
    fixture_items(USAGE_LIMIT)
        .into_iter()
        .map(|item| match item {
            Item::Stdout(StreamItem { lines }) => Item::Stdout(StreamItem {
                lines: lines
                    .iter()
                    .map(|l| pattern.replace_all(l, format!("|{epoch}")).into_owned())
                    .collect(),
            }),
            other => other,
        })
        .collect()
}

/// Answers attempts from the scenario's scripts, one step per attempt.
struct Simulated {
    scripts: RefCell<HashMap<String, VecDeque<Sim>>>,
}

impl Launcher for Simulated {
    async fn attempt(
        &self,
        candidate: &Candidate,
        _prompt: &str,
        progress: mpsc::UnboundedSender<Progress>,
        cancel: CancellationToken,
        _ui: &Ui,
    ) -> End {
        let _ = progress.send(Progress::Delivered);
        let step = self
            .scripts
            .borrow_mut()
            .get_mut(&candidate.profile_ref)
            .and_then(VecDeque::pop_front)
            .unwrap_or(Sim::Answer);
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(ATTEMPT_SECONDS)) => {}
            _ = cancel.cancelled() => {}
        }
        let failed = |items: Vec<Item>, phase: Phase| End {
            outcome: Outcome::Failed,
            record: Record {
                phase,
                items,
                stderr: Vec::new(),
                stdout: Vec::new(),
                exit: None,
            },
        };
        match step {
            Sim::Answer => End {
                outcome: Outcome::Succeeded,
                record: Record {
                    phase: Phase::Stream,
                    items: Vec::new(),
                    stderr: Vec::new(),
                    stdout: Vec::new(),
                    exit: None,
                },
            },
            Sim::Fail(id) => failed(fixture_items(id), Phase::Prompt),
            Sim::UsageLimit(seconds) => failed(usage_limit(seconds), Phase::Prompt),
            Sim::WorkThenFail(id) => {
                let _ = progress.send(Progress::Effect(EffectKind::AgentMessageChunk, None));
                let mut items = vec![effect_item(EffectKind::AgentMessageChunk)];
                items.extend(fixture_items(id));
                failed(items, Phase::Stream)
            }
        }
    }
}

/// Starts the simulated agents for the server listening on `listen`.
pub fn spawn(listen: SocketAddr, token: String) {
    let base = format!("http://{}", loopback(listen));
    std::thread::spawn(move || {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            tracing::error!("demo: cannot start the simulated agents' runtime");
            return;
        };
        let local = tokio::task::LocalSet::new();
        local.block_on(&runtime, play(base, token));
    });
}

/// An unspecified listen address is reached on loopback.
fn loopback(listen: SocketAddr) -> SocketAddr {
    let mut addr = listen;
    if addr.ip().is_unspecified() {
        addr.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    addr
}

async fn play(base: String, token: String) {
    let Ok(service) = Service::new(&base, Some(token)) else {
        return;
    };
    if !ready(&base).await {
        tracing::error!("demo: the server did not become ready; no simulated agents");
        return;
    }
    let scenarios = scenarios();
    let mut profiles = Vec::new();
    for s in &scenarios {
        match ensure_profile(&service, s).await {
            Ok(p) => profiles.push(p),
            Err(e) => {
                tracing::error!(error = %e, profile = s.profile, "demo: cannot create a demo profile");
                return;
            }
        }
    }
    tracing::info!(
        "demo: simulated agents are running; open {base}/routes to watch routes recover"
    );
    let ui = Ui::quiet();
    let mut round = 0u64;
    loop {
        round += 1;
        let runs = scenarios
            .iter()
            .zip(&profiles)
            .enumerate()
            .map(|(i, (s, p))| {
                let service = &service;
                let ui = &ui;
                async move {
                    // Staggered, so the page does not change all at once.
                    tokio::time::sleep(Duration::from_millis(1500 * i as u64)).await;
                    play_one(service, s, p.clone(), ui, round).await;
                }
            });
        futures::future::join_all(runs).await;
        tokio::time::sleep(Duration::from_secs(ROUND_PAUSE_SECONDS)).await;
    }
}

async fn play_one(service: &Service, s: &Scenario, profile: Profile, ui: &Ui, round: u64) {
    let reference = format!("{} (round {round})", s.reference);
    let route = match service.open_route(&profile.id, s.caller, &reference).await {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "demo: cannot open a route");
            return;
        }
    };
    let launcher = Simulated {
        scripts: RefCell::new(
            s.scripts
                .iter()
                .map(|(r, steps)| (r.to_string(), steps.iter().cloned().collect()))
                .collect(),
        ),
    };
    let mut session = Session {
        service,
        profile,
        launcher: &launcher,
        ui,
        cancel: CancellationToken::new(),
        prompt: "demo prompt",
    };
    let _ = session.follow(route, false).await;
}

async fn ready(base: &str) -> bool {
    let client = reqwest::Client::new();
    for _ in 0..240 {
        if let Ok(r) = client.get(format!("{base}/readyz")).send().await {
            if r.status().is_success() {
                return true;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    false
}

/// The scenario's profile, created on first start.
async fn ensure_profile(
    service: &Service,
    s: &Scenario,
) -> Result<Profile, runner::client::ServiceError> {
    if let Some(p) = service
        .profiles()
        .await?
        .into_iter()
        .find(|p| p.name == s.profile)
    {
        return Ok(p);
    }
    service
        .create_profile(&json!({"name": s.profile, "candidates": s.candidates}))
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use classify::{classify_at, Catalogue, Evidence};

    fn classify(items: &[Item]) -> (String, Option<chrono::DateTime<chrono::Utc>>) {
        let v = json!({"items": items});
        let ev = Evidence::from_json_value(&v).expect("evidence");
        let c = classify_at(Catalogue::builtin(), &ev, chrono::Utc::now());
        (c.code, c.reset_at)
    }

    #[test]
    fn the_scenarios_evidence_classifies_as_they_need() {
        assert_eq!(classify(&fixture_items(CAPACITY)).0, "provider_overloaded");
        assert_eq!(
            classify(&fixture_items(GEMINI_OVERLOADED)).0,
            "model_capacity"
        );
        assert_eq!(classify(&fixture_items(UNKNOWN)).0, "unknown");
        assert_eq!(
            classify(&fixture_items(STREAM_DROPPED)).0,
            "network_unavailable"
        );
        let (code, reset) = classify(&usage_limit(RESET_IN_SECONDS));
        assert_eq!(code, "quota_limited");
        let left = (reset.expect("a reset") - chrono::Utc::now()).num_seconds();
        assert!(
            (RESET_IN_SECONDS - 5..=RESET_IN_SECONDS).contains(&left),
            "{left}"
        );
    }

    #[test]
    fn every_scenario_profile_is_valid() {
        for s in scenarios() {
            let doc = json!({"name": s.profile, "candidates": s.candidates});
            let errors = domain::profile::check_profile(&doc, domain::profile::Intent::Create);
            assert!(errors.is_empty(), "{}: {errors:?}", s.profile);
        }
    }
}
