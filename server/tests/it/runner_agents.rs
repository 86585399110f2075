//! `kandev-recovery run` driving the REAL agent CLIs (Claude Code, Codex
//! headless and as an app server, Gemini CLI headless and as an ACP
//! agent), installed from npm by scripts/setup, against `fake_provider` on
//! 127.0.0.1 and a test server
//! whose clock the harness moves through every wait. For each CLI: a
//! capacity error twice then success retries on the policy's schedule; a
//! usage or quota limit gets the hard policy; an invalid key stops
//! (auth_required); output or tool activity before a failure is never
//! repeated; an unrecognised failure stops.

use crate::agents_cli::{
    claude_stream_json_partial, claude_stream_json_subscription, codex_app_server, codex_json,
    gemini_acp, gemini_stream_json, AgentSetup, PROMPT,
};
use crate::fake_provider::{FakeProvider, Reply};
use crate::runner_harness::{profile, write_config, AgentTable, Cand, Run, Runner};
use crate::support::{policy, start_time, Engine, TestServer};
use serde_json::json;
use std::path::Path;

/// One CLI as the runner sees it.
#[derive(Clone, Copy)]
struct Cli {
    name: &'static str,
    format: &'static str,
    agent: &'static str,
    provider: &'static str,
    setup: fn(&Path, &str) -> AgentSetup,
}

const CLAUDE: Cli = Cli {
    name: "claude",
    format: "claude-stream-json",
    agent: "claude-code",
    provider: "anthropic",
    // Partial messages: streamed text reaches the runner (and the user) as
    // it arrives, so text before a failure is seen as the effect it is.
    setup: claude_stream_json_partial,
};
const CODEX: Cli = Cli {
    name: "codex",
    format: "codex-json",
    agent: "codex",
    provider: "openai",
    setup: codex_json,
};
/// Codex's app server: the same CLI and provider over JSON-RPC.
const CODEX_APP: Cli = Cli {
    name: "codex-app",
    format: "codex-app-server",
    agent: "codex",
    provider: "openai",
    setup: codex_app_server,
};
const GEMINI: Cli = Cli {
    name: "gemini",
    format: "gemini-stream-json",
    agent: "gemini-cli",
    provider: "google",
    setup: gemini_stream_json,
};
const GEMINI_ACP: Cli = Cli {
    name: "gemini-acp",
    format: "acp",
    agent: "gemini-cli",
    provider: "google",
    setup: gemini_acp,
};

fn overloaded(cli: Cli) -> Reply {
    match cli.provider {
        "anthropic" => Reply::anthropic_overloaded(),
        "openai" => Reply::openai_overloaded(),
        _ => Reply::gemini_overloaded(),
    }
}

fn invalid_key(cli: Cli) -> Reply {
    match cli.provider {
        "anthropic" => Reply::anthropic_auth(),
        "openai" => Reply::openai_auth(),
        _ => Reply::gemini_auth(),
    }
}

/// The test clock starts at 2026-11-30T12:00:00Z.
const RESET_AT_TEXT: &str = "2026-11-30 at 12:02 UTC";

/// A usage or quota limit in the provider's own shape.
fn quota(cli: Cli) -> Reply {
    match cli.provider {
        // Anthropic's spend limit, with the time access returns.
        "anthropic" => Reply::Error {
            status: 400,
            headers: vec![("content-type".into(), "application/json".into())],
            body: json!({"type": "error", "error": {"type": "invalid_request_error",
                "message": format!("You have reached your specified API usage limits. You will regain access on {RESET_AT_TEXT}.")}})
            .to_string(),
        },
        // ChatGPT plan usage limit, as the Responses API reports it.
        "openai" => Reply::Error {
            status: 429,
            headers: vec![("content-type".into(), "application/json".into())],
            body: json!({"error": {"type": "usage_limit_reached",
                "message": "The usage limit has been reached", "plan_type": "plus",
                "resets_in_seconds": 7200}})
            .to_string(),
        },
        // Gemini's daily quota (QuotaFailure names a per-day quota).
        _ => Reply::gemini_quota(0, true),
    }
}

/// Text or tool activity, then a failure.
fn work_then_fail(cli: Cli) -> Vec<Reply> {
    match cli.name {
        "claude" => vec![
            Reply::TextThenError {
                text: "Let me edit main.rs. ".into(),
                error_body: Reply::anthropic_stream_error_body(),
            },
            // Claude Code re-sends a failed stream once without streaming.
            Reply::anthropic_overloaded(),
        ],
        "codex" | "codex-app" => vec![
            Reply::ToolCall {
                name: "exec_command".into(),
                args: json!({"cmd": "echo made-by-agent"}),
            },
            Reply::openai_overloaded(),
        ],
        "gemini" => vec![Reply::TextThenError {
            text: "Let me edit main.rs. ".into(),
            error_body: Reply::gemini_stream_error_body(),
        }],
        _ => vec![
            Reply::ToolCall {
                name: "run_shell_command".into(),
                args: json!({"command": "echo made-by-agent", "description": "print"}),
            },
            Reply::gemini_overloaded(),
        ],
    }
}

/// A fake provider with `replies`, a test server, a profile with one
/// candidate for `cli` under `transient`/`hard`, and the runner run to
/// its end.
async fn run(
    cli: Cli,
    replies: Vec<Reply>,
    transient: serde_json::Value,
    hard: serde_json::Value,
) -> (Run, FakeProvider) {
    let fake = FakeProvider::start().await;
    for r in replies {
        fake.push(r);
    }
    let server = TestServer::start(Engine::Sqlite).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let setup = (cli.setup)(dir.path(), &fake.base_url());
    // The setup's whole environment goes into the configuration, as a
    // user's would; the runner adds it to its own.
    let mut command = setup.argv.clone();
    if cli.format == "acp" || cli.format == "codex-app-server" {
        assert!(!command.iter().any(|a| a == PROMPT));
    }
    command.iter_mut().for_each(|a| {
        if a == PROMPT {
            *a = "{prompt}".into();
        }
    });
    let mut table = AgentTable::new(cli.name, command, cli.format);
    table.env = setup.env.clone();
    table.cwd = Some(setup.cwd.clone());
    let config = write_config(dir.path(), &[table]);
    let api = server.api();
    let pid = profile(
        &api,
        cli.name,
        &[Cand {
            label: cli.name,
            profile_ref: cli.name,
            agent: cli.agent,
            provider_id: cli.provider,
            transient,
            hard,
        }],
    )
    .await;
    let run = Runner::new(&server, &pid, &config, "Answer with the word PONG.")
        .run(&server, &pid)
        .await;
    (run, fake)
}

fn show(run: &Run) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}\nattempts: {:#}",
        run.code,
        run.stdout,
        run.stderr,
        serde_json::Value::from(run.attempts.clone())
    )
}

fn classes(run: &Run) -> Vec<String> {
    run.attempts
        .iter()
        .rev()
        .map(|a| a["class"].as_str().unwrap_or("").to_string())
        .collect()
}

async fn overloaded_twice_then_success(cli: Cli) {
    let (run, fake) = run(
        cli,
        vec![overloaded(cli), overloaded(cli), Reply::text("PONG-42")],
        policy(3, 5, 0, "skip"),
        policy(0, 0, 0, "stop"),
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", show(&run));
    assert!(run.stdout.contains("PONG-42"), "{}", show(&run));
    let seconds: Vec<f64> = run.waits.iter().map(|w| w.seconds).collect();
    assert_eq!(seconds, vec![5.0, 10.0], "{}", show(&run));
    assert_eq!(run.decisions(), vec!["retry", "retry"], "{}", show(&run));
    assert_eq!(
        classes(&run),
        vec!["transient", "transient"],
        "{}",
        show(&run)
    );
    assert_eq!(fake.model_calls(), 3);
}

async fn quota_limit_gets_the_hard_policy(cli: Cli) {
    // Hard errors wait for a trusted reset up to 5 minutes, then stop.
    // Claude Code 2.1.328 sends a request answered 400 five more times at
    // once, whatever CLAUDE_CODE_MAX_RETRIES says: one attempt takes six.
    let mut replies = vec![quota(cli); if cli.name == "claude" { 6 } else { 1 }];
    replies.push(Reply::text("PONG-42"));
    let (run, _fake) = run(
        cli,
        replies,
        policy(3, 5, 0, "skip"),
        policy(0, 0, 300, "stop"),
    )
    .await;
    assert_eq!(
        classes(&run).first().map(String::as_str),
        Some("hard"),
        "{}",
        show(&run)
    );
    match cli.provider {
        // The spend limit names when access returns: the route waits for
        // it (2 minutes on the test clock), tries once more, and succeeds.
        "anthropic" => {
            assert_eq!(run.code, Some(0), "{}", show(&run));
            assert_eq!(run.decisions(), vec!["wait_for_reset"], "{}", show(&run));
            assert_eq!(run.waits.len(), 1, "{}", show(&run));
            assert_eq!(run.waits[0].state, "waiting_for_reset");
            assert_eq!(run.waits[0].seconds, 120.0, "{}", show(&run));
            assert!(run.stdout.contains("PONG-42"));
        }
        // No trustworthy reset (a clock time without a zone, or none): no
        // wait; the hard policy's outcome applies at once.
        _ => {
            assert_eq!(run.code, Some(3), "{}", show(&run));
            assert_eq!(run.decisions(), vec!["stop"], "{}", show(&run));
            assert_eq!(run.route["reason"], "stopped_by_policy");
            assert!(run.waits.is_empty());
        }
    }
}

async fn invalid_key_stops(cli: Cli) {
    let (run, fake) = run(
        cli,
        vec![invalid_key(cli), Reply::text("PONG-42")],
        policy(3, 5, 0, "skip"),
        policy(0, 0, 300, "stop"),
    )
    .await;
    assert_eq!(run.code, Some(3), "{}", show(&run));
    assert_eq!(run.codes(), vec!["auth_required"], "{}", show(&run));
    assert_eq!(run.route["state"], "action_required");
    assert!(run.stderr.contains("Login required"), "{}", show(&run));
    assert_eq!(fake.pending(), 1, "nothing was retried");
}

async fn work_then_failure_is_not_repeated(cli: Cli) {
    let mut replies = work_then_fail(cli);
    replies.push(Reply::text("PONG-42"));
    let (run, fake) = run(
        cli,
        replies,
        policy(3, 5, 0, "skip"),
        policy(0, 0, 300, "stop"),
    )
    .await;
    assert_eq!(run.code, Some(3), "{}", show(&run));
    assert_eq!(run.route["state"], "action_required");
    assert!(run.waits.is_empty());
    assert_eq!(fake.pending(), 1, "the prompt was not sent again");
    // Effect safety decides — unless the failure was not even recognised,
    // which the evaluator rejects first (Gemini CLI ends such a stream with
    // "Model stream ended without a finish reason.", which says nothing
    // about the provider).
    let reason = run.route["reason"].as_str().unwrap_or("");
    match cli.name {
        "gemini" => assert!(
            ["effect_unsafe", "unclassified"].contains(&reason),
            "{}",
            show(&run)
        ),
        _ => assert_eq!(reason, "effect_unsafe", "{}", show(&run)),
    }
}

async fn unrecognised_failure_stops(cli: Cli) {
    let (run, _fake) = run(
        cli,
        vec![Reply::teapot(), Reply::text("PONG-42")],
        policy(3, 5, 0, "skip"),
        policy(0, 0, 300, "skip"),
    )
    .await;
    assert_eq!(run.code, Some(3), "{}", show(&run));
    assert_eq!(run.codes(), vec!["unknown"], "{}", show(&run));
    assert_eq!(run.route["reason"], "unclassified");
}

macro_rules! scenarios {
    ($($cli:ident => $module:ident),* $(,)?) => {
        $(
            mod $module {
                use super::*;
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn overloaded_twice_then_success_retries_on_the_schedule() {
                    overloaded_twice_then_success($cli).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn a_usage_or_quota_limit_gets_the_hard_policy() {
                    quota_limit_gets_the_hard_policy($cli).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn an_invalid_key_stops_with_auth_required() {
                    invalid_key_stops($cli).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn output_or_tools_then_a_failure_is_not_repeated() {
                    work_then_failure_is_not_repeated($cli).await
                }
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn an_unrecognised_failure_stops() {
                    unrecognised_failure_stops($cli).await
                }
            }
        )*
    };
}

scenarios! {
    CLAUDE => claude,
    CODEX => codex,
    CODEX_APP => codex_app,
    GEMINI => gemini,
    GEMINI_ACP => gemini_acp,
}

/// Claude Code signed in with a subscription rather than an API key.
const CLAUDE_SUBSCRIPTION: Cli = Cli {
    name: "claude",
    format: "claude-stream-json",
    agent: "claude-code",
    provider: "anthropic",
    setup: claude_stream_json_subscription,
};

/// A usage limit whose reset, 10 minutes after the test clock's start, the
/// CLI reports as data: the route waits exactly until then on the test
/// clock, tries once more and succeeds.
async fn usage_limit_waits_for_its_reset(cli: Cli, refusal: fn(i64) -> Reply) {
    let reset = start_time().timestamp() + 600;
    let (run, fake) = run(
        cli,
        vec![refusal(reset), Reply::text("PONG-42")],
        policy(3, 5, 0, "skip"),
        policy(0, 0, 3600, "stop"),
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", show(&run));
    assert_eq!(run.decisions(), vec!["wait_for_reset"], "{}", show(&run));
    assert_eq!(run.codes(), vec!["quota_limited"], "{}", show(&run));
    let first = run.attempts.last().expect("one attempt");
    assert_eq!(first["class"], "hard", "{}", show(&run));
    assert_eq!(
        first["classification"]["reset_at"],
        "2026-11-30T12:10:00Z",
        "{}",
        show(&run)
    );
    assert_eq!(run.waits.len(), 1, "{}", show(&run));
    assert_eq!(run.waits[0].state, "waiting_for_reset");
    assert_eq!(run.waits[0].seconds, 600.0, "{}", show(&run));
    assert!(run.stdout.contains("PONG-42"), "{}", show(&run));
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_code_usage_limit_waits_for_its_reset_then_resumes() {
    // Claude Code hides the response headers, but its `rate_limit_event`
    // carries the 5-hour window's reset.
    usage_limit_waits_for_its_reset(CLAUDE_SUBSCRIPTION, Reply::anthropic_usage_limit).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_usage_limit_waits_for_its_reset_then_resumes() {
    // Codex prints only "… try again at 12:10 PM." (no zone: not trusted),
    // but its session file keeps the exhausted 5-hour window's reset as
    // Unix seconds.
    usage_limit_waits_for_its_reset(CODEX, Reply::openai_usage_limit).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_app_server_usage_limit_waits_for_its_reset_then_resumes() {
    // The app server sends the exhausted window's reset as data
    // (account/rateLimits/updated) before the failed turn.
    usage_limit_waits_for_its_reset(CODEX_APP, Reply::openai_usage_limit).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_usage_limit_without_a_known_reset_stops() {
    // The same refusal without the window headers: Codex's prose names a
    // clock time without a zone and its session file no window, so there
    // is no trusted reset. The usage limit is recognised; the hard
    // policy's outcome (stop) applies at once, however long it would wait.
    let reset = start_time().timestamp() + 600;
    let (run, fake) = run(
        CODEX,
        vec![
            Reply::openai_usage_limit_body_only(reset),
            Reply::text("PONG-42"),
        ],
        policy(3, 5, 0, "skip"),
        policy(0, 0, 3600, "stop"),
    )
    .await;
    assert_eq!(run.code, Some(3), "{}", show(&run));
    assert_eq!(run.decisions(), vec!["stop"], "{}", show(&run));
    assert_eq!(run.codes(), vec!["quota_limited"], "{}", show(&run));
    let first = run.attempts.last().expect("one attempt");
    assert!(
        first["classification"]["reset_at"].is_null(),
        "{}",
        show(&run)
    );
    assert_eq!(run.route["reason"], "stopped_by_policy");
    assert!(run.waits.is_empty(), "{}", show(&run));
    assert!(
        run.stderr
            .contains("The candidate's policy says stop for this error."),
        "{}",
        show(&run)
    );
    assert_eq!(fake.pending(), 1, "nothing was retried");
}

/// Gemini CLI over ACP with the permission answers the configuration gives.
async fn acp_with_permissions(
    replies: Vec<Reply>,
    permissions: Option<&str>,
) -> (Run, FakeProvider, tempfile::TempDir) {
    let fake = FakeProvider::start().await;
    for r in replies {
        fake.push(r);
    }
    let server = TestServer::start(Engine::Sqlite).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let setup = gemini_acp(dir.path(), &fake.base_url());
    let mut table = AgentTable::new("gemini-acp", setup.argv.clone(), "acp");
    table.env = setup.env.clone();
    table.cwd = Some(setup.cwd.clone());
    let config = write_config(dir.path(), &[table]);
    if let Some(p) = permissions {
        let text = std::fs::read_to_string(&config).expect("config");
        std::fs::write(
            &config,
            format!(
                "{}permissions = \"{p}\"\n",
                text.trim_end().to_string() + "\n"
            ),
        )
        .expect("config");
    }
    let api = server.api();
    let pid = profile(
        &api,
        "acp",
        &[Cand {
            label: "Gemini (ACP)",
            profile_ref: "gemini-acp",
            agent: "gemini-cli",
            provider_id: "google",
            transient: policy(3, 5, 0, "skip"),
            hard: policy(0, 0, 0, "stop"),
        }],
    )
    .await;
    let run = Runner::new(&server, &pid, &config, "Make a file.")
        .run(&server, &pid)
        .await;
    (run, fake, dir)
}

fn touch() -> Reply {
    Reply::ToolCall {
        name: "run_shell_command".into(),
        args: json!({"command": "touch made-by-agent.txt", "description": "make a file"}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_permission_requests_are_denied_by_default() {
    let (run, fake, dir) =
        acp_with_permissions(vec![touch(), Reply::text("I could not.")], None).await;
    assert_eq!(run.code, Some(0), "{}", show(&run));
    assert!(
        run.stderr
            .contains("permission refused for touch made-by-agent.txt"),
        "{}",
        show(&run)
    );
    assert!(
        !dir.path().join("work/made-by-agent.txt").exists(),
        "the tool did not run"
    );
    assert!(run.stdout.contains("I could not."));
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_permission_requests_are_allowed_when_configured() {
    let (run, _fake, dir) =
        acp_with_permissions(vec![touch(), Reply::text("Made it.")], Some("allow_all")).await;
    assert_eq!(run.code, Some(0), "{}", show(&run));
    assert!(
        run.stderr
            .contains("permission granted for touch made-by-agent.txt"),
        "{}",
        show(&run)
    );
    assert!(
        dir.path().join("work/made-by-agent.txt").exists(),
        "the tool ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_cancels_an_acp_prompt_and_stops_the_route() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::Hang);
    let server = TestServer::start(Engine::Sqlite).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let setup = gemini_acp(dir.path(), &fake.base_url());
    let mut table = AgentTable::new("gemini-acp", setup.argv.clone(), "acp");
    table.env = setup.env.clone();
    table.cwd = Some(setup.cwd.clone());
    let config = write_config(dir.path(), &[table]);
    let api = server.api();
    let pid = profile(
        &api,
        "acp",
        &[Cand {
            label: "Gemini (ACP)",
            profile_ref: "gemini-acp",
            agent: "gemini-cli",
            provider_id: "google",
            transient: policy(3, 5, 0, "skip"),
            hard: policy(0, 0, 0, "stop"),
        }],
    )
    .await;
    let runner = Runner::new(&server, &pid, &config, "Wait.");
    let child = runner.spawn();
    let runner_pid = child.id().expect("pid") as i32;
    // Once the model call hangs, the prompt is in flight.
    let give_up = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while fake.model_calls() == 0 {
        assert!(
            tokio::time::Instant::now() < give_up,
            "the agent never called the model"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(runner_pid),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("signal the runner");
    let run = runner.drive(&server, &pid, child).await;
    assert_eq!(run.code, Some(130), "{}", show(&run));
    assert_eq!(run.route["state"], "action_required");
    assert_eq!(run.codes(), vec!["cancelled"], "{}", show(&run));
}

/// A server with a profile whose one candidate is Codex's app server
/// against `fake` (with the agent's `timeout_seconds`, if any), and the
/// runner configuration for it: the server, the directory the
/// configuration and Codex's home live in, the configuration, the profile.
async fn codex_app_route(
    fake: &FakeProvider,
    timeout_seconds: Option<u64>,
) -> (TestServer, tempfile::TempDir, std::path::PathBuf, String) {
    let server = TestServer::start(Engine::Sqlite).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let setup = codex_app_server(dir.path(), &fake.base_url());
    let mut table = AgentTable::new("codex-app", setup.argv.clone(), "codex-app-server");
    table.env = setup.env.clone();
    table.cwd = Some(setup.cwd.clone());
    table.timeout_seconds = timeout_seconds;
    let config = write_config(dir.path(), &[table]);
    let api = server.api();
    let pid = profile(
        &api,
        "codex-app",
        &[Cand {
            label: "Codex (app server)",
            profile_ref: "codex-app",
            agent: "codex",
            provider_id: "openai",
            transient: policy(3, 5, 0, "skip"),
            hard: policy(0, 0, 0, "stop"),
        }],
    )
    .await;
    (server, dir, config, pid)
}

/// Codex's app server with the approval answers the configuration gives:
/// the model asks to run `touch` outside the sandbox, which Codex's
/// default approval policy (`on-request`) puts to the client.
async fn codex_app_with_permissions(
    replies: Vec<Reply>,
    permissions: Option<&str>,
) -> (Run, FakeProvider, tempfile::TempDir) {
    let fake = FakeProvider::start().await;
    for r in replies {
        fake.push(r);
    }
    let (server, dir, config, pid) = codex_app_route(&fake, None).await;
    if let Some(p) = permissions {
        let text = std::fs::read_to_string(&config).expect("config");
        std::fs::write(
            &config,
            format!("{}\npermissions = \"{p}\"\n", text.trim_end()),
        )
        .expect("config");
    }
    let run = Runner::new(&server, &pid, &config, "Make a file.")
        .run(&server, &pid)
        .await;
    (run, fake, dir)
}

fn escalated_touch() -> Reply {
    Reply::ToolCall {
        name: "exec_command".into(),
        args: json!({"cmd": "touch made-by-agent.txt", "sandbox_permissions": "require_escalated",
                     "justification": "May I make the file?"}),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_app_server_approvals_are_declined_by_default() {
    let (run, fake, dir) =
        codex_app_with_permissions(vec![escalated_touch(), Reply::text("I could not.")], None)
            .await;
    assert_eq!(run.code, Some(0), "{}", show(&run));
    assert!(
        run.stderr.contains("permission refused for"),
        "{}",
        show(&run)
    );
    assert!(
        !dir.path().join("work/made-by-agent.txt").exists(),
        "the command did not run"
    );
    assert!(run.stdout.contains("I could not."), "{}", show(&run));
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_app_server_approvals_are_granted_when_configured() {
    let (run, _fake, dir) = codex_app_with_permissions(
        vec![escalated_touch(), Reply::text("Made it.")],
        Some("allow_all"),
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", show(&run));
    assert!(
        run.stderr.contains("permission granted for"),
        "{}",
        show(&run)
    );
    assert!(
        dir.path().join("work/made-by-agent.txt").exists(),
        "the command ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_interrupts_a_codex_app_server_turn_and_stops_the_route() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::Hang);
    let (server, _dir, config, pid) = codex_app_route(&fake, None).await;
    let runner = Runner::new(&server, &pid, &config, "Wait.");
    let child = runner.spawn();
    let runner_pid = child.id().expect("pid") as i32;
    // Once the model call hangs, the turn is in flight.
    let give_up = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    while fake.model_calls() == 0 {
        assert!(
            tokio::time::Instant::now() < give_up,
            "the agent never called the model"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(runner_pid),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("signal the runner");
    let run = runner.drive(&server, &pid, child).await;
    assert_eq!(run.code, Some(130), "{}", show(&run));
    assert_eq!(run.route["state"], "action_required");
    assert_eq!(run.codes(), vec!["cancelled"], "{}", show(&run));
}

/// Codex's app server past the agent's configured timeout: the runner
/// interrupts the turn and stops the server, and the attempt is not a
/// provider's verdict (the route stops for a person, nothing is replayed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_app_server_turn_past_its_timeout_is_interrupted_and_stops_the_route() {
    let fake = FakeProvider::start().await;
    fake.push(Reply::Hang);
    // Long enough for the server to start and call the model on a busy
    // machine; the model never answers.
    let (server, _dir, config, pid) = codex_app_route(&fake, Some(20)).await;
    let run = Runner::new(&server, &pid, &config, "Wait.")
        .run(&server, &pid)
        .await;
    assert_eq!(fake.model_calls(), 1, "{}", show(&run));
    assert_eq!(run.code, Some(3), "{}", show(&run));
    assert_eq!(run.route["state"], "action_required", "{}", show(&run));
    assert_eq!(
        run.route["reason"],
        "unclassified",
        "a timeout is not a provider's verdict: {}",
        show(&run)
    );
    assert!(run.stderr.contains("past its timeout"), "{}", show(&run));
}
