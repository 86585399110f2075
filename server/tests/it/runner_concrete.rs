//! `kandev-recovery run --agent NAME`: a concrete session — the REAL Claude
//! Code CLI against `fake_provider`, no profile and no route. The service
//! classifies and decides each failure (`POST /policies/evaluate`); the
//! runner keeps the time on the server's clock, which the test moves as
//! soon as the runner says what it waits for. A 529 is retried on the
//! concrete policy's schedule, a usage limit's reset is waited for (or not,
//! past `--wait-for-reset`), and output before a failure is never repeated.

use crate::agents_cli::{
    claude_stream_json_partial, claude_stream_json_subscription, AgentSetup, PROMPT,
};
use crate::fake_provider::{FakeProvider, Reply};
use crate::runner_harness::{seconds_between, write_config, AgentTable, RUNNER};
use crate::support::{start_time, Api, Engine, TestServer};
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// A wait the runner announced, in seconds on the server's clock.
#[derive(Debug, Clone, PartialEq)]
struct Announced {
    what: &'static str,
    seconds: f64,
}

#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    waits: Vec<Announced>,
    /// Every `POST /routes` made while it ran: none for a concrete session.
    routes: usize,
}

impl Run {
    fn show(&self) -> String {
        format!(
            "exit {:?}\nstdout:\n{}\nstderr:\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// The deadline in a decision line: "→ retry 1 of 3 at 2026-11-30
/// 12:00:05 UTC" or "→ wait for the provider's reset at … UTC, then …".
fn announced(line: &str) -> Option<(&'static str, String)> {
    let (_, then) = line.split_once(" → ")?;
    let what = if then.starts_with("retry ") {
        "retry"
    } else if then.starts_with("wait for the provider's reset") {
        "reset"
    } else {
        return None;
    };
    let (_, rest) = then.split_once(" at ")?;
    let stamp = rest.get(..19)?;
    Some((what, format!("{}T{}Z", &stamp[..10], &stamp[11..])))
}

/// Runs Claude Code (`setup`) as `[agents.claude]` in concrete mode with
/// `flags`, moving the server's clock to each deadline the runner announces.
async fn run(
    setup: fn(&Path, &str) -> AgentSetup,
    replies: Vec<Reply>,
    flags: &[&str],
) -> (Run, FakeProvider) {
    let fake = FakeProvider::start().await;
    for r in replies {
        fake.push(r);
    }
    let server = TestServer::start(Engine::Sqlite).await;
    let api = server.api();
    let dir = tempfile::tempdir().expect("temp dir");
    let setup = setup(dir.path(), &fake.base_url());
    let mut command = setup.argv.clone();
    command.iter_mut().for_each(|a| {
        if a == PROMPT {
            *a = "{prompt}".into();
        }
    });
    let mut table = AgentTable::new("claude", command, "claude-stream-json");
    table.env = setup.env.clone();
    table.cwd = Some(setup.cwd.clone());
    let config = write_config(dir.path(), &[table]);

    let mut args: Vec<String> = vec![
        "run".into(),
        "--server".into(),
        server.base.clone(),
        "--agent".into(),
        "claude".into(),
        "--config".into(),
        config.display().to_string(),
        "--show-evidence".into(),
    ];
    args.extend(flags.iter().map(|f| f.to_string()));
    args.extend(["--".into(), "Answer with the word PONG.".into()]);
    let mut child = tokio::process::Command::new(RUNNER)
        .args(&args)
        .env_remove("KANDEV_SERVER")
        .env("KANDEV_TOKEN", crate::support::ADMIN_TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the runner");
    let mut stdout = child.stdout.take().expect("stdout");
    let out_task = tokio::spawn(async move {
        let mut s = String::new();
        let _ = tokio::io::AsyncReadExt::read_to_string(&mut stdout, &mut s).await;
        s
    });
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let mut stderr = String::new();
    let mut waits = Vec::new();
    let give_up = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let line = tokio::select! {
            l = lines.next_line() => l.expect("read stderr"),
            _ = tokio::time::sleep_until(give_up) => {
                let _ = child.start_kill();
                panic!("the runner did not finish in time\nstderr:\n{stderr}");
            }
        };
        let Some(line) = line else { break };
        stderr.push_str(&line);
        stderr.push('\n');
        if let Some((what, deadline)) = announced(&line) {
            // The line shows whole seconds; the deadline has milliseconds.
            let seconds = seconds_between(&server_time(&api).await, &deadline);
            waits.push(Announced {
                what,
                seconds: seconds.round(),
            });
            api.advance(seconds.ceil()).await;
        }
    }
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("the runner exits once its stderr closes")
        .expect("wait for the runner");
    let routes = api
        .get("/api/v1/routes")
        .await
        .as_array()
        .map_or(0, Vec::len);
    let run = Run {
        code: status.code(),
        stdout: out_task.await.unwrap_or_default(),
        stderr,
        waits,
        routes,
    };
    (run, fake)
}

async fn server_time(api: &Api) -> String {
    api.get("/api/v1/circuits").await["server_time"]
        .as_str()
        .expect("the server's time")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_529_is_retried_on_the_concrete_policys_schedule() {
    let (run, fake) = run(
        claude_stream_json_partial,
        vec![
            Reply::anthropic_overloaded(),
            Reply::anthropic_overloaded(),
            Reply::text("PONG-42"),
        ],
        &["--max-retries", "2", "--initial-interval", "2s"],
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", run.show());
    assert!(run.stdout.contains("PONG-42"), "{}", run.show());
    assert_eq!(
        run.waits,
        vec![
            Announced {
                what: "retry",
                seconds: 2.0
            },
            Announced {
                what: "retry",
                seconds: 4.0
            },
        ],
        "{}",
        run.show()
    );
    assert!(
        run.stderr
            .contains("Provider overloaded (529) [transient provider_overloaded · rule "),
        "the decision line names the cause and the rule: {}",
        run.show()
    );
    assert!(run
        .stderr
        .contains("retry 2 of 2 of claude after Provider overloaded (529)"));
    assert_eq!(fake.model_calls(), 3);
    assert_eq!(run.routes, 0, "a concrete session opens no route");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_used_up_stop_with_the_reason() {
    let (run, fake) = run(
        claude_stream_json_partial,
        vec![
            Reply::anthropic_overloaded(),
            Reply::anthropic_overloaded(),
            Reply::text("PONG-42"),
        ],
        &["--max-retries", "1", "--initial-interval", "3s"],
    )
    .await;
    assert_eq!(run.code, Some(3), "{}", run.show());
    assert_eq!(
        run.waits,
        vec![Announced {
            what: "retry",
            seconds: 3.0
        }],
        "{}",
        run.show()
    );
    assert!(
        run.stderr
            .contains("stopped on claude: Recovery for this error is used up"),
        "{}",
        run.show()
    );
    assert_eq!(fake.pending(), 1, "the third reply was never asked for");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usage_limit_is_waited_for_until_its_reset() {
    // The 5-hour window resets 10 minutes after the test clock's start.
    let reset = start_time().timestamp() + 600;
    let (run, fake) = run(
        claude_stream_json_subscription,
        vec![Reply::anthropic_usage_limit(reset), Reply::text("PONG-42")],
        &["--wait-for-reset", "1h"],
    )
    .await;
    assert_eq!(run.code, Some(0), "{}", run.show());
    assert_eq!(run.waits.len(), 1, "{}", run.show());
    assert_eq!(run.waits[0].what, "reset");
    assert_eq!(run.waits[0].seconds, 600.0, "{}", run.show());
    assert!(
        run.stderr
            .contains("wait for the provider's reset at 2026-11-30 12:10:00 UTC"),
        "{}",
        run.show()
    );
    assert!(run.stderr.contains("[hard quota_limited"), "{}", run.show());
    assert!(run.stdout.contains("PONG-42"), "{}", run.show());
    assert_eq!(fake.model_calls(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reset_further_away_than_the_flag_allows_stops() {
    let reset = start_time().timestamp() + 600;
    let (run, fake) = run(
        claude_stream_json_subscription,
        vec![Reply::anthropic_usage_limit(reset), Reply::text("PONG-42")],
        &["--wait-for-reset", "5m"],
    )
    .await;
    assert_eq!(run.code, Some(3), "{}", run.show());
    assert!(run.waits.is_empty(), "{}", run.show());
    assert!(run.stderr.contains("stopped on claude:"), "{}", run.show());
    assert!(
        run.stderr.contains("last error: Usage limit reached"),
        "{}",
        run.show()
    );
    assert_eq!(fake.pending(), 1, "nothing was tried again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_then_a_failure_is_not_repeated() {
    let (run, fake) = run(
        claude_stream_json_partial,
        vec![
            Reply::TextThenError {
                text: "Let me edit main.rs. ".into(),
                error_body: Reply::anthropic_stream_error_body(),
            },
            // Claude Code re-sends a failed stream once without streaming.
            Reply::anthropic_overloaded(),
            Reply::text("PONG-42"),
        ],
        &[],
    )
    .await;
    assert_eq!(run.code, Some(3), "{}", run.show());
    assert!(run.waits.is_empty(), "{}", run.show());
    assert!(
        run.stdout.contains("Let me edit main.rs."),
        "{}",
        run.show()
    );
    assert!(
        run.stderr
            .contains("stop: it may have come after the agent started working"),
        "{}",
        run.show()
    );
    assert!(
        run.stderr
            .contains("repeating the prompt could repeat its effects"),
        "the stop says why: {}",
        run.show()
    );
    assert_eq!(fake.pending(), 1, "the prompt was not sent again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_flags_and_unknown_agents_are_refused_before_anything_runs() {
    let server = TestServer::start(Engine::Sqlite).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let config = write_config(
        dir.path(),
        &[AgentTable::new(
            "claude",
            vec!["/nonexistent/claude".into(), "{prompt}".into()],
            "claude-stream-json",
        )],
    );
    let config = config.display().to_string();
    let base = server.base.clone();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--agent", "codex"], "no [agents.codex] table"),
        (
            vec!["--agent", "claude", "--wait-for-reset", "soon"],
            "--wait-for-reset: `soon` is not a duration",
        ),
        (
            vec!["--agent", "claude", "--max-retries", "11"],
            "--max-retries:",
        ),
        (
            vec!["--agent", "claude", "--initial-interval", "2h"],
            "--initial-interval:",
        ),
        (
            vec!["--agent", "claude", "--profile", "p"],
            "cannot be used with",
        ),
        (vec!["--max-retries", "2", "--profile", "p"], "--agent"),
    ];
    for (flags, expected) in cases {
        let mut args = vec!["run", "--server", &base, "--config", &config];
        args.extend(flags.iter().copied());
        args.extend(["--", "hello"]);
        let out = tokio::process::Command::new(RUNNER)
            .args(&args)
            .env("KANDEV_TOKEN", crate::support::ADMIN_TOKEN)
            .output()
            .await
            .expect("run");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {stderr}");
        assert!(stderr.contains(expected), "{flags:?}: {stderr}");
    }
}
