//! `kandev-recovery run` with fake agents: small shell scripts that print
//! what the test scripted for each invocation (Claude Code's stream-json
//! shapes, plain text, megabytes of output, a malformed line), exit with a
//! code or die by a signal. The real CLIs are in `runner_agents`; these
//! cover the edges a real CLI will not produce on demand.

use crate::runner_harness::{profile, write_config, AgentTable, Cand, Runner};
use crate::support::{policy, Engine, TestServer};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A scripted agent: invocation n prints `reply-n.out` / `reply-n.err`,
/// sleeps `reply-n.sleep`, dies by `reply-n.kill` or exits `reply-n.code`.
struct Script {
    dir: PathBuf,
}

const SCRIPT: &str = r#"#!/usr/bin/env bash
dir="$(cd "$(dirname "$0")" && pwd)"
n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/count"
printf '%s' "$1" > "$dir/prompt-$n"
echo "$$" > "$dir/pid-$n"
r="$dir/reply-$n"
[ -e "$r.err" ] && cat "$r.err" >&2
[ -e "$r.out" ] && cat "$r.out"
[ -e "$r.sleep" ] && sleep "$(cat "$r.sleep")"
[ -e "$r.kill" ] && kill -"$(cat "$r.kill")" $$
exit "$(cat "$r.code" 2>/dev/null || echo 0)"
"#;

impl Script {
    fn new(root: &Path, name: &str) -> Script {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).expect("script dir");
        let path = dir.join("agent.sh");
        std::fs::write(&path, SCRIPT).expect("script");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        Script { dir }
    }

    fn command(&self) -> Vec<String> {
        vec![
            self.dir.join("agent.sh").display().to_string(),
            "{prompt}".into(),
        ]
    }

    fn reply(&self, n: usize, out: &str, err: &str, code: i32) -> &Script {
        std::fs::write(self.dir.join(format!("reply-{n}.out")), out).expect("out");
        std::fs::write(self.dir.join(format!("reply-{n}.err")), err).expect("err");
        std::fs::write(self.dir.join(format!("reply-{n}.code")), code.to_string()).expect("code");
        self
    }

    fn extra(&self, n: usize, what: &str, value: &str) -> &Script {
        std::fs::write(self.dir.join(format!("reply-{n}.{what}")), value).expect("extra");
        self
    }

    fn invocations(&self) -> usize {
        std::fs::read_to_string(self.dir.join("count"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    fn prompt(&self, n: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("prompt-{n}"))).unwrap_or_default()
    }

    fn pid(&self, n: usize) -> Option<i32> {
        std::fs::read_to_string(self.dir.join(format!("pid-{n}")))
            .ok()
            .and_then(|s| s.trim().parse().ok())
    }
}

/// Claude Code's stream-json for an API error (its synthetic message and
/// the failed result), as `claude -p … --output-format stream-json` prints it.
fn claude_api_error(status: u16, body: &str) -> String {
    let text = format!("API Error: {status} {body}");
    format!(
        "{}\n{}\n{}\n",
        json!({"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-sonnet-4-5"}),
        json!({"type": "assistant", "message": {"model": "<synthetic>", "content": [{"type": "text", "text": text}]}}),
        json!({"type": "result", "subtype": "success", "is_error": true, "result": text}),
    )
}

const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

fn claude_answer(text: &str) -> String {
    format!(
        "{}\n{}\n{}\n",
        json!({"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-sonnet-4-5"}),
        json!({"type": "assistant", "message": {"model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": text}),
    )
}

struct Setup {
    server: TestServer,
    dir: tempfile::TempDir,
}

async fn setup() -> Setup {
    Setup {
        server: TestServer::start(Engine::Sqlite).await,
        dir: tempfile::tempdir().expect("temp dir"),
    }
}

fn one(label: &'static str, r: &'static str, transient: serde_json::Value) -> Cand<'static> {
    Cand {
        label,
        profile_ref: r,
        agent: "claude-code",
        provider_id: "anthropic",
        transient,
        hard: policy(0, 0, 0, "stop"),
    }
}

#[tokio::test]
async fn overloaded_twice_then_success_retries_on_the_schedule() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, &claude_api_error(529, OVERLOADED), "", 1)
        .reply(2, &claude_api_error(529, OVERLOADED), "", 1)
        .reply(3, &claude_answer("The answer is 42."), "", 0);
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Claude", "a", policy(3, 5, 0, "skip"))]).await;
    let run = Runner::new(&s.server, &pid, &config, "what is the answer?")
        .run(&s.server, &pid)
        .await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(
        run.stdout, "The answer is 42.\n",
        "only the answer is on stdout"
    );
    let seconds: Vec<f64> = run.waits.iter().map(|w| w.seconds).collect();
    assert_eq!(seconds, vec![5.0, 10.0], "{:?}", run.waits);
    assert_eq!(run.decisions(), vec!["retry", "retry"]);
    assert_eq!(run.codes(), vec!["provider_overloaded"; 2]);
    assert_eq!(run.route["state"], "active");
    assert_eq!(a.invocations(), 3);
    assert_eq!(a.prompt(3), "what is the answer?");
    assert!(run.stderr.contains("retry 1 of 3"), "{}", run.stderr);
}

#[tokio::test]
async fn output_then_failure_is_never_repeated() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    let out = format!(
        "{}\n{}",
        json!({"type": "assistant", "message": {"model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "Editing main.rs"}, {"type": "tool_use", "name": "Edit", "input": {}}]}}),
        claude_api_error(529, OVERLOADED)
    );
    a.reply(1, &out, "", 1);
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Claude", "a", policy(3, 5, 0, "skip"))]).await;
    let run = Runner::new(&s.server, &pid, &config, "edit it")
        .run(&s.server, &pid)
        .await;
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert_eq!(run.route["state"], "action_required");
    assert_eq!(run.route["reason"], "effect_unsafe");
    assert_eq!(a.invocations(), 1);
    assert!(run.stdout.contains("Editing main.rs"));
    assert!(
        run.stderr
            .contains(&format!("/routes/{}", run.route["id"].as_str().unwrap())),
        "says where a person can act: {}",
        run.stderr
    );
}

#[tokio::test]
async fn an_unrecognised_failure_stops_for_a_person() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, "", "frobnicator: E_WIBBLE 77 (the flux capacitor)\n", 1);
    let config = write_config(s.dir.path(), &[AgentTable::new("a", a.command(), "plain")]);
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Tool", "a", policy(3, 5, 0, "skip"))]).await;
    let run = Runner::new(&s.server, &pid, &config, "go")
        .run(&s.server, &pid)
        .await;
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert_eq!(run.route["reason"], "unclassified");
    assert_eq!(run.codes(), vec!["unknown"]);
    assert!(run.stderr.contains("not recognised"), "{}", run.stderr);
}

#[tokio::test]
async fn exhausted_recovery_switches_to_the_next_candidates_command() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    let b = Script::new(s.dir.path(), "b");
    a.reply(1, &claude_api_error(529, OVERLOADED), "", 1);
    b.reply(1, "the fallback answered\n", "", 0);
    let config = write_config(
        s.dir.path(),
        &[
            AgentTable::new("a", a.command(), "claude-stream-json"),
            AgentTable::new("b", b.command(), "plain"),
        ],
    );
    let api = s.server.api();
    let pid = profile(
        &api,
        "p",
        &[
            one("Claude", "a", policy(0, 0, 0, "skip")),
            one("Fallback", "b", policy(0, 0, 0, "stop")),
        ],
    )
    .await;
    let run = Runner::new(&s.server, &pid, &config, "hello")
        .run(&s.server, &pid)
        .await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "the fallback answered\n");
    // The profile prefers its first eligible candidate (the default): once
    // the fallback has answered, the route's next invocation goes back to
    // Claude, which nothing holds (no circuit) — the history says so.
    assert_eq!(run.decisions(), vec!["skip", "returned"]);
    assert_eq!(run.route["candidate"]["label"], "Claude");
    assert_eq!((a.invocations(), b.invocations()), (1, 1));
    assert_eq!(b.prompt(1), "hello");
    assert!(
        run.stderr.contains("switching to Fallback"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn a_missing_executable_stops_the_route_with_a_reason() {
    let s = setup().await;
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new(
            "a",
            vec!["/nonexistent/kandev-agent-xyz".into(), "{prompt}".into()],
            "claude-stream-json",
        )],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Ghost", "a", policy(3, 5, 0, "skip"))]).await;
    let run = Runner::new(&s.server, &pid, &config, "go")
        .run(&s.server, &pid)
        .await;
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert_eq!(run.route["state"], "action_required");
    assert_eq!(run.route["reason"], "not_provider");
    assert_eq!(run.codes(), vec!["local_runtime"]);
    assert!(run.attempts[0]["safe_excerpt"]
        .as_str()
        .unwrap_or("")
        .contains("command not found"));
    assert!(
        run.stderr
            .contains("/nonexistent/kandev-agent-xyz: command not found"),
        "the person sees why: {}",
        run.stderr
    );
}

#[tokio::test]
async fn megabytes_of_output_keep_the_evidence_bounded() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    let noise: String = (0..60_000)
        .map(|i| format!("debug line {i}: {}\n", "x".repeat(80)))
        .collect();
    assert!(noise.len() > 5_000_000);
    a.reply(1, &claude_api_error(529, OVERLOADED), &noise, 1)
        .reply(2, &claude_answer("done"), &noise, 0);
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Claude", "a", policy(1, 1, 0, "stop"))]).await;
    let run = Runner::new(&s.server, &pid, &config, "go")
        .run(&s.server, &pid)
        .await;
    // The failure report fit the test server's 64 KiB body limit and was
    // classified from the structured error, not drowned in the noise.
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.codes(), vec!["provider_overloaded"]);
    assert!(
        run.attempts[0]["safe_excerpt"]
            .as_str()
            .unwrap_or("")
            .chars()
            .count()
            <= 240
    );
}

#[tokio::test]
async fn a_banner_is_evidence_but_a_cut_off_event_counts_as_output() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    // A line that is not an event (a banner) does not stop a retry…
    let banner = format!(
        "Loaded cached credentials.\n{}",
        claude_api_error(529, OVERLOADED)
    );
    // …but one that starts like an event and does not parse may have been
    // output: it fails closed.
    let cut = format!(
        "{{\"type\":\"assistant\",\"message\":{{\"content\":[{{\"type\":\"te\n{}",
        claude_api_error(529, OVERLOADED)
    );
    a.reply(1, &banner, "", 1)
        .reply(2, &cut, "", 1)
        .reply(3, &claude_answer("ok"), "", 0);
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Claude", "a", policy(2, 2, 0, "stop"))]).await;
    let run = Runner::new(&s.server, &pid, &config, "go")
        .run(&s.server, &pid)
        .await;
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert_eq!(run.decisions(), vec!["retry", "effect_unsafe"]);
    assert_eq!(a.invocations(), 2);
    assert!(
        run.stderr
            .contains("could not be read; treating it as output"),
        "{}",
        run.stderr
    );
}

#[tokio::test]
async fn an_agent_killed_by_a_signal_is_reported_with_it() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, "", "", 0).extra(1, "kill", "SEGV");
    let config = write_config(s.dir.path(), &[AgentTable::new("a", a.command(), "plain")]);
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Crashy", "a", policy(3, 5, 0, "skip"))]).await;
    let run = Runner::new(&s.server, &pid, &config, "go")
        .run(&s.server, &pid)
        .await;
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert_eq!(run.codes(), vec!["local_runtime"], "a crash is local");
    assert_eq!(run.route["reason"], "not_provider");
}

/// Waits until `f` holds, polling.
async fn until<F: std::future::Future<Output = bool>>(what: &str, mut f: impl FnMut() -> F) {
    let give_up = tokio::time::Instant::now() + Duration::from_secs(30);
    while !f().await {
        assert!(
            tokio::time::Instant::now() < give_up,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn alive(pid: i32) -> bool {
    kill(Pid::from_raw(pid), None).is_ok()
}

async fn signal_stops_the_agent_group_and_the_route(signal: Signal, out: &str) {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, out, "", 0).extra(1, "sleep", "60");
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Sleepy", "a", policy(3, 5, 0, "skip"))]).await;
    let runner = Runner::new(&s.server, &pid, &config, "go");
    let child = runner.spawn();
    let runner_pid = child.id().expect("pid") as i32;
    until("the agent to start", || async { a.pid(1).is_some() }).await;
    let agent_pid = a.pid(1).expect("agent pid");
    kill(Pid::from_raw(runner_pid), signal).expect("signal the runner");
    let run = runner.drive(&s.server, &pid, child).await;
    assert_eq!(run.code, Some(130), "{}", run.stderr);
    assert!(!alive(agent_pid), "no orphaned agent");
    assert_eq!(run.route["state"], "action_required");
    assert_eq!(run.codes(), vec!["cancelled"], "{}", run.stderr);
}

#[tokio::test]
async fn ctrl_c_stops_the_agent_group_and_the_route() {
    signal_stops_the_agent_group_and_the_route(Signal::SIGINT, "").await
}

#[tokio::test]
async fn a_closed_terminal_stops_the_agent_group_and_the_route() {
    signal_stops_the_agent_group_and_the_route(Signal::SIGHUP, "").await
}

#[tokio::test]
async fn an_interruption_stops_the_route_whatever_the_agent_said_before() {
    // The agent reported a capacity error and lingers; the user's Ctrl-C,
    // not the error, is why the attempt ended: no retry is scheduled.
    signal_stops_the_agent_group_and_the_route(Signal::SIGINT, &claude_api_error(529, OVERLOADED))
        .await
}

#[tokio::test]
async fn a_timeout_stops_an_agent_that_never_answers() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, "", "", 0).extra(1, "sleep", "60");
    let path = s.dir.path().join("kandev-runner.toml");
    std::fs::write(
        &path,
        format!(
            "[agents.a]\ncommand = [{:?}, \"{{prompt}}\"]\nformat = \"plain\"\ntimeout_seconds = 1\n",
            a.command()[0]
        ),
    )
    .expect("config");
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Slow", "a", policy(3, 5, 0, "skip"))]).await;
    let run = Runner::new(&s.server, &pid, &path, "go")
        .run(&s.server, &pid)
        .await;
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert_eq!(
        run.route["reason"], "unclassified",
        "a timeout is not a provider's verdict"
    );
    assert!(!alive(a.pid(1).expect("pid")), "the agent was stopped");
    assert!(run.stderr.contains("past its timeout"), "{}", run.stderr);
}

#[tokio::test]
async fn attaching_to_a_retry_already_handed_out_is_refused() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, &claude_api_error(529, OVERLOADED), "", 1)
        .reply(2, "", "", 0)
        .extra(2, "sleep", "60");
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Claude", "a", policy(1, 5, 0, "stop"))]).await;
    let first = Runner::new(&s.server, &pid, &config, "go");
    let mut child = first.spawn();
    until("the retry wait", || async {
        crate::runner_harness::newest_route(&api, &pid)
            .await
            .is_some_and(|r| r["state"] == "retry_wait")
    })
    .await;
    api.advance(5.001).await;
    // The first runner takes the retry and its agent starts working.
    until("the retry's agent", || async { a.pid(2).is_some() }).await;
    child.kill().await.expect("kill -9 the runner");
    let id = crate::runner_harness::newest_route(&api, &pid)
        .await
        .expect("route")["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut second = Runner::new(&s.server, &pid, &config, "go");
    second.args.splice(1..1, ["--route".to_string(), id]);
    let run = second.run(&s.server, &pid).await;
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert!(run.stderr.contains("already handed out"), "{}", run.stderr);
    assert_eq!(a.invocations(), 2, "nothing delivered twice");
    if let Some(p) = a.pid(2) {
        let _ = kill(Pid::from_raw(p), Signal::SIGKILL);
    }
}

#[tokio::test]
async fn ctrl_c_while_waiting_stops_the_route() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, &claude_api_error(529, OVERLOADED), "", 1);
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Claude", "a", policy(3, 60, 0, "skip"))]).await;
    let mut runner = Runner::new(&s.server, &pid, &config, "go");
    runner.advance = false;
    let child = runner.spawn();
    let runner_pid = child.id().expect("pid") as i32;
    until("the retry wait", || async {
        crate::runner_harness::newest_route(&api, &pid)
            .await
            .is_some_and(|r| r["state"] == "retry_wait")
    })
    .await;
    kill(Pid::from_raw(runner_pid), Signal::SIGTERM).expect("signal the runner");
    let run = runner.drive(&s.server, &pid, child).await;
    assert_eq!(run.code, Some(130), "{}", run.stderr);
    assert_eq!(run.route["state"], "action_required");
    assert_eq!(run.route["reason"], "stopped_by_user");
    assert_eq!(a.invocations(), 1);
}

#[tokio::test]
async fn retry_now_from_the_web_app_starts_the_next_attempt_at_once() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, &claude_api_error(529, OVERLOADED), "", 1)
        .reply(2, &claude_answer("back"), "", 0);
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Claude", "a", policy(1, 3600, 0, "stop"))]).await;
    let mut runner = Runner::new(&s.server, &pid, &config, "go");
    runner.advance = false;
    let child = runner.spawn();
    until("the retry wait", || async {
        crate::runner_harness::newest_route(&api, &pid)
            .await
            .is_some_and(|r| r["state"] == "retry_wait")
    })
    .await;
    let route = crate::runner_harness::newest_route(&api, &pid)
        .await
        .expect("route");
    api.post_ok(
        &format!("/api/v1/routes/{}/actions", route["id"].as_str().unwrap()),
        json!({"action": "retry_now", "expected_generation": route["generation"]}),
    )
    .await;
    let run = runner.drive(&s.server, &pid, child).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, "back\n");
}

#[tokio::test]
async fn a_restarted_runner_attaches_to_its_route_and_carries_on() {
    let s = setup().await;
    let a = Script::new(s.dir.path(), "a");
    a.reply(1, &claude_api_error(529, OVERLOADED), "", 1).reply(
        2,
        &claude_answer("resumed"),
        "",
        0,
    );
    let config = write_config(
        s.dir.path(),
        &[AgentTable::new("a", a.command(), "claude-stream-json")],
    );
    let api = s.server.api();
    let pid = profile(&api, "p", &[one("Claude", "a", policy(1, 30, 0, "stop"))]).await;
    let mut first = Runner::new(&s.server, &pid, &config, "go");
    first.advance = false;
    let mut child = first.spawn();
    until("the retry wait", || async {
        crate::runner_harness::newest_route(&api, &pid)
            .await
            .is_some_and(|r| r["state"] == "retry_wait")
    })
    .await;
    child.kill().await.expect("kill -9 the runner");
    let route = crate::runner_harness::newest_route(&api, &pid)
        .await
        .expect("route");
    let id = route["id"].as_str().unwrap().to_string();
    let mut second = Runner::new(&s.server, &pid, &config, "go");
    second
        .args
        .splice(1..1, ["--route".to_string(), id.clone()]);
    let run = second.run(&s.server, &pid).await;
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.route["id"], id.as_str());
    assert_eq!(run.stdout, "resumed\n");
    assert_eq!(a.invocations(), 2);

    // Attaching to a route that is active again is refused: its prompt may
    // be running elsewhere.
    let mut third = Runner::new(&s.server, &pid, &config, "go");
    third.args.splice(1..1, ["--route".to_string(), id]);
    let run = third.run(&s.server, &pid).await;
    assert_eq!(run.code, Some(3), "{}", run.stderr);
    assert!(
        run.stderr.contains("does not deliver it again"),
        "{}",
        run.stderr
    );
    assert_eq!(a.invocations(), 2);
}

#[tokio::test]
async fn configuration_errors_name_the_key_before_anything_runs() {
    let s = setup().await;
    let api = s.server.api();
    let a = Script::new(s.dir.path(), "a");
    let pid = profile(
        &api,
        "p",
        &[
            one("Claude", "a", policy(0, 0, 0, "skip")),
            one("Codex", "codex-gpt5", policy(0, 0, 0, "stop")),
        ],
    )
    .await;
    let cases: Vec<(String, &str)> = vec![
        (
            format!(
                "[agents.a]\ncommand = [\"{}\", \"{{prompt}}\"]\nformat = \"plain\"\n",
                a.command()[0]
            ),
            "[agents.codex-gpt5]",
        ),
        (
            "[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"jsonl\"\n".into(),
            "unknown `format`",
        ),
        ("[agents.a\n".into(), "line 1"),
    ];
    for (text, expected) in cases {
        let path = s.dir.path().join("bad.toml");
        std::fs::write(&path, &text).expect("write");
        let run = Runner::new(&s.server, &pid, &path, "go")
            .run(&s.server, &pid)
            .await;
        assert_eq!(run.code, Some(2), "{text}: {}", run.stderr);
        assert!(run.stderr.contains(expected), "{text}: {}", run.stderr);
        assert!(run.route.is_null(), "no route was opened");
    }
    assert_eq!(a.invocations(), 0);
    let missing = Runner::new(&s.server, &pid, &s.dir.path().join("absent.toml"), "go")
        .run(&s.server, &pid)
        .await;
    assert_eq!(missing.code, Some(2));
    assert!(missing.stderr.contains("absent.toml"), "{}", missing.stderr);
    let mut unknown_profile = Runner::new(&s.server, "nope", &s.dir.path().join("x"), "go");
    unknown_profile.args[6] = s.dir.path().join("bad.toml").display().to_string();
    std::fs::write(
        s.dir.path().join("bad.toml"),
        "[agents.a]\ncommand = [\"x\", \"{prompt}\"]\nformat = \"plain\"\n",
    )
    .expect("write");
    let run = unknown_profile.run(&s.server, &pid).await;
    assert_eq!(run.code, Some(2));
    assert!(
        run.stderr.contains("no profile with id or name `nope`"),
        "{}",
        run.stderr
    );
}
