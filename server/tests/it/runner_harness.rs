//! Drives the real `kandev-recovery run` binary against a test server: the
//! test writes a runner configuration, starts the runner, and moves the
//! server's clock whenever the route waits, so every backoff and reset wait
//! runs instantly while the deadlines stay exact. Used by the fake-script
//! and the real-CLI runner tests.
#![allow(dead_code)]

use crate::support::{Api, TestServer};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

pub const RUNNER: &str = env!("CARGO_BIN_EXE_kandev-recovery");

/// One candidate of a test profile.
pub struct Cand<'a> {
    pub label: &'a str,
    pub profile_ref: &'a str,
    pub agent: &'a str,
    pub provider_id: &'a str,
    pub transient: Value,
    pub hard: Value,
}

/// Creates a profile whose candidates carry `profile_ref`s; answers its id.
pub async fn profile(api: &Api, name: &str, candidates: &[Cand<'_>]) -> String {
    let cands: Vec<Value> = candidates
        .iter()
        .map(|c| {
            json!({"label": c.label, "agent": c.agent, "provider_id": c.provider_id,
                   "model_id": "", "profile_ref": c.profile_ref,
                   "policy": {"version": 1, "transient": c.transient, "hard": c.hard}})
        })
        .collect();
    let p = api
        .post_ok(
            "/api/v1/profiles",
            json!({"name": name, "candidates": cands}),
        )
        .await;
    p["id"].as_str().expect("profile id").to_string()
}

/// A wait the route showed while the runner ran.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenWait {
    pub state: String,
    /// Seconds from the server's time to the deadline when first seen.
    pub seconds: f64,
    pub retry_ordinal: u64,
}

/// What one run of the runner did.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub waits: Vec<SeenWait>,
    pub route: Value,
    pub attempts: Vec<Value>,
}

impl Run {
    /// Decisions of the attempt history, oldest first.
    pub fn decisions(&self) -> Vec<String> {
        self.attempts
            .iter()
            .rev()
            .map(|a| a["decision"].as_str().unwrap_or("").to_string())
            .collect()
    }

    pub fn codes(&self) -> Vec<String> {
        self.attempts
            .iter()
            .rev()
            .map(|a| a["code"].as_str().unwrap_or("").to_string())
            .collect()
    }
}

/// How to start the runner.
pub struct Runner {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Advance the clock through waits (off to test `retry_now`).
    pub advance: bool,
    /// Give up after this long.
    pub timeout: Duration,
}

impl Runner {
    pub fn new(server: &TestServer, profile: &str, config: &Path, prompt: &str) -> Runner {
        Runner {
            args: vec![
                "run".into(),
                "--server".into(),
                server.base.clone(),
                "--profile".into(),
                profile.into(),
                "--config".into(),
                config.display().to_string(),
                "--show-evidence".into(),
                "--".into(),
                prompt.into(),
            ],
            env: Vec::new(),
            advance: true,
            timeout: Duration::from_secs(90),
        }
    }

    pub fn spawn(&self) -> tokio::process::Child {
        let mut c = tokio::process::Command::new(RUNNER);
        c.args(&self.args)
            .envs(self.env.iter().cloned())
            .env_remove("KANDEV_SERVER")
            .env_remove("KANDEV_TOKEN")
            // The runner reports with a token, as in production.
            .env("KANDEV_TOKEN", crate::support::ADMIN_TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        c.spawn().expect("start the runner")
    }

    /// Runs to the end, moving the clock through every wait.
    pub async fn run(&self, server: &TestServer, profile_id: &str) -> Run {
        let child = self.spawn();
        self.drive(server, profile_id, child).await
    }

    pub async fn drive(
        &self,
        server: &TestServer,
        profile_id: &str,
        mut child: tokio::process::Child,
    ) -> Run {
        let api = server.api();
        let mut stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let out_task = tokio::spawn(async move {
            let mut s = String::new();
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut s).await;
            s
        });
        let err_task = tokio::spawn(async move {
            let mut s = String::new();
            let _ = tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut s).await;
            s
        });
        let give_up = tokio::time::Instant::now() + self.timeout;
        let mut waits: Vec<SeenWait> = Vec::new();
        let mut advanced_generation = -1;
        let status = loop {
            if let Ok(Some(s)) = child.try_wait() {
                break Some(s);
            }
            if tokio::time::Instant::now() > give_up {
                let _ = child.start_kill();
                break None;
            }
            if let Some(route) = newest_route(&api, profile_id).await {
                let state = route["state"].as_str().unwrap_or("");
                let generation = route["generation"].as_i64().unwrap_or(0);
                if (state == "retry_wait" || state == "waiting_for_reset")
                    && generation != advanced_generation
                {
                    let deadline = route["pending"]["deadline"].as_str().unwrap_or("");
                    let server_time = route["server_time"].as_str().unwrap_or("");
                    let seconds = seconds_between(server_time, deadline);
                    waits.push(SeenWait {
                        state: state.to_string(),
                        seconds,
                        retry_ordinal: route["pending"]["retry_ordinal"].as_u64().unwrap_or(0),
                    });
                    advanced_generation = generation;
                    if self.advance {
                        api.advance(seconds + 0.001).await;
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let stdout = out_task.await.unwrap_or_default();
        let stderr = err_task.await.unwrap_or_default();
        // RUNNER_EVIDENCE_DIR=… keeps every envelope the runner reported
        // (for catalogue fixtures of what real CLIs print).
        if let Some(dir) = std::env::var_os("RUNNER_EVIDENCE_DIR") {
            let name = std::thread::current()
                .name()
                .unwrap_or("run")
                .replace("::", "__");
            let lines: Vec<&str> = stderr
                .lines()
                .filter_map(|l| l.strip_prefix("kandev-recovery: evidence: "))
                .collect();
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(
                Path::new(&dir).join(format!("{name}.jsonl")),
                lines.join("\n"),
            );
        }
        let route = newest_route(&api, profile_id).await.unwrap_or(Value::Null);
        let attempts = match route["id"].as_str() {
            Some(id) => api
                .get(&format!("/api/v1/routes/{id}/attempts"))
                .await
                .as_array()
                .cloned()
                .unwrap_or_default(),
            None => Vec::new(),
        };
        assert!(
            status.is_some(),
            "the runner did not finish in {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
            self.timeout
        );
        Run {
            code: status.and_then(|s| s.code()),
            stdout,
            stderr,
            waits,
            route,
            attempts,
        }
    }
}

pub async fn newest_route(api: &Api, profile_id: &str) -> Option<Value> {
    let list = api
        .get(&format!("/api/v1/routes?profile_id={profile_id}&limit=1"))
        .await;
    list.as_array().and_then(|a| a.first().cloned())
}

pub fn seconds_between(from: &str, to: &str) -> f64 {
    let parse = |s: &str| chrono::DateTime::parse_from_rfc3339(s).map(|t| t.to_utc());
    match (parse(from), parse(to)) {
        (Ok(a), Ok(b)) => (b - a).num_milliseconds() as f64 / 1000.0,
        _ => 0.0,
    }
}

/// One `[agents.<ref>]` table.
pub struct AgentTable {
    pub name: String,
    pub command: Vec<String>,
    pub format: String,
    pub env: Vec<(String, String)>,
    pub cwd: Option<PathBuf>,
    pub timeout_seconds: Option<u64>,
}

impl AgentTable {
    pub fn new(name: &str, command: Vec<String>, format: &str) -> AgentTable {
        AgentTable {
            name: name.into(),
            command,
            format: format.into(),
            env: Vec::new(),
            cwd: None,
            timeout_seconds: None,
        }
    }
}

/// Writes a runner configuration with one `[agents.<ref>]` per entry.
pub fn write_config(dir: &Path, agents: &[AgentTable]) -> PathBuf {
    let mut text = String::new();
    for a in agents {
        text.push_str(&format!("[agents.{}]\n", a.name));
        text.push_str(&format!(
            "command = [{}]\n",
            a.command
                .iter()
                .map(|a| toml_string(a))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        text.push_str(&format!("format = \"{}\"\n", a.format));
        if !a.env.is_empty() {
            text.push_str(&format!(
                "env = {{ {} }}\n",
                a.env
                    .iter()
                    .map(|(k, v)| format!("{k} = {}", toml_string(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(cwd) = &a.cwd {
            text.push_str(&format!(
                "cwd = {}\n",
                toml_string(&cwd.display().to_string())
            ));
        }
        if let Some(seconds) = a.timeout_seconds {
            text.push_str(&format!("timeout_seconds = {seconds}\n"));
        }
        text.push('\n');
    }
    let path = dir.join("kandev-runner.toml");
    std::fs::write(&path, text).expect("write the runner configuration");
    path
}

fn toml_string(s: &str) -> String {
    serde_json::to_string(s).expect("a string")
}
