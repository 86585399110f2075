//! The real agent CLIs (server/tests/agents, pinned in its package-lock.json
//! and installed by scripts/setup) run directly against the fake provider on
//! 127.0.0.1, each scenario asserting what the CLI really prints and how it
//! exits. server/tests/agents/README.md describes the same behaviour in words;
//! `AGENTS_WRITE_SAMPLES=1 cargo test -p server --test it agents_` rewrites
//! server/tests/agents/samples/ from these runs (sanitised).
//!
//! Setups (`claude_stream_json`, `codex_json`, `codex_app_server`,
//! `gemini_stream_json`, `gemini_acp`) write the CLI's config under a temp dir and return the argv
//! (with the literal `{prompt}`) and the COMPLETE environment the CLI needs:
//! the tests run it with `env_clear()` plus that, so nothing of this machine's
//! environment (keys, proxies, HOME) leaks in.
#![allow(dead_code)]

use crate::fake_provider::{FakeProvider, Reply};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// The literal the argv templates carry where the prompt goes.
pub const PROMPT: &str = "{prompt}";

/// How to run one agent CLI against a base URL.
#[derive(Clone, Debug)]
pub struct AgentSetup {
    /// argv[0] is the absolute path of the binary in node_modules/.bin; one
    /// element is `{prompt}` (none for ACP agents: the prompt goes in
    /// `session/prompt`).
    pub argv: Vec<String>,
    /// The whole environment to run it with (including PATH, HOME, TMPDIR).
    pub env: Vec<(String, String)>,
    pub cwd: PathBuf,
}

impl AgentSetup {
    /// Sets (or replaces) one environment variable.
    pub fn with_env(mut self, k: &str, v: &str) -> Self {
        self.env.retain(|(key, _)| key != k);
        self.env.push((k.to_string(), v.to_string()));
        self
    }
    /// Appends arguments before the prompt is substituted.
    pub fn with_args(mut self, args: &[&str]) -> Self {
        self.argv.extend(args.iter().map(|s| s.to_string()));
        self
    }
    /// argv with `{prompt}` replaced.
    pub fn argv_for(&self, prompt: &str) -> Vec<String> {
        self.argv
            .iter()
            .map(|a| {
                if a == PROMPT {
                    prompt.to_string()
                } else {
                    a.clone()
                }
            })
            .collect()
    }
    fn command(&self, prompt: &str) -> tokio::process::Command {
        let argv = self.argv_for(prompt);
        let mut c = tokio::process::Command::new(&argv[0]);
        c.args(&argv[1..])
            .env_clear()
            .envs(self.env.iter().cloned())
            .current_dir(&self.cwd)
            .kill_on_drop(true)
            .process_group(0);
        c
    }
}

/// server/tests/agents: package.json, the lock, node_modules, samples.
pub fn agents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/agents")
}

/// The CLI's binary; fails (never skips) when the npm packages are missing.
pub fn bin(name: &str) -> String {
    let p = agents_dir().join("node_modules/.bin").join(name);
    if !p.exists() {
        panic!(
            "agent CLI `{name}` is not installed ({} is missing): run scripts/setup, which installs \
             server/tests/agents with `npm ci` (Claude Code, Codex and Gemini CLI at the versions in \
             its package-lock.json)",
            p.display()
        );
    }
    p.to_string_lossy().into_owned()
}

fn base_env(dir: &Path, home: &Path) -> Vec<(String, String)> {
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(home).unwrap();
    vec![
        (
            "PATH".into(),
            std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into()),
        ),
        ("HOME".into(), home.display().to_string()),
        ("TMPDIR".into(), tmp.display().to_string()),
        ("LANG".into(), "C.UTF-8".into()),
        ("TERM".into(), "dumb".into()),
        ("NO_COLOR".into(), "1".into()),
    ]
}

fn work_dir(dir: &Path) -> PathBuf {
    let cwd = dir.join("work");
    std::fs::create_dir_all(&cwd).unwrap();
    cwd
}

/// Claude Code: `claude -p {prompt} --output-format stream-json --verbose`,
/// its own retries off (`CLAUDE_CODE_MAX_RETRIES=0`), no traffic but the
/// model calls.
pub fn claude_stream_json(dir: &Path, base: &str) -> AgentSetup {
    let home = dir.join("home");
    let mut env = base_env(dir, &home);
    env.extend(
        [
            ("ANTHROPIC_BASE_URL", base),
            ("ANTHROPIC_API_KEY", "sk-ant-fake-key"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    AgentSetup {
        argv: vec![
            bin("claude"),
            "-p".into(),
            PROMPT.into(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
        ],
        env,
        cwd: work_dir(dir),
    }
}

/// The same with `--include-partial-messages`: streamed text arrives as
/// `stream_event` lines as it is generated.
pub fn claude_stream_json_partial(dir: &Path, base: &str) -> AgentSetup {
    claude_stream_json(dir, base).with_args(&["--include-partial-messages"])
}

/// Claude Code signed in with a Claude subscription (Pro/Max) instead of an
/// API key: `CLAUDE_CODE_OAUTH_TOKEN`, as `claude setup-token` gives it.
/// Only then does it read the `anthropic-ratelimit-unified-*` headers into
/// `rate_limit_event` lines and usage-limit messages; with partial
/// messages, as the runner runs it.
pub fn claude_stream_json_subscription(dir: &Path, base: &str) -> AgentSetup {
    let mut s = claude_stream_json_partial(dir, base);
    s.env.retain(|(k, _)| k != "ANTHROPIC_API_KEY");
    s.with_env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-fake-token")
}

/// Codex: a `fake` model provider in `$CODEX_HOME/config.toml` (Codex ignores
/// OPENAI_BASE_URL), `codex exec --json --skip-git-repo-check {prompt}`, its
/// request and stream retries at 0.
pub fn codex_json(dir: &Path, base: &str) -> AgentSetup {
    codex_json_with_retries(dir, base, 0, 0)
}

pub fn codex_json_with_retries(
    dir: &Path,
    base: &str,
    request_max_retries: u32,
    stream_max_retries: u32,
) -> AgentSetup {
    codex_json_config(dir, base, request_max_retries, stream_max_retries, 10_000)
}

pub fn codex_json_config(
    dir: &Path,
    base: &str,
    request_max_retries: u32,
    stream_max_retries: u32,
    stream_idle_timeout_ms: u64,
) -> AgentSetup {
    let home = dir.join("home");
    let codex_home = dir.join("codex-home");
    std::fs::create_dir_all(&codex_home).unwrap();
    let config = format!(
        r#"# Written by agents_cli.rs: every request goes to the fake provider.
model = "gpt-5.5"
model_provider = "fake"

[features]
# The curated-plugin sync clones from GitHub at start; the apps connector and
# remote plugins call OpenAI. Off, Codex makes no call but the model's.
plugins = false
remote_plugin = false
apps = false

[model_providers.fake]
name = "Fake provider"
base_url = "{base}/v1"
env_key = "FAKE_OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = {request_max_retries}
stream_max_retries = {stream_max_retries}
stream_idle_timeout_ms = {stream_idle_timeout_ms}
"#
    );
    std::fs::write(codex_home.join("config.toml"), config).unwrap();
    let mut env = base_env(dir, &home);
    env.push(("CODEX_HOME".into(), codex_home.display().to_string()));
    env.push(("FAKE_OPENAI_API_KEY".into(), "sk-fake-key".into()));
    AgentSetup {
        argv: vec![
            bin("codex"),
            "exec".into(),
            "--json".into(),
            "--skip-git-repo-check".into(),
            PROMPT.into(),
        ],
        env,
        cwd: work_dir(dir),
    }
}

/// Codex's app server (`codex app-server`, JSON-RPC over stdio) with the
/// same `fake` provider as [`codex_json`]: no `{prompt}`, the prompt goes
/// in `turn/start`.
pub fn codex_app_server(dir: &Path, base: &str) -> AgentSetup {
    codex_app_server_with_retries(dir, base, 0)
}

/// The same with `stream_max_retries` (Codex's own retries of a failed
/// stream, announced as `error` notifications with `willRetry: true`).
pub fn codex_app_server_with_retries(
    dir: &Path,
    base: &str,
    stream_max_retries: u32,
) -> AgentSetup {
    let mut s = codex_json_with_retries(dir, base, 0, stream_max_retries);
    s.argv = vec![bin("codex"), "app-server".into()];
    s
}

fn gemini_env(dir: &Path, base: &str, max_attempts: u32) -> (Vec<(String, String)>, PathBuf) {
    let home = dir.join("home");
    std::fs::create_dir_all(home.join(".gemini")).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"maxAttempts": max_attempts, "enableAutoUpdate": false, "enableAutoUpdateNotification": false},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false}
    });
    std::fs::write(
        home.join(".gemini/settings.json"),
        serde_json::to_string_pretty(&settings).unwrap(),
    )
    .unwrap();
    let mut env = base_env(dir, &home);
    env.extend(
        [
            ("GEMINI_API_KEY", base_key()),
            ("GOOGLE_GEMINI_BASE_URL", base),
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    (env, work_dir(dir))
}

fn base_key() -> &'static str {
    "fake-gemini-key"
}

/// Gemini CLI headless: `gemini -m gemini-2.5-flash -p {prompt}
/// --output-format stream-json`, one attempt per model call. The explicit
/// model matters: with the default `auto` it first asks a router model
/// (a JSON-mode generateContent that ignores maxAttempts).
pub fn gemini_stream_json(dir: &Path, base: &str) -> AgentSetup {
    gemini_stream_json_attempts(dir, base, 1)
}

pub fn gemini_stream_json_attempts(dir: &Path, base: &str, max_attempts: u32) -> AgentSetup {
    let (env, cwd) = gemini_env(dir, base, max_attempts);
    AgentSetup {
        argv: vec![
            bin("gemini"),
            "-m".into(),
            "gemini-2.5-flash".into(),
            "-p".into(),
            PROMPT.into(),
            "--output-format".into(),
            "stream-json".into(),
        ],
        env,
        cwd,
    }
}

/// Gemini CLI as an ACP agent over stdio: `gemini --acp -m gemini-2.5-flash`.
pub fn gemini_acp(dir: &Path, base: &str) -> AgentSetup {
    let (env, cwd) = gemini_env(dir, base, 1);
    AgentSetup {
        argv: vec![
            bin("gemini"),
            "--acp".into(),
            "-m".into(),
            "gemini-2.5-flash".into(),
        ],
        env,
        cwd,
    }
}

// ---- running ----

#[derive(Debug)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub exit: Option<i32>,
    pub elapsed: Duration,
}

impl Outcome {
    /// stdout's JSON lines (others are skipped).
    pub fn events(&self) -> Vec<Value> {
        self.stdout
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
    pub fn events_of(&self, ty: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["type"] == ty)
            .collect()
    }
    fn show(&self) -> String {
        format!(
            "exit {:?} after {:?}\n--- stdout\n{}\n--- stderr\n{}",
            self.exit,
            self.elapsed,
            self.stdout,
            self.stderr.chars().take(4000).collect::<String>()
        )
    }
}

const RUN_LIMIT: Duration = Duration::from_secs(60);

/// Runs the CLI with the prompt, stdin closed (Codex reads a piped stdin to
/// EOF before it starts; Claude Code waits 3 s for one).
pub async fn run(setup: &AgentSetup, prompt: &str) -> Outcome {
    run_within(setup, prompt, RUN_LIMIT)
        .await
        .unwrap_or_else(|o| {
            panic!(
                "{} did not finish within {RUN_LIMIT:?}\n{}",
                setup.argv[0],
                o.show()
            )
        })
}

/// Runs the CLI for at most `limit`: Err with what it printed so far (and
/// the process group killed) when it is still running then.
pub async fn run_within(
    setup: &AgentSetup,
    prompt: &str,
    limit: Duration,
) -> Result<Outcome, Outcome> {
    let started = Instant::now();
    let mut child = setup
        .command(prompt)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {:?}: {e}", setup.argv[0]));
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let (mut so, mut se) = (Vec::new(), Vec::new());
    let pid = child.id();
    let waited = tokio::time::timeout(limit, async {
        let (a, b, st) = tokio::join!(
            out.read_to_end(&mut so),
            err.read_to_end(&mut se),
            child.wait()
        );
        let _ = (a, b);
        st
    })
    .await;
    let timed_out = waited.is_err();
    if timed_out {
        // The whole group: Codex's launcher and Gemini's node children too.
        if let Some(pid) = pid {
            unsafe_kill_group(pid);
        }
        let _ = child.kill().await;
    }
    let o = Outcome {
        stdout: String::from_utf8_lossy(&so).into_owned(),
        stderr: String::from_utf8_lossy(&se).into_owned(),
        exit: waited.ok().and_then(|st| st.ok()).and_then(|s| s.code()),
        elapsed: started.elapsed(),
    };
    if timed_out {
        Err(o)
    } else {
        Ok(o)
    }
}

fn unsafe_kill_group(pid: u32) {
    // The child leads its own process group (process_group(0)).
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .status();
}

/// One ACP session: initialize, session/new, session/prompt; permission
/// requests answered with `permission` (an optionId, or None = cancelled).
#[derive(Debug)]
pub struct AcpRun {
    /// `>` sent by us, `<` sent by the agent, in order.
    pub transcript: Vec<(char, Value)>,
    /// The response (result or error) to session/prompt.
    pub prompt_response: Value,
    pub stderr: String,
    pub exit: Option<i32>,
    pub elapsed: Duration,
}

impl AcpRun {
    pub fn updates(&self) -> Vec<Value> {
        self.transcript
            .iter()
            .filter(|(d, m)| *d == '<' && m["method"] == "session/update")
            .map(|(_, m)| m["params"]["update"].clone())
            .collect()
    }
    pub fn updates_of(&self, kind: &str) -> Vec<Value> {
        self.updates()
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }
    pub fn requests_from_agent(&self, method: &str) -> Vec<Value> {
        self.transcript
            .iter()
            .filter(|(d, m)| *d == '<' && m["method"] == method && m.get("id").is_some())
            .map(|(_, m)| m.clone())
            .collect()
    }
    fn show(&self) -> String {
        let mut s = String::new();
        for (d, m) in &self.transcript {
            s.push_str(&format!(
                "{d} {}\n",
                m.to_string().chars().take(600).collect::<String>()
            ));
        }
        format!(
            "exit {:?} after {:?}\n{s}--- stderr\n{}",
            self.exit,
            self.elapsed,
            self.stderr.chars().take(3000).collect::<String>()
        )
    }
    /// The transcript as JSON lines, each prefixed with its direction.
    pub fn transcript_text(&self) -> String {
        self.transcript
            .iter()
            .map(|(d, m)| format!("{d} {m}\n"))
            .collect()
    }
}

pub async fn run_acp(setup: &AgentSetup, prompt: &str, permission: Option<&str>) -> AcpRun {
    let started = Instant::now();
    let mut child = setup
        .command(prompt)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {:?}: {e}", setup.argv[0]));
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut err = child.stderr.take().unwrap();
    let stderr_task = tokio::spawn(async move {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v).await;
        String::from_utf8_lossy(&v).into_owned()
    });
    let mut transcript: Vec<(char, Value)> = Vec::new();

    async fn send(stdin: &mut tokio::process::ChildStdin, t: &mut Vec<(char, Value)>, m: Value) {
        stdin
            .write_all(format!("{m}\n").as_bytes())
            .await
            .expect("write to the ACP agent");
        stdin.flush().await.unwrap();
        t.push(('>', m));
    }

    let cwd = setup.cwd.display().to_string();
    let steps = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}),
        json!({"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":cwd,"mcpServers":[]}}),
        json!({"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"","prompt":[{"type":"text","text":prompt}]}}),
    ];
    let mut session_id = String::new();
    let mut prompt_response = Value::Null;
    let result = tokio::time::timeout(RUN_LIMIT, async {
        for mut step in steps {
            let id = step["id"].as_i64().unwrap();
            if id == 3 {
                step["params"]["sessionId"] = json!(session_id);
            }
            send(&mut stdin, &mut transcript, step).await;
            loop {
                let Some(line) = lines.next_line().await.expect("read from the ACP agent") else {
                    return Err(format!("the agent closed stdout while we waited for the response to id {id}"));
                };
                let Ok(m) = serde_json::from_str::<Value>(&line) else {
                    transcript.push(('<', json!({"non_json_line": line})));
                    continue;
                };
                transcript.push(('<', m.clone()));
                if m.get("method").is_some() && m.get("id").is_some() {
                    // A request from the agent.
                    let answer = if m["method"] == "session/request_permission" {
                        match permission {
                            Some(opt) => json!({"outcome":{"outcome":"selected","optionId":opt}}),
                            None => json!({"outcome":{"outcome":"cancelled"}}),
                        }
                    } else {
                        Value::Null
                    };
                    let reply = if answer.is_null() {
                        json!({"jsonrpc":"2.0","id":m["id"],"error":{"code":-32601,"message":"not supported by this client"}})
                    } else {
                        json!({"jsonrpc":"2.0","id":m["id"],"result":answer})
                    };
                    send(&mut stdin, &mut transcript, reply).await;
                    continue;
                }
                if m.get("method").is_none() && m["id"].as_i64() == Some(id) {
                    if id == 2 {
                        session_id = m["result"]["sessionId"].as_str().unwrap_or_default().to_string();
                    }
                    if id == 3 {
                        prompt_response = m.clone();
                    }
                    break;
                }
            }
        }
        Ok(())
    })
    .await;
    drop(stdin); // EOF: the agent exits
    let exit = match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
        Ok(st) => st.ok().and_then(|s| s.code()),
        Err(_) => {
            let _ = child.start_kill();
            None
        }
    };
    let stderr = stderr_task.await.unwrap_or_default();
    let run = AcpRun {
        transcript,
        prompt_response,
        stderr,
        exit,
        elapsed: started.elapsed(),
    };
    match result {
        Ok(Ok(())) => run,
        Ok(Err(e)) => panic!("{e}\n{}", run.show()),
        Err(_) => panic!(
            "the ACP session did not finish within {RUN_LIMIT:?}\n{}",
            run.show()
        ),
    }
}

/// One `codex app-server` turn: initialize, initialized, thread/start,
/// turn/start, until `turn/completed`; approval requests declined, others
/// refused.
pub async fn run_codex_app(setup: &AgentSetup, prompt: &str) -> AcpRun {
    let started = Instant::now();
    let mut child = setup
        .command(prompt)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawning {:?}: {e}", setup.argv[0]));
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut err = child.stderr.take().unwrap();
    let stderr_task = tokio::spawn(async move {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v).await;
        String::from_utf8_lossy(&v).into_owned()
    });
    let mut transcript: Vec<(char, Value)> = Vec::new();

    async fn send(stdin: &mut tokio::process::ChildStdin, t: &mut Vec<(char, Value)>, m: Value) {
        stdin
            .write_all(format!("{m}\n").as_bytes())
            .await
            .expect("write to codex app-server");
        stdin.flush().await.unwrap();
        t.push(('>', m));
    }

    let cwd = setup.cwd.display().to_string();
    let mut turn_completed = Value::Null;
    let result = tokio::time::timeout(RUN_LIMIT, async {
        send(
            &mut stdin,
            &mut transcript,
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"clientInfo":{"name":"agents_cli","version":"0"}}}),
        )
        .await;
        loop {
            let Some(line) = lines.next_line().await.expect("read from codex app-server") else {
                return Err("codex app-server closed stdout before the turn completed".to_string());
            };
            let Ok(m) = serde_json::from_str::<Value>(&line) else {
                transcript.push(('<', json!({"non_json_line": line})));
                continue;
            };
            transcript.push(('<', m.clone()));
            match (m.get("id").and_then(Value::as_i64), m["method"].as_str()) {
                (Some(0), None) => {
                    send(&mut stdin, &mut transcript, json!({"jsonrpc":"2.0","method":"initialized"})).await;
                    send(
                        &mut stdin,
                        &mut transcript,
                        json!({"jsonrpc":"2.0","id":1,"method":"thread/start","params":{"cwd":cwd}}),
                    )
                    .await;
                }
                (Some(1), None) => {
                    let thread = m["result"]["thread"]["id"].clone();
                    send(
                        &mut stdin,
                        &mut transcript,
                        json!({"jsonrpc":"2.0","id":2,"method":"turn/start","params":{"threadId":thread,"input":[{"type":"text","text":prompt}]}}),
                    )
                    .await;
                }
                (_, Some("turn/completed")) => {
                    turn_completed = m.clone();
                    return Ok(());
                }
                (_, Some(method)) if m.get("id").is_some() => {
                    let reply = if method.ends_with("requestApproval") {
                        json!({"jsonrpc":"2.0","id":m["id"],"result":{"decision":"decline"}})
                    } else {
                        json!({"jsonrpc":"2.0","id":m["id"],"error":{"code":-32601,"message":"not supported by this client"}})
                    };
                    send(&mut stdin, &mut transcript, reply).await;
                }
                (Some(id), None) if m.get("error").is_some() => {
                    return Err(format!("request {id} was refused"));
                }
                _ => {}
            }
        }
    })
    .await;
    drop(stdin); // EOF: the server exits
    let exit = match tokio::time::timeout(Duration::from_secs(10), child.wait()).await {
        Ok(st) => st.ok().and_then(|s| s.code()),
        Err(_) => {
            if let Some(pid) = child.id() {
                unsafe_kill_group(pid);
            }
            let _ = child.start_kill();
            None
        }
    };
    let stderr = stderr_task.await.unwrap_or_default();
    let run = AcpRun {
        transcript,
        prompt_response: turn_completed,
        stderr,
        exit,
        elapsed: started.elapsed(),
    };
    match result {
        Ok(Ok(())) => run,
        Ok(Err(e)) => panic!("{e}\n{}", run.show()),
        Err(_) => panic!(
            "the app-server turn did not finish within {RUN_LIMIT:?}\n{}",
            run.show()
        ),
    }
}

impl AcpRun {
    /// The server's notifications of one method, their params.
    pub fn notifications(&self, method: &str) -> Vec<Value> {
        self.transcript
            .iter()
            .filter(|(d, m)| *d == '<' && m["method"] == method && m.get("id").is_none())
            .map(|(_, m)| m["params"].clone())
            .collect()
    }
}

// ---- samples ----

fn sanitise(s: &str, dir: &Path, base: &str) -> String {
    let port = base.rsplit(':').next().unwrap_or("");
    s.replace(&dir.display().to_string(), "<tmp>")
        .replace(&agents_dir().display().to_string(), "<agents>")
        .replace(&format!("127.0.0.1:{port}"), "127.0.0.1:<port>")
}

fn write_sample(
    cli: &str,
    scenario: &str,
    dir: &Path,
    base: &str,
    stdout: &str,
    stderr: &str,
    exit: Option<i32>,
) {
    if std::env::var_os("AGENTS_WRITE_SAMPLES").is_none() {
        return;
    }
    let d = agents_dir().join("samples").join(cli);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join(format!("{scenario}.stdout")),
        sanitise(stdout, dir, base),
    )
    .unwrap();
    std::fs::write(
        d.join(format!("{scenario}.stderr")),
        sanitise(stderr, dir, base),
    )
    .unwrap();
    let exit = exit
        .map(|c| c.to_string())
        .unwrap_or_else(|| "signal".into());
    std::fs::write(d.join(format!("{scenario}.exit")), format!("{exit}\n")).unwrap();
}

/// Starts a fake with `script`, runs the setup, records the sample.
async fn scenario(
    cli: &str,
    name: &str,
    setup: fn(&Path, &str) -> AgentSetup,
    script: Vec<Reply>,
) -> (Outcome, FakeProvider) {
    scenario_with(cli, name, setup, script).await
}

async fn scenario_with(
    cli: &str,
    name: &str,
    setup: impl FnOnce(&Path, &str) -> AgentSetup,
    script: Vec<Reply>,
) -> (Outcome, FakeProvider) {
    let fake = FakeProvider::start().await;
    for r in script {
        fake.push(r);
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path(), &fake.base_url());
    let out = run(&s, "Answer with the word PONG.").await;
    eprintln!(
        "{cli}/{name}: exit {:?} in {:?}, {} model call(s)",
        out.exit,
        out.elapsed,
        fake.model_calls()
    );
    write_sample(
        cli,
        name,
        dir.path(),
        &fake.base_url(),
        &out.stdout,
        &out.stderr,
        out.exit,
    );
    (out, fake)
}

fn text_then_error(text: &str, body: String) -> Reply {
    Reply::TextThenError {
        text: text.into(),
        error_body: body,
    }
}

// ---- Claude Code ----

/// The synthetic assistant message Claude Code prints for an API error.
fn claude_api_error(o: &Outcome) -> Value {
    let synthetic: Vec<Value> = o
        .events_of("assistant")
        .into_iter()
        .filter(|e| e["message"]["model"] == "<synthetic>" && e["is_api_error_message"] == true)
        .collect();
    assert_eq!(
        synthetic.len(),
        1,
        "one synthetic API-error message\n{}",
        o.show()
    );
    let result = o.events_of("result");
    assert_eq!(result.len(), 1, "{}", o.show());
    assert_eq!(result[0]["is_error"], true, "{}", o.show());
    assert_eq!(result[0]["terminal_reason"], "api_error", "{}", o.show());
    // The result line repeats the status and type.
    assert_eq!(
        result[0]["api_error_status"],
        synthetic[0]["api_error_status"]
    );
    assert_eq!(
        result[0].get("api_error_type"),
        synthetic[0].get("api_error_type")
    );
    assert_eq!(o.exit, Some(1), "{}", o.show());
    synthetic[0].clone()
}

fn assistant_text(e: &Value) -> String {
    e["message"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect()
}

#[tokio::test]
async fn agents_claude_success() {
    let (o, fake) = scenario(
        "claude",
        "success",
        claude_stream_json,
        vec![Reply::text("PONG-42")],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let ev = o.events();
    assert_eq!(ev[0]["type"], "system");
    assert_eq!(ev[0]["subtype"], "init");
    let real: Vec<_> = o
        .events_of("assistant")
        .into_iter()
        .filter(|e| e["message"]["model"] != "<synthetic>")
        .collect();
    assert_eq!(real.len(), 1, "{}", o.show());
    assert_eq!(assistant_text(&real[0]), "PONG-42");
    let result = &o.events_of("result")[0];
    assert_eq!(result["subtype"], "success");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["result"], "PONG-42");
    assert!(o.stderr.is_empty(), "{}", o.show());
    // Exactly one request, the model call (no HEAD /api/hello, no
    // count_tokens with the nonessential traffic off).
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(reqs[0].path, "/v1/messages?beta=true");
    assert_eq!(reqs[0].header("x-api-key"), Some("sk-ant-fake-key"));
    assert_eq!(reqs[0].json().unwrap()["stream"], true);
}

#[tokio::test]
async fn agents_claude_overloaded() {
    let (o, fake) = scenario(
        "claude",
        "overloaded",
        claude_stream_json,
        vec![Reply::anthropic_overloaded()],
    )
    .await;
    let e = claude_api_error(&o);
    assert_eq!(e["api_error_status"], 529);
    assert_eq!(e["api_error_type"], "overloaded_error");
    assert_eq!(e["error"], "server_error");
    assert!(
        assistant_text(&e).starts_with("API Error: 529 Overloaded."),
        "{}",
        o.show()
    );
    assert_eq!(fake.model_calls(), 1);
    assert!(o
        .events_of("system")
        .iter()
        .all(|e| e["subtype"] != "api_retry"));
}

#[tokio::test]
async fn agents_claude_overloaded_twice_own_retries() {
    // With its own retries on (2), Claude Code prints an api_retry event per
    // retry and succeeds: what a runner sees when it does not turn them off.
    let (o, fake) = scenario_with(
        "claude",
        "overloaded_twice_own_retries",
        |d, b| claude_stream_json(d, b).with_env("CLAUDE_CODE_MAX_RETRIES", "2"),
        vec![
            Reply::anthropic_overloaded(),
            Reply::anthropic_overloaded(),
            Reply::text("PONG-42"),
        ],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let retries: Vec<_> = o
        .events_of("system")
        .into_iter()
        .filter(|e| e["subtype"] == "api_retry")
        .collect();
    assert_eq!(retries.len(), 2, "{}", o.show());
    for (i, r) in retries.iter().enumerate() {
        assert_eq!(r["attempt"], i as u64 + 1);
        assert_eq!(r["max_retries"], 2);
        assert_eq!(r["error_status"], 529);
        assert_eq!(r["error"], "overloaded");
        assert!(r["retry_delay_ms"].as_u64().unwrap() > 0);
    }
    assert_eq!(o.events_of("result")[0]["result"], "PONG-42");
    assert_eq!(fake.model_calls(), 3);
}

#[tokio::test]
async fn agents_claude_rate_limit_with_reset() {
    let (o, fake) = scenario(
        "claude",
        "rate_limit",
        claude_stream_json,
        vec![Reply::anthropic_rate_limit(3600)],
    )
    .await;
    let e = claude_api_error(&o);
    assert_eq!(e["api_error_status"], 429);
    assert_eq!(e["api_error_type"], "rate_limit_error");
    assert_eq!(e["error"], "rate_limit");
    // The reset time is not in the output: only the message.
    assert!(
        assistant_text(&e).contains("Request rejected (429)"),
        "{}",
        o.show()
    );
    assert_eq!(fake.model_calls(), 1);
}

#[tokio::test]
async fn agents_claude_subscription_usage_limit() {
    // A subscriber past the 5-hour window: Claude Code reads the unified
    // headers into a `rate_limit_event` (the reset as Unix seconds and the
    // window), then its synthetic error and result name the usage limit.
    let reset = chrono::Utc::now().timestamp() + 3600;
    let (o, fake) = scenario(
        "claude",
        "subscription_usage_limit",
        claude_stream_json_subscription,
        vec![Reply::anthropic_usage_limit(reset)],
    )
    .await;
    let events = o.events_of("rate_limit_event");
    assert_eq!(events.len(), 1, "{}", o.show());
    let info = &events[0]["rate_limit_info"];
    assert_eq!(info["status"], "rejected", "{}", o.show());
    assert_eq!(info["resetsAt"], reset, "{}", o.show());
    assert_eq!(info["rateLimitType"], "five_hour", "{}", o.show());
    assert_eq!(info["overageStatus"], "rejected", "{}", o.show());
    let e = claude_api_error(&o);
    assert_eq!(e["api_error_status"], 429);
    assert_eq!(e["api_error_type"], "rate_limit_error");
    assert_eq!(e["api_error"], "usage_limit_reached");
    assert_eq!(
        e["api_error_params"]["rate_limit_info"]["resetsAt"],
        reset,
        "{}",
        o.show()
    );
    assert!(
        assistant_text(&e).starts_with("You've hit your 5-hour limit"),
        "{}",
        o.show()
    );
    assert_eq!(o.events_of("result")[0]["api_error"], "usage_limit_reached");
    assert_eq!(fake.model_calls(), 1, "no retry of its own");
    let reqs = fake.requests();
    assert_eq!(
        reqs[0].header("authorization"),
        Some("Bearer sk-ant-oat01-fake-token")
    );
}

#[tokio::test]
async fn agents_claude_invalid_key() {
    let (o, _) = scenario(
        "claude",
        "invalid_key",
        claude_stream_json,
        vec![Reply::anthropic_auth()],
    )
    .await;
    let e = claude_api_error(&o);
    assert_eq!(e["api_error_status"], 401);
    assert_eq!(e["api_error_type"], "authentication_error");
    assert_eq!(e["error"], "authentication_failed");
    assert_eq!(assistant_text(&e), "Invalid API key · Fix external API key");
}

#[tokio::test]
async fn agents_claude_text_then_error() {
    // A stream that fails after some text is retried ONCE as a non-streaming
    // request, even with CLAUDE_CODE_MAX_RETRIES=0; here that fails too. The
    // streamed text never reaches stdout without --include-partial-messages.
    let (o, fake) = scenario(
        "claude",
        "text_then_error",
        claude_stream_json,
        vec![
            text_then_error("PARTIAL-TEXT ", Reply::anthropic_stream_error_body()),
            Reply::anthropic_overloaded(),
        ],
    )
    .await;
    let e = claude_api_error(&o);
    assert_eq!(e["api_error_status"], 529);
    assert!(!o.stdout.contains("PARTIAL-TEXT"), "{}", o.show());
    let calls: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.model_call)
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].json().unwrap()["stream"], true);
    assert!(
        calls[1]
            .json()
            .unwrap()
            .get("stream")
            .is_none_or(|s| s == false),
        "the retry is non-streaming"
    );
}

#[tokio::test]
async fn agents_claude_text_then_error_partial() {
    let (o, fake) = scenario(
        "claude",
        "text_then_error_partial",
        claude_stream_json_partial,
        vec![
            text_then_error("PARTIAL-TEXT ", Reply::anthropic_stream_error_body()),
            Reply::anthropic_overloaded(),
        ],
    )
    .await;
    claude_api_error(&o);
    let deltas: Vec<_> = o
        .events_of("stream_event")
        .into_iter()
        .filter(|e| e["event"]["type"] == "content_block_delta")
        .map(|e| {
            e["event"]["delta"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(deltas, vec!["PARTIAL-TEXT "], "{}", o.show());
    // Claude Code closes the abandoned message itself.
    let stop = o
        .events_of("stream_event")
        .into_iter()
        .find(|e| e["event"]["type"] == "message_stop")
        .expect("message_stop");
    assert!(stop.get("abandoned_blocks").is_some(), "{stop}");
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test]
async fn agents_claude_text_then_cut_recovers() {
    // A dropped connection after some text; the non-streaming retry succeeds:
    // exit 0 with the retry's text only.
    let (o, fake) = scenario(
        "claude",
        "text_then_cut_recovers",
        claude_stream_json,
        vec![
            text_then_error("PARTIAL-TEXT ", String::new()),
            Reply::text("PONG-42"),
        ],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    assert_eq!(o.events_of("result")[0]["result"], "PONG-42");
    assert!(!o.stdout.contains("PARTIAL-TEXT"));
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test]
async fn agents_claude_unknown_500() {
    let (o, _) = scenario(
        "claude",
        "unknown_500",
        claude_stream_json,
        vec![Reply::unknown_500()],
    )
    .await;
    let e = claude_api_error(&o);
    assert_eq!(e["api_error_status"], 500);
    assert!(e.get("api_error_type").is_none(), "{e}");
    assert_eq!(e["error"], "server_error");
    assert!(
        assistant_text(&e).contains("zork-17 flux capacitor"),
        "the body is quoted: {e}"
    );
}

#[tokio::test]
async fn agents_claude_teapot() {
    let (o, _) = scenario(
        "claude",
        "teapot_418",
        claude_stream_json,
        vec![Reply::teapot()],
    )
    .await;
    let e = claude_api_error(&o);
    assert_eq!(e["api_error_status"], 418);
    assert_eq!(e["error"], "unknown");
    assert_eq!(assistant_text(&e), "API Error: 418 I'm a teapot");
}

// ---- Codex ----

fn codex_failure(o: &Outcome) -> String {
    assert_eq!(o.exit, Some(1), "{}", o.show());
    let failed = o.events_of("turn.failed");
    assert_eq!(failed.len(), 1, "{}", o.show());
    let errors = o.events_of("error");
    let msg = failed[0]["error"]["message"].as_str().unwrap().to_string();
    // The last `error` event repeats the turn.failed message.
    assert_eq!(
        errors.last().unwrap()["message"],
        msg.as_str(),
        "{}",
        o.show()
    );
    assert!(
        o.events_of("item.completed")
            .iter()
            .all(|e| e["item"]["type"] != "agent_message"),
        "{}",
        o.show()
    );
    msg
}

#[tokio::test]
async fn agents_codex_success() {
    let (o, fake) = scenario("codex", "success", codex_json, vec![Reply::text("PONG-42")]).await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let types: Vec<String> = o
        .events()
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        types,
        [
            "thread.started",
            "turn.started",
            "item.completed",
            "turn.completed"
        ],
        "{}",
        o.show()
    );
    let item = &o.events_of("item.completed")[0]["item"];
    assert_eq!(item["type"], "agent_message");
    assert_eq!(item["text"], "PONG-42");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(reqs[0].path, "/v1/responses");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-fake-key"));
}

#[tokio::test]
async fn agents_codex_overloaded() {
    let (o, fake) = scenario(
        "codex",
        "overloaded",
        codex_json,
        vec![Reply::openai_overloaded()],
    )
    .await;
    let msg = codex_failure(&o);
    assert!(msg.starts_with("unexpected status 503 Service Unavailable: The server is overloaded or not ready yet., url: http://127.0.0.1:"), "{msg}");
    assert_eq!(fake.model_calls(), 1);
}

#[tokio::test]
async fn agents_codex_overloaded_twice_own_retries() {
    // stream_max_retries = 2: each retry is an `error` event
    // "Reconnecting... n/2 (…)", then the answer.
    let (o, fake) = scenario_with(
        "codex",
        "overloaded_twice_own_retries",
        |d, b| codex_json_with_retries(d, b, 0, 2),
        vec![
            Reply::openai_overloaded(),
            Reply::openai_overloaded(),
            Reply::text("PONG-42"),
        ],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let banners: Vec<String> = o
        .events_of("error")
        .iter()
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(banners.len(), 2, "{}", o.show());
    assert!(
        banners[0].starts_with("Reconnecting... 1/2 (unexpected status 503"),
        "{banners:?}"
    );
    assert!(
        banners[1].starts_with("Reconnecting... 2/2 (unexpected status 503"),
        "{banners:?}"
    );
    assert_eq!(o.events_of("item.completed")[0]["item"]["text"], "PONG-42");
    assert_eq!(fake.model_calls(), 3);
}

#[tokio::test]
async fn agents_codex_request_retries_are_silent() {
    // request_max_retries = 2: the retries print nothing at all.
    let (o, fake) = scenario_with(
        "codex",
        "overloaded_twice_request_retries",
        |d, b| codex_json_with_retries(d, b, 2, 0),
        vec![
            Reply::openai_overloaded(),
            Reply::openai_overloaded(),
            Reply::text("PONG-42"),
        ],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    assert!(o.events_of("error").is_empty(), "{}", o.show());
    assert_eq!(fake.model_calls(), 3);
}

#[tokio::test]
async fn agents_codex_rate_limit_with_reset() {
    let (o, _) = scenario(
        "codex",
        "rate_limit",
        codex_json,
        vec![Reply::openai_rate_limit(3600)],
    )
    .await;
    let msg = codex_failure(&o);
    // Neither the reset nor the body is in the output.
    assert_eq!(
        msg,
        "exceeded retry limit, last status: 429 Too Many Requests"
    );
}

#[tokio::test]
async fn agents_codex_quota() {
    let (o, _) = scenario("codex", "quota", codex_json, vec![Reply::openai_quota()]).await;
    assert_eq!(
        codex_failure(&o),
        "Quota exceeded. Check your plan and billing details."
    );
}

/// Runs Codex against `reply` and returns what it printed and its session
/// file (`$CODEX_HOME/sessions/…/rollout-…-<thread id>.jsonl`) as events.
async fn codex_session(name: &str, reply: Reply) -> (Outcome, Vec<Value>) {
    let fake = FakeProvider::start().await;
    fake.push(reply);
    let dir = tempfile::tempdir().unwrap();
    let s = codex_json(dir.path(), &fake.base_url());
    let o = run(&s, "Answer with the word PONG.").await;
    write_sample(
        "codex",
        name,
        dir.path(),
        &fake.base_url(),
        &o.stdout,
        &o.stderr,
        o.exit,
    );
    assert_eq!(fake.model_calls(), 1, "no retry of its own");
    let thread = o.events_of("thread.started")[0]["thread_id"]
        .as_str()
        .expect("a thread id")
        .to_string();
    let mut found = Vec::new();
    let mut dirs = vec![dir.path().join("codex-home/sessions")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("sessions").flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.to_string_lossy().ends_with(&format!("-{thread}.jsonl")) {
                found.push(p);
            }
        }
    }
    assert_eq!(found.len(), 1, "one session file: {found:?}\n{}", o.show());
    let events: Vec<Value> = std::fs::read_to_string(&found[0])
        .expect("session file")
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    if std::env::var_os("AGENTS_WRITE_SAMPLES").is_some() {
        // The failure's events only: the rest is the prompt and Codex's
        // instructions.
        let kept: Vec<String> = events
            .iter()
            .filter(|e| {
                e["type"] == "event_msg"
                    && ["token_count", "task_complete"]
                        .contains(&e["payload"]["type"].as_str().unwrap_or(""))
            })
            .map(Value::to_string)
            .collect();
        let path = agents_dir().join(format!("samples/codex/{name}.session"));
        std::fs::write(path, kept.join("\n") + "\n").unwrap();
    }
    (o, events)
}

/// The session file's `event_msg` payloads of one type.
fn payloads(events: &[Value], ty: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "event_msg" && e["payload"]["type"] == ty)
        .map(|e| e["payload"].clone())
        .collect()
}

#[tokio::test]
async fn agents_codex_usage_limit() {
    // A plan past its usage limit (429 usage_limit_reached + the window
    // headers). stdout has only prose, its reset a local clock time with no
    // zone (a date only when it is another day); the session file has the
    // error's codex_error_info and the windows with their resets as data.
    let reset = chrono::Utc::now().timestamp() + 3600;
    let (o, events) = codex_session("usage_limit", Reply::openai_usage_limit(reset)).await;
    let msg = codex_failure(&o);
    assert!(
        msg.starts_with("You’ve hit your usage limit. Upgrade to Pro"),
        "{msg}"
    );
    let when = msg
        .split(" or try again at ")
        .nth(1)
        .expect("a reset in prose");
    assert!(when.ends_with(" AM.") || when.ends_with(" PM."), "{when}");
    assert!(
        !when.contains("UTC") && !when.contains('+'),
        "no zone: {when}"
    );
    assert!(
        !o.stdout.contains(&reset.to_string()),
        "no number in the output"
    );
    let windows = payloads(&events, "token_count")
        .last()
        .expect("a token_count")["rate_limits"]
        .clone();
    assert_eq!(windows["primary"]["used_percent"], 100.0, "{windows}");
    assert_eq!(windows["primary"]["window_minutes"], 300);
    assert_eq!(
        windows["primary"]["resets_at"], reset,
        "the header's reset-at, as sent"
    );
    assert_eq!(windows["secondary"]["used_percent"], 40.0);
    assert_eq!(windows["secondary"]["resets_at"], reset + 86_400);
    let done = payloads(&events, "task_complete");
    assert_eq!(
        done.last().expect("task_complete")["error"]["codex_error_info"],
        "usage_limit_exceeded"
    );
    assert_eq!(
        done.last().expect("task_complete")["error"]["message"],
        msg.as_str()
    );
}

#[tokio::test]
async fn agents_codex_usage_limit_without_window_headers() {
    // The body alone: the prose still names a clock time (from the body's
    // resets_at), but the session file has no window to read it from.
    let reset = chrono::Utc::now().timestamp() + 3600;
    let (o, events) = codex_session(
        "usage_limit_body_only",
        Reply::openai_usage_limit_body_only(reset),
    )
    .await;
    let msg = codex_failure(&o);
    assert!(msg.contains(" or try again at "), "{msg}");
    assert!(
        payloads(&events, "token_count")
            .iter()
            .all(|t| t["rate_limits"]["primary"]["resets_at"].is_null()),
        "{events:?}"
    );
    assert_eq!(
        payloads(&events, "task_complete")
            .last()
            .expect("task_complete")["error"]["codex_error_info"],
        "usage_limit_exceeded"
    );
}

#[tokio::test]
async fn agents_codex_invalid_key() {
    let (o, _) = scenario(
        "codex",
        "invalid_key",
        codex_json,
        vec![Reply::openai_auth()],
    )
    .await;
    let msg = codex_failure(&o);
    assert!(
        msg.starts_with("unexpected status 401 Unauthorized: Incorrect API key provided"),
        "{msg}"
    );
}

#[tokio::test]
async fn agents_codex_text_then_error() {
    let (o, fake) = scenario(
        "codex",
        "text_then_error",
        codex_json,
        vec![text_then_error(
            "PARTIAL-TEXT ",
            Reply::openai_stream_error_body(),
        )],
    )
    .await;
    let msg = codex_failure(&o);
    assert_eq!(
        msg,
        "stream disconnected before completion: The server had an error processing your request."
    );
    assert!(
        !o.stdout.contains("PARTIAL-TEXT"),
        "streamed text is not printed: {}",
        o.show()
    );
    assert_eq!(fake.model_calls(), 1);
}

#[tokio::test]
async fn agents_codex_text_then_cut() {
    let (o, _) = scenario(
        "codex",
        "text_then_cut",
        codex_json,
        vec![text_then_error("PARTIAL-TEXT ", String::new())],
    )
    .await;
    let msg = codex_failure(&o);
    assert!(
        msg.starts_with("stream disconnected before completion"),
        "{msg}"
    );
}

#[tokio::test]
async fn agents_codex_unknown_500() {
    let (o, _) = scenario(
        "codex",
        "unknown_500",
        codex_json,
        vec![Reply::unknown_500()],
    )
    .await;
    // Codex words every 500 as high demand; the body and status are gone.
    assert_eq!(
        codex_failure(&o),
        "We\u{2019}re currently experiencing high demand, which may cause temporary errors."
    );
}

#[tokio::test]
async fn agents_codex_teapot() {
    let (o, _) = scenario("codex", "teapot_418", codex_json, vec![Reply::teapot()]).await;
    let msg = codex_failure(&o);
    assert!(
        msg.starts_with(
            "unexpected status 418 I'm a teapot: {\"message\":\"I'm a teapot\"}, url: "
        ),
        "{msg}"
    );
}

// ---- Gemini CLI (headless stream-json) ----

fn gemini_result(o: &Outcome) -> Value {
    let r = o.events_of("result");
    assert_eq!(r.len(), 1, "{}", o.show());
    r[0].clone()
}

/// A failed call: exit = HTTP status mod 256, a `result` with status
/// "error" and error.type "unknown".
fn gemini_failure(o: &Outcome, status: u16) -> String {
    assert_eq!(
        o.exit,
        Some((status % 256) as i32),
        "Gemini CLI exits with the HTTP status mod 256\n{}",
        o.show()
    );
    let r = gemini_result(o);
    assert_eq!(r["status"], "error", "{}", o.show());
    assert_eq!(r["error"]["type"], "unknown", "{}", o.show());
    assert!(
        o.events_of("message")
            .iter()
            .all(|m| m["role"] != "assistant"),
        "{}",
        o.show()
    );
    r["error"]["message"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn agents_gemini_success() {
    let (o, fake) = scenario(
        "gemini",
        "success",
        gemini_stream_json,
        vec![Reply::text("PONG-42")],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let ev = o.events();
    assert_eq!(ev[0]["type"], "init");
    assert_eq!(ev[0]["model"], "gemini-2.5-flash");
    let answers: Vec<_> = o
        .events_of("message")
        .into_iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(answers.len(), 1, "{}", o.show());
    assert_eq!(answers[0]["content"], "PONG-42");
    assert_eq!(answers[0]["delta"], true);
    assert_eq!(gemini_result(&o)["status"], "success");
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1, "{reqs:?}");
    assert_eq!(
        reqs[0].path,
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
    );
    assert_eq!(reqs[0].header("x-goog-api-key"), Some(base_key()));
}

#[tokio::test]
async fn agents_gemini_overloaded() {
    let (o, fake) = scenario(
        "gemini",
        "overloaded",
        gemini_stream_json,
        vec![Reply::gemini_overloaded()],
    )
    .await;
    let msg = gemini_failure(&o, 503);
    assert_eq!(
        msg,
        "[API Error: The model is overloaded. Please try again later.]"
    );
    assert!(o.stderr.contains("Attempt 1 failed: The model is overloaded. Please try again later.. Max attempts reached"), "{}", o.show());
    assert!(o.stderr.contains("RetryableQuotaError"), "{}", o.show());
    assert_eq!(fake.model_calls(), 1);
}

#[tokio::test]
async fn agents_gemini_overloaded_once_own_retries() {
    // maxAttempts 2: one retry after Gemini CLI's own backoff (≈ 4–6 s),
    // reported on stderr only.
    let (o, fake) = scenario_with(
        "gemini",
        "overloaded_once_own_retries",
        |d, b| gemini_stream_json_attempts(d, b, 2),
        vec![Reply::gemini_overloaded(), Reply::text("PONG-42")],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    assert!(
        o.stderr
            .contains("Attempt 1 failed with status 503. Retrying with backoff..."),
        "{}",
        o.show()
    );
    assert!(!o.stdout.contains("Retrying"), "{}", o.show());
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test]
async fn agents_gemini_daily_quota() {
    let (o, _) = scenario(
        "gemini",
        "quota_daily",
        gemini_stream_json,
        vec![Reply::gemini_quota(3600, true)],
    )
    .await;
    let msg = gemini_failure(&o, 429);
    assert!(
        msg.starts_with("[API Error: You have exhausted your daily quota on this model.]"),
        "{msg}"
    );
    assert!(o.stderr.contains("TerminalQuotaError"), "{}", o.show());
}

#[tokio::test]
async fn agents_gemini_rate_limit_with_retry_info() {
    let (o, _) = scenario(
        "gemini",
        "rate_limit_retry_info",
        gemini_stream_json,
        vec![Reply::gemini_quota(30, false)],
    )
    .await;
    let msg = gemini_failure(&o, 429);
    // The RetryInfo delay is in the message.
    assert!(msg.contains("Suggested retry after 30s."), "{msg}");
    assert!(o.stderr.contains("RetryableQuotaError"), "{}", o.show());
}

#[tokio::test]
async fn agents_gemini_invalid_key() {
    let (o, _) = scenario(
        "gemini",
        "invalid_key",
        gemini_stream_json,
        vec![Reply::gemini_auth()],
    )
    .await;
    let msg = gemini_failure(&o, 400);
    assert!(
        msg.starts_with("[API Error: {\"error\":{\"code\":400,\"message\":\"API key not valid."),
        "the body is quoted whole: {msg}"
    );
    assert!(msg.contains("API_KEY_INVALID"), "{msg}");
}

#[tokio::test]
async fn agents_gemini_unauthenticated_401() {
    let (o, _) = scenario(
        "gemini",
        "unauthenticated_401",
        gemini_stream_json,
        vec![Reply::gemini_unauthenticated()],
    )
    .await;
    let msg = gemini_failure(&o, 401);
    assert!(msg.contains("UNAUTHENTICATED"), "{msg}");
}

#[tokio::test]
async fn agents_gemini_text_then_error() {
    // The in-stream error chunk is ignored; the stream "ended without a
    // finish reason": an `error` event, result status "error", and EXIT 0.
    let (o, fake) = scenario(
        "gemini",
        "text_then_error",
        gemini_stream_json,
        vec![text_then_error(
            "PARTIAL-TEXT ",
            Reply::gemini_stream_error_body(),
        )],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let answers: Vec<_> = o
        .events_of("message")
        .into_iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["content"], "PARTIAL-TEXT ");
    let errors = o.events_of("error");
    assert_eq!(errors.len(), 1, "{}", o.show());
    assert_eq!(errors[0]["severity"], "error");
    assert_eq!(
        errors[0]["message"],
        "Model stream ended without a finish reason."
    );
    let r = gemini_result(&o);
    assert_eq!(r["status"], "error");
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(fake.model_calls(), 1);
}

#[tokio::test]
async fn agents_gemini_unknown_500() {
    let (o, _) = scenario(
        "gemini",
        "unknown_500",
        gemini_stream_json,
        vec![Reply::unknown_500()],
    )
    .await;
    assert_eq!(
        gemini_failure(&o, 500),
        "[API Error: {\"weird\":\"zork-17 flux capacitor\"}]"
    );
}

#[tokio::test]
async fn agents_gemini_teapot() {
    let (o, _) = scenario(
        "gemini",
        "teapot_418",
        gemini_stream_json,
        vec![Reply::teapot()],
    )
    .await;
    assert_eq!(
        gemini_failure(&o, 418),
        "[API Error: {\"message\":\"I'm a teapot\"}]"
    );
}

// ---- Gemini CLI as an ACP agent ----

async fn acp_scenario(
    name: &str,
    script: Vec<Reply>,
    permission: Option<&str>,
) -> (AcpRun, FakeProvider) {
    let fake = FakeProvider::start().await;
    for r in script {
        fake.push(r);
    }
    let dir = tempfile::tempdir().unwrap();
    let s = gemini_acp(dir.path(), &fake.base_url());
    let run = run_acp(&s, "Answer with the word PONG.", permission).await;
    eprintln!(
        "gemini-acp/{name}: exit {:?} in {:?}, {} model call(s)",
        run.exit,
        run.elapsed,
        fake.model_calls()
    );
    write_sample(
        "gemini-acp",
        name,
        dir.path(),
        &fake.base_url(),
        &run.transcript_text(),
        &run.stderr,
        run.exit,
    );
    (run, fake)
}

fn acp_handshake(run: &AcpRun) {
    let init = run
        .transcript
        .iter()
        .find(|(d, m)| *d == '<' && m["id"] == 1)
        .expect("initialize answered");
    assert_eq!(init.1["result"]["protocolVersion"], 1, "{}", run.show());
    assert_eq!(init.1["result"]["agentInfo"]["name"], "gemini-cli");
    let new = run
        .transcript
        .iter()
        .find(|(d, m)| *d == '<' && m["id"] == 2)
        .expect("session/new answered");
    assert!(new.1["result"]["sessionId"].is_string(), "{}", run.show());
}

fn acp_error(run: &AcpRun) -> (i64, String) {
    acp_handshake(run);
    let e = &run.prompt_response["error"];
    assert!(
        e.is_object(),
        "session/prompt answers with a JSON-RPC error\n{}",
        run.show()
    );
    assert!(
        run.updates_of("agent_message_chunk").is_empty(),
        "{}",
        run.show()
    );
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

#[tokio::test]
async fn agents_gemini_acp_success() {
    let (run, _) = acp_scenario("success", vec![Reply::text("PONG-42")], None).await;
    acp_handshake(&run);
    assert_eq!(
        run.prompt_response["result"]["stopReason"],
        "end_turn",
        "{}",
        run.show()
    );
    let chunks = run.updates_of("agent_message_chunk");
    assert_eq!(chunks.len(), 1, "{}", run.show());
    assert_eq!(
        chunks[0]["content"],
        json!({"type":"text","text":"PONG-42"})
    );
    assert_eq!(run.exit, Some(0), "exits 0 at stdin EOF\n{}", run.show());
}

#[tokio::test]
async fn agents_gemini_acp_overloaded() {
    let (run, _) = acp_scenario("overloaded", vec![Reply::gemini_overloaded()], None).await;
    // The JSON-RPC error code IS the HTTP status.
    assert_eq!(
        acp_error(&run),
        (
            503,
            "The model is overloaded. Please try again later.".to_string()
        )
    );
}

#[tokio::test]
async fn agents_gemini_acp_daily_quota() {
    let (run, _) = acp_scenario("quota_daily", vec![Reply::gemini_quota(3600, true)], None).await;
    assert_eq!(
        acp_error(&run),
        (
            429,
            "You have exhausted your daily quota on this model.".to_string()
        )
    );
}

#[tokio::test]
async fn agents_gemini_acp_invalid_key() {
    let (run, _) = acp_scenario("invalid_key", vec![Reply::gemini_auth()], None).await;
    let (code, msg) = acp_error(&run);
    assert_eq!(code, 400);
    assert!(
        msg.contains("API_KEY_INVALID"),
        "the body is the message: {msg}"
    );
}

#[tokio::test]
async fn agents_gemini_acp_text_then_error() {
    // No error at all: the partial text, then stopReason end_turn.
    let (run, _) = acp_scenario(
        "text_then_error",
        vec![text_then_error(
            "PARTIAL-TEXT ",
            Reply::gemini_stream_error_body(),
        )],
        None,
    )
    .await;
    acp_handshake(&run);
    assert_eq!(
        run.prompt_response["result"]["stopReason"],
        "end_turn",
        "{}",
        run.show()
    );
    let chunks = run.updates_of("agent_message_chunk");
    assert_eq!(chunks.len(), 1, "{}", run.show());
    assert_eq!(chunks[0]["content"]["text"], "PARTIAL-TEXT ");
}

#[tokio::test]
async fn agents_gemini_acp_unknown_500() {
    let (run, _) = acp_scenario("unknown_500", vec![Reply::unknown_500()], None).await;
    assert_eq!(
        acp_error(&run),
        (500, "{\"weird\":\"zork-17 flux capacitor\"}".to_string())
    );
}

#[tokio::test]
async fn agents_gemini_acp_teapot() {
    let (run, _) = acp_scenario("teapot_418", vec![Reply::teapot()], None).await;
    assert_eq!(
        acp_error(&run),
        (418, "{\"message\":\"I'm a teapot\"}".to_string())
    );
}

#[tokio::test]
async fn agents_gemini_acp_tool_permission_denied() {
    // A shell command that writes asks permission (request id 0, options
    // proceed_always / proceed_once / cancel); answered "cancelled", the tool
    // does not run and no tool_call update is sent, and the agent goes on to
    // the next model call.
    let (run, fake) = acp_scenario(
        "tool_permission_cancelled",
        vec![
            Reply::ToolCall {
                name: "run_shell_command".into(),
                args: json!({"command":"touch made-by-agent.txt","description":"make a file"}),
            },
            Reply::text("PONG-42"),
        ],
        None,
    )
    .await;
    acp_handshake(&run);
    let perms = run.requests_from_agent("session/request_permission");
    assert_eq!(perms.len(), 1, "{}", run.show());
    let p = &perms[0]["params"];
    let kinds: Vec<&str> = p["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_always", "allow_once", "reject_once"]);
    assert_eq!(p["toolCall"]["status"], "pending");
    assert_eq!(p["toolCall"]["kind"], "execute");
    assert!(run.updates_of("tool_call").is_empty(), "{}", run.show());
    assert_eq!(run.prompt_response["result"]["stopReason"], "end_turn");
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test]
async fn agents_gemini_acp_tool_allowed() {
    let (run, fake) = acp_scenario(
        "tool_allowed",
        vec![
            Reply::ToolCall {
                name: "run_shell_command".into(),
                args: json!({"command":"echo made-by-agent","description":"print"}),
            },
            Reply::text("PONG-42"),
        ],
        Some("proceed_once"),
    )
    .await;
    acp_handshake(&run);
    let calls = run.updates_of("tool_call");
    assert_eq!(calls.len(), 1, "{}", run.show());
    assert_eq!(calls[0]["kind"], "execute");
    let updates = run.updates_of("tool_call_update");
    assert!(
        updates.iter().any(|u| u["status"] == "completed"),
        "{}",
        run.show()
    );
    assert_eq!(
        run.updates_of("agent_message_chunk")[0]["content"]["text"],
        "PONG-42"
    );
    assert_eq!(fake.model_calls(), 2);
}

// ---- tool calls ----

#[tokio::test]
async fn agents_claude_tool_call_denied() {
    // In -p mode a Bash command that writes is denied without asking: a
    // system/permission_denied line, an is_error tool_result, and the model
    // is called again; the run succeeds.
    let (o, fake) = scenario(
        "claude",
        "tool_call_denied",
        claude_stream_json,
        vec![
            Reply::ToolCall {
                name: "Bash".into(),
                args: json!({"command":"touch made-by-agent.txt","description":"make a file"}),
            },
            Reply::text("PONG-42"),
        ],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let types: Vec<String> = o
        .events()
        .iter()
        .map(|e| {
            format!(
                "{}/{}",
                e["type"].as_str().unwrap_or(""),
                e["subtype"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        types,
        [
            "system/init",
            "assistant/",
            "system/permission_denied",
            "user/",
            "assistant/",
            "result/success"
        ],
        "{}",
        o.show()
    );
    let ev = o.events();
    assert_eq!(ev[1]["message"]["content"][0]["type"], "tool_use");
    assert_eq!(ev[1]["message"]["content"][0]["name"], "Bash");
    assert_eq!(ev[2]["tool_name"], "Bash");
    assert_eq!(ev[3]["message"]["content"][0]["type"], "tool_result");
    assert_eq!(ev[3]["message"]["content"][0]["is_error"], true);
    assert_eq!(assistant_text(&ev[4]), "PONG-42");
    assert_eq!(ev[5]["permission_denials"][0]["tool_name"], "Bash");
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test]
async fn agents_codex_tool_call() {
    // exec_command runs under the read-only sandbox: item.started and
    // item.completed of type command_execution, then the answer.
    let (o, fake) = scenario(
        "codex",
        "tool_call",
        codex_json,
        vec![
            Reply::ToolCall {
                name: "exec_command".into(),
                args: json!({"cmd":"echo made-by-agent"}),
            },
            Reply::text("PONG-42"),
        ],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let started = o.events_of("item.started");
    assert_eq!(started.len(), 1, "{}", o.show());
    assert_eq!(started[0]["item"]["type"], "command_execution");
    assert_eq!(
        started[0]["item"]["command"],
        "/bin/bash -lc 'echo made-by-agent'"
    );
    assert_eq!(started[0]["item"]["status"], "in_progress");
    let done = o.events_of("item.completed");
    assert_eq!(done[0]["item"]["type"], "command_execution");
    assert_eq!(done[0]["item"]["exit_code"], 0);
    assert_eq!(done[0]["item"]["aggregated_output"], "made-by-agent\n");
    assert_eq!(done[1]["item"]["type"], "agent_message");
    assert_eq!(fake.model_calls(), 2);
}

// ---- Codex's app server ----

/// Runs `codex app-server` for one turn against `replies`; returns the
/// session and what the runner's reader made of the server's lines.
async fn codex_app_scenario(
    name: &str,
    setup: fn(&Path, &str) -> AgentSetup,
    replies: Vec<Reply>,
) -> (AcpRun, FakeProvider, Vec<runner::format::Seen>) {
    use runner::format::Reader as _;
    let fake = FakeProvider::start().await;
    for r in replies {
        fake.push(r);
    }
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path(), &fake.base_url());
    let run = run_codex_app(&s, "Answer with the word PONG.").await;
    if std::env::var_os("AGENTS_WRITE_SAMPLES").is_some() {
        let d = agents_dir().join("samples/codex-app-server");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(
            d.join(format!("{name}.jsonl")),
            sanitise(&run.transcript_text(), dir.path(), &fake.base_url()),
        )
        .unwrap();
    }
    let mut reader = runner::format::codex_app::CodexApp::default();
    let seen = run
        .transcript
        .iter()
        .filter(|(d, _)| *d == '<')
        .flat_map(|(_, m)| reader.stdout_line(&m.to_string()).seen)
        .collect();
    (run, fake, seen)
}

/// The failed turn's report, as the runner reads it.
fn app_failure(seen: &[runner::format::Seen]) -> runner::format::ErrorReport {
    use runner::format::{Finish, Seen};
    match seen {
        [.., Seen::Error(e), Seen::Finished(Finish::Failure)] => e.clone(),
        other => panic!("not a failed turn: {other:?}"),
    }
}

#[tokio::test]
async fn agents_codex_app_server_usage_limit() {
    // The refusal `codex exec --json` prints as prose only: the app server
    // sends the windows (account/rateLimits/updated, from the
    // x-codex-primary-* headers) and the error's codexErrorInfo as data,
    // and the runner's report carries the exhausted window's reset.
    let reset = chrono::Utc::now().timestamp() + 3600;
    let (run, fake, seen) = codex_app_scenario(
        "usage_limit",
        codex_app_server,
        vec![Reply::openai_usage_limit(reset)],
    )
    .await;
    assert_eq!(fake.model_calls(), 1, "no retry of its own");
    let windows = run
        .notifications("account/rateLimits/updated")
        .last()
        .expect("a rate-limit update")["rateLimits"]
        .clone();
    assert_eq!(windows["primary"]["usedPercent"], 100, "{}", run.show());
    assert_eq!(windows["primary"]["windowDurationMins"], 300);
    assert_eq!(
        windows["primary"]["resetsAt"], reset,
        "the header's reset-at"
    );
    assert_eq!(windows["secondary"]["usedPercent"], 40);
    let errors = run.notifications("error");
    assert_eq!(errors.len(), 1, "{}", run.show());
    assert_eq!(errors[0]["willRetry"], false);
    assert_eq!(errors[0]["error"]["codexErrorInfo"], "usageLimitExceeded");
    let turn = &run.prompt_response["params"]["turn"];
    assert_eq!(turn["status"], "failed");
    assert_eq!(turn["error"], errors[0]["error"]);
    let report = app_failure(&seen);
    let body: Value = serde_json::from_str(report.body.as_deref().expect("a body")).unwrap();
    assert_eq!(body["error"]["codex_error_info"], "usage_limit_exceeded");
    assert_eq!(body["error"]["resets_at"], reset, "{body}");
    assert_eq!(body["error"]["window_minutes"], 300);
}

#[tokio::test]
async fn agents_codex_app_server_usage_limit_without_window_headers() {
    // The body alone: the windows Codex reports are empty, so the runner's
    // report names the usage limit without a reset.
    let reset = chrono::Utc::now().timestamp() + 3600;
    let (run, _fake, seen) = codex_app_scenario(
        "usage_limit_body_only",
        codex_app_server,
        vec![Reply::openai_usage_limit_body_only(reset)],
    )
    .await;
    assert!(
        run.notifications("account/rateLimits/updated")
            .iter()
            .all(|u| u["rateLimits"]["primary"]["resetsAt"].is_null()),
        "{}",
        run.show()
    );
    let report = app_failure(&seen);
    let body: Value = serde_json::from_str(report.body.as_deref().expect("a body")).unwrap();
    assert_eq!(body["error"]["codex_error_info"], "usage_limit_exceeded");
    assert!(body["error"].get("resets_at").is_none(), "{body}");
}

#[tokio::test]
async fn agents_codex_app_server_overloaded() {
    let (run, _fake, seen) = codex_app_scenario(
        "overloaded_503",
        codex_app_server,
        vec![Reply::openai_overloaded()],
    )
    .await;
    let errors = run.notifications("error");
    assert_eq!(
        errors[0]["error"]["codexErrorInfo"],
        json!({"httpConnectionFailed": {"httpStatusCode": 503}}),
        "{}",
        run.show()
    );
    let report = app_failure(&seen);
    assert_eq!(report.status, Some(503));
    assert!(report
        .message
        .as_deref()
        .is_some_and(|m| m.contains("overloaded")));
}

#[tokio::test]
async fn agents_codex_app_server_retry_then_success() {
    // One stream retry allowed: Codex announces it (willRetry: true), the
    // second call answers, and the turn completes — no failure.
    let (run, fake, seen) = codex_app_scenario(
        "overloaded_once_own_retries",
        |d, b| codex_app_server_with_retries(d, b, 1),
        vec![Reply::openai_overloaded(), Reply::text("PONG-42")],
    )
    .await;
    assert_eq!(fake.model_calls(), 2);
    let errors = run.notifications("error");
    assert_eq!(errors.len(), 1, "{}", run.show());
    assert_eq!(errors[0]["willRetry"], true);
    assert_eq!(run.prompt_response["params"]["turn"]["status"], "completed");
    use runner::format::{Finish, Seen};
    assert!(
        !seen.iter().any(|s| matches!(s, Seen::Error(_))),
        "{seen:?}"
    );
    assert!(seen.contains(&Seen::Text("PONG-42".into())), "{seen:?}");
    assert_eq!(seen.last(), Some(&Seen::Finished(Finish::Success)));
}

// ---- a provider that never answers ----

#[tokio::test]
async fn agents_claude_hang_times_out() {
    // API_TIMEOUT_MS (default 600000) bounds a request; no retry with
    // CLAUDE_CODE_MAX_RETRIES=0.
    let (o, fake) = scenario_with(
        "claude",
        "hang_api_timeout",
        |d, b| claude_stream_json(d, b).with_env("API_TIMEOUT_MS", "3000"),
        vec![Reply::Hang],
    )
    .await;
    let e = claude_api_error(&o);
    assert!(
        assistant_text(&e).starts_with("Request timed out."),
        "{}",
        o.show()
    );
    assert!(e["api_error_status"].is_null(), "{e}");
    assert!(o.elapsed >= Duration::from_secs(3), "{:?}", o.elapsed);
    assert_eq!(fake.model_calls(), 1);
}

async fn hang_probe(
    cli: &str,
    name: &str,
    setup: impl FnOnce(&Path, &str) -> AgentSetup,
    reply: Reply,
) -> Outcome {
    let fake = FakeProvider::start().await;
    fake.push(reply);
    let dir = tempfile::tempdir().unwrap();
    let s = setup(dir.path(), &fake.base_url());
    let limit = Duration::from_secs(8);
    let o = match run_within(&s, "Answer with the word PONG.", limit).await {
        Ok(o) => o,
        Err(o) => o,
    };
    eprintln!("{cli}/{name}: exit {:?} in {:?}", o.exit, o.elapsed);
    write_sample(
        cli,
        name,
        dir.path(),
        &fake.base_url(),
        &o.stdout,
        &o.stderr,
        o.exit,
    );
    o
}

#[tokio::test]
async fn agents_codex_hang_waits_forever() {
    // No timeout covers a request that gets no response headers: still
    // waiting after 8 s (observed > 60 s), nothing printed after turn.started.
    let o = hang_probe("codex", "hang_no_headers", codex_json, Reply::Hang).await;
    assert_eq!(
        o.exit,
        None,
        "still running, killed by the probe\n{}",
        o.show()
    );
    let types: Vec<String> = o
        .events()
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(types, ["thread.started", "turn.started"], "{}", o.show());
}

#[tokio::test]
async fn agents_codex_stall_idle_timeout() {
    // Headers, then silence: stream_idle_timeout_ms applies.
    let o = hang_probe(
        "codex",
        "stall_idle_timeout",
        |d, b| codex_json_config(d, b, 0, 0, 2000),
        Reply::Stall,
    )
    .await;
    assert_eq!(o.exit, Some(1), "{}", o.show());
    let msg = codex_failure(&o);
    assert!(
        msg.starts_with("stream disconnected before completion"),
        "{msg}"
    );
}

#[tokio::test]
async fn agents_gemini_hang_waits_forever() {
    let o = hang_probe("gemini", "hang_no_headers", gemini_stream_json, Reply::Hang).await;
    assert_eq!(
        o.exit,
        None,
        "still running, killed by the probe\n{}",
        o.show()
    );
    assert!(o.events_of("result").is_empty(), "{}", o.show());
}

#[tokio::test]
async fn agents_gemini_auto_model_router_is_auxiliary() {
    // Without -m, Gemini CLI asks a router model first (a JSON-mode
    // generateContent); the fake answers it aside, so the script's one
    // reply goes to the chosen model.
    let (o, fake) = scenario_with(
        "gemini",
        "auto_model_router",
        |d, b| {
            let mut s = gemini_stream_json(d, b);
            let at = s.argv.iter().position(|a| a == "-m").unwrap();
            s.argv.drain(at..at + 2);
            s
        },
        vec![Reply::text("PONG-42")],
    )
    .await;
    assert_eq!(o.exit, Some(0), "{}", o.show());
    let reqs = fake.requests();
    let router: Vec<_> = reqs.iter().filter(|r| !r.model_call).collect();
    assert_eq!(router.len(), 1, "{reqs:?}");
    assert!(
        router[0].path.ends_with(":generateContent"),
        "{}",
        router[0].path
    );
    let model: Vec<_> = reqs.iter().filter(|r| r.model_call).collect();
    assert_eq!(model.len(), 1);
    assert!(
        model[0].path.contains(":streamGenerateContent"),
        "{}",
        model[0].path
    );
    eprintln!("router {} -> model {}", router[0].path, model[0].path);
    assert_eq!(o.events()[0]["model"], "auto");
}
