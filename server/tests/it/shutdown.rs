//! Graceful shutdown (issue 17, item 7): a request in flight when the
//! stop comes finishes and is answered; event streams end with a last
//! `event: shutdown` frame, then close; the timer loop stops between
//! batches, so a due timer has either fired whole or waits, unclaimed, for
//! the next start; SIGINT and SIGTERM both stop the real binary cleanly;
//! and a runner whose server is stopped mid-session and started again on
//! the same port and database carries on, its report landing once.

use crate::fault_proxy::{audit, Db, FaultProxy};
use crate::runner_harness::{newest_route, profile, write_config, AgentTable, Cand, RUNNER};
use crate::support::{
    client, grant_admin, overloaded, policy, serve, services, start_time, Api, Engine, TestDb,
};
use serde_json::{json, Value};
use server::clock::Clock;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Reads an event stream to its end (up to `limit`): every frame, as
/// (event name, data), and whether the stream ended rather than timed out.
async fn read_to_end(
    resp: &mut reqwest::Response,
    limit: Duration,
) -> (Vec<(String, String)>, bool) {
    let give_up = Instant::now() + limit;
    let mut buf = String::new();
    let mut frames = Vec::new();
    loop {
        let left = give_up.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, resp.chunk()).await {
            Err(_) => return (frames, false),
            Ok(Err(e)) => panic!("the stream broke instead of ending: {e}"),
            Ok(Ok(None)) => return (frames, true),
            Ok(Ok(Some(chunk))) => {
                buf.push_str(std::str::from_utf8(&chunk).unwrap());
                while let Some(end) = buf.find("\n\n") {
                    let block: String = buf.drain(..end + 2).collect();
                    let (mut kind, mut data) = (String::new(), String::new());
                    for line in block.lines() {
                        if let Some(v) = line.strip_prefix("event:") {
                            kind = v.trim().to_string();
                        } else if let Some(v) = line.strip_prefix("data:") {
                            data.push_str(v.trim_start());
                        }
                    }
                    if !kind.is_empty() {
                        frames.push((kind, data));
                    }
                }
            }
        }
    }
}

fn assert_ends_with_shutdown(frames: &[(String, String)], ended: bool) {
    assert!(ended, "the stream ended (it did not stay open): {frames:?}");
    let (kind, data) = frames.last().expect("at least the shutdown frame");
    assert_eq!(kind, "shutdown", "the last frame: {frames:?}");
    let data: Value = serde_json::from_str(data).expect("JSON data");
    assert!(
        data["reason"]
            .as_str()
            .unwrap_or("")
            .contains("shutting down"),
        "{data}"
    );
}

/// An event stream open when the server stops gets its events, then
/// `event: shutdown`, then the end of the stream; the server's task ends.
#[tokio::test]
async fn sqlite_event_streams_end_with_a_shutdown_event() {
    let db = TestDb::new(Engine::Sqlite).await;
    let (addr, stop, handle) = serve(services(db.store.clone(), Clock::manual(start_time()))).await;
    let api = Api::new(format!("http://{addr}"));
    let p = api
        .profile(&[("Claude", policy(1, 2, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let mut stream = client()
        .get(format!("http://{addr}/api/v1/events?after=0"))
        .send()
        .await
        .unwrap();
    api.route(&p, "kanban").await;
    let first = crate::http_events::read_events(&mut stream, 1).await;
    assert_eq!(first[0].1, "route.created");
    let _ = stop.send(());
    let (frames, ended) = read_to_end(&mut stream, Duration::from_secs(30)).await;
    assert_ends_with_shutdown(&frames, ended);
    tokio::time::timeout(Duration::from_secs(30), handle)
        .await
        .expect("the server stops")
        .unwrap();
}

/// A failure report in flight when the stop comes (a slow PostgreSQL keeps
/// it in flight) is committed and answered; then the port is closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_request_in_flight_finishes() {
    let db = TestDb::with_prefix(Engine::Postgres, "shutdown").await;
    let proxy = FaultProxy::start(crate::faults::socket_of(&db.url)).await;
    let store = server::store::connect(&proxy.url_through(&db.url))
        .await
        .unwrap();
    grant_admin(&db.store).await;
    let (addr, stop, handle) = serve(services(store, Clock::manual(start_time()))).await;
    let api = Api::new(format!("http://{addr}"));
    let p = api
        .profile(&[("Claude", policy(1, 2, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    let route = api.route(&p, "kanban").await;
    let id = route["id"].as_str().unwrap().to_string();
    // Every packet to and from the database now waits 300 ms: the report
    // takes seconds.
    proxy.set_latency(Duration::from_millis(300));
    let report = {
        let api = Api::new(api.base.clone());
        let route = route.clone();
        tokio::spawn(async move { api.fail(&route, overloaded()).await })
    };
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!report.is_finished(), "the report is still in flight");
    let _ = stop.send(());
    let answer = tokio::time::timeout(Duration::from_secs(60), report)
        .await
        .expect("the in-flight report is answered")
        .unwrap();
    assert_eq!(answer["route"]["state"], "retry_wait", "{answer}");
    tokio::time::timeout(Duration::from_secs(60), handle)
        .await
        .expect("the server stops")
        .unwrap();
    assert!(
        reqwest::get(format!("http://{addr}/healthz"))
            .await
            .is_err(),
        "nothing is served after the stop"
    );
    let mut check = Db::open(&db.url).await;
    assert_eq!(
        check
            .scalar(&format!(
                "SELECT COUNT(*) FROM attempts WHERE route_id = '{id}'"
            ))
            .await,
        1,
        "the answered report is stored, once"
    );
}

/// A stop while a backlog of due retries is firing: each has fired whole
/// (its dispatch made) or is still armed and unclaimed; the next start
/// fires the rest, once each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_due_timers_fire_whole_or_wait_for_the_next_start() {
    const ROUTES: usize = 150;
    let db = TestDb::new(Engine::Sqlite).await;
    let clock = Clock::manual(start_time());
    let (addr, stop, handle) = serve(services(db.store.clone(), clock.clone())).await;
    let api = Api::new(format!("http://{addr}"));
    let p = api
        .profile(&[("Claude", policy(1, 2, 0, "stop"), policy(0, 0, 0, "stop"))])
        .await;
    for _ in 0..ROUTES {
        let route = api.route(&p, "kanban").await;
        api.fail(&route, overloaded()).await;
    }
    // All due at once; the stop comes while the loop works through them.
    clock.advance(chrono::Duration::seconds(5));
    tokio::time::sleep(Duration::from_millis(50)).await;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(60), handle)
        .await
        .expect("the server stops")
        .unwrap();

    let mut check = Db::open(&db.url).await;
    let fired = check
        .scalar("SELECT COUNT(*) FROM schedules WHERE state = 'fired'")
        .await;
    let dispatches = check.scalar("SELECT COUNT(*) FROM dispatches").await;
    assert_eq!(fired, dispatches, "every fired timer made its dispatch");
    assert_eq!(
        check
            .scalar("SELECT COUNT(*) FROM schedules WHERE state = 'armed' AND claimed_until IS NOT NULL")
            .await,
        0,
        "no timer left claimed by the stopped server"
    );
    let problems = audit(&db.url).await;
    assert!(problems.is_empty(), "after the stop: {problems:?}");

    let (_addr, stop, handle) = serve(services(db.store.clone(), clock.clone())).await;
    let since = Instant::now();
    while check
        .scalar("SELECT COUNT(*) FROM schedules WHERE state = 'armed'")
        .await
        > 0
    {
        assert!(
            since.elapsed() < Duration::from_secs(60),
            "the next start fires what was left"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        check.scalar("SELECT COUNT(*) FROM dispatches").await,
        ROUTES as i64,
        "one dispatch per route"
    );
    let problems = audit(&db.url).await;
    assert!(problems.is_empty(), "after the next start: {problems:?}");
    println!("{fired} of {ROUTES} due timers fired before the stop, the rest at the next start");
    let _ = stop.send(());
    handle.await.unwrap();
}

/// One `kandev-recovery serve` process on `port` and `db_url`.
struct Process {
    child: Child,
    base: String,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn start_process(db_url: &str, port: u16) -> Process {
    let child = Command::new(env!("CARGO_BIN_EXE_kandev-recovery"))
        .arg("serve")
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .env("DATABASE_URL", db_url)
        .env("KANDEV_NO_SEED", "1")
        .env("RUST_LOG", "warn")
        .env_remove("KANDEV_TEST_CLOCK")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start kandev-recovery");
    let mut p = Process {
        child,
        base: format!("http://127.0.0.1:{port}"),
    };
    let since = Instant::now();
    loop {
        if let Ok(r) = reqwest::get(format!("{}/readyz", p.base)).await {
            if r.status().is_success() {
                return p;
            }
        }
        if let Ok(Some(status)) = p.child.try_wait() {
            panic!("the server exited before it was ready: {status}");
        }
        assert!(
            since.elapsed() < Duration::from_secs(90),
            "the server was not ready within 90 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl Process {
    /// Sends `signal` and waits for a clean exit.
    async fn stop_with(&mut self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), signal).unwrap();
        let since = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "{signal}: a graceful stop exits 0: {status}"
                );
                return;
            }
            assert!(
                since.elapsed() < Duration::from_secs(40),
                "the server did not stop within 40 s of {signal}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Ctrl-C (SIGINT) and SIGTERM each stop the real binary gracefully: its
/// event stream gets the shutdown frame and it exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_and_sigterm_stop_the_binary_gracefully() {
    use nix::sys::signal::Signal;
    let db = TestDb::new(Engine::Sqlite).await;
    grant_admin(&db.store).await;
    for signal in [Signal::SIGINT, Signal::SIGTERM] {
        let mut server = start_process(&db.url, free_port()).await;
        let mut stream = client()
            .get(format!("{}/api/v1/events", server.base))
            .send()
            .await
            .unwrap();
        assert_eq!(stream.status(), 200);
        let reading =
            tokio::spawn(async move { read_to_end(&mut stream, Duration::from_secs(40)).await });
        server.stop_with(signal).await;
        let (frames, ended) = reading.await.unwrap();
        assert_ends_with_shutdown(&frames, ended);
    }
}

/// An agent that, the first time, waits for `go` and then fails with a 529
/// Overloaded (Claude Code's stream-json); the second time answers.
const AGENT: &str = r#"#!/usr/bin/env bash
dir="$(cd "$(dirname "$0")" && pwd)"
n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))
echo "$n" > "$dir/count"
if [ "$n" = 1 ]; then
  touch "$dir/started"
  while [ ! -e "$dir/go" ]; do sleep 0.1; done
  cat "$dir/fail.out"
  exit 1
fi
cat "$dir/ok.out"
"#;

fn stream_json(text: &str, is_error: bool, model: &str) -> String {
    format!(
        "{}\n{}\n{}\n",
        json!({"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-sonnet-4-5"}),
        json!({"type": "assistant", "message": {"model": model, "content": [{"type": "text", "text": text}]}}),
        json!({"type": "result", "subtype": "success", "is_error": is_error, "result": text}),
    )
}

/// A runner mid-session while its server is stopped with SIGTERM and
/// started again on the same port and database: the failure it reports
/// while the server is down is retried until the new server takes it, the
/// retry is dispatched, and the run finishes — one attempt stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runner_carries_on_through_a_server_restart() {
    let db = TestDb::new(Engine::Sqlite).await;
    grant_admin(&db.store).await;
    let port = free_port();
    let mut first = start_process(&db.url, port).await;
    let api = Api::new(first.base.clone());

    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent.sh");
    std::fs::write(&agent, AGENT).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let overloaded_text = r#"API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    std::fs::write(
        dir.path().join("fail.out"),
        stream_json(overloaded_text, true, "<synthetic>"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("ok.out"),
        stream_json("The answer is 42.", false, "claude-sonnet-4-5"),
    )
    .unwrap();
    let config = write_config(
        dir.path(),
        &[AgentTable::new(
            "a",
            vec![agent.display().to_string(), "{prompt}".into()],
            "claude-stream-json",
        )],
    );
    let pid = profile(
        &api,
        "restart",
        &[Cand {
            label: "Claude",
            profile_ref: "a",
            agent: "claude-code",
            provider_id: "anthropic",
            transient: policy(1, 1, 0, "stop"),
            hard: policy(0, 0, 0, "stop"),
        }],
    )
    .await;
    let mut runner = tokio::process::Command::new(RUNNER)
        .args([
            "run",
            "--server",
            &first.base,
            "--profile",
            &pid,
            "--config",
        ])
        .arg(&config)
        .args(["--", "what is the answer?"])
        .env_remove("KANDEV_SERVER")
        .env("KANDEV_TOKEN", crate::support::ADMIN_TOKEN)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the runner");
    let since = Instant::now();
    while !dir.path().join("started").exists() {
        assert!(
            since.elapsed() < Duration::from_secs(60),
            "the agent did not start"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    first.stop_with(nix::sys::signal::Signal::SIGTERM).await;
    std::fs::write(dir.path().join("go"), "").unwrap();
    // The runner now reports into a closed port, and keeps trying.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let second = start_process(&db.url, port).await;

    let out = tokio::time::timeout(Duration::from_secs(120), async {
        let mut stdout = String::new();
        let mut stderr = String::new();
        let (o, e) = (runner.stdout.take().unwrap(), runner.stderr.take().unwrap());
        let (mut o, mut e) = (o, e);
        let (_, _, status) = tokio::join!(
            tokio::io::AsyncReadExt::read_to_string(&mut o, &mut stdout),
            tokio::io::AsyncReadExt::read_to_string(&mut e, &mut stderr),
            runner.wait()
        );
        (status.unwrap(), stdout, stderr)
    })
    .await
    .expect("the runner finishes after the restart");
    let (status, stdout, stderr) = out;
    assert!(
        status.success(),
        "the runner carried on: {status}\n{stderr}"
    );
    assert_eq!(stdout, "The answer is 42.\n", "{stderr}");
    let api = Api::new(second.base.clone());
    let route = newest_route(&api, &pid).await.expect("the route");
    assert_eq!(route["state"], "active", "{route}");
    let id = route["id"].as_str().unwrap();
    let attempts = api.get(&format!("/api/v1/routes/{id}/attempts")).await;
    assert_eq!(
        attempts.as_array().unwrap().len(),
        1,
        "the report landed once: {attempts}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("count"))
            .unwrap()
            .trim(),
        "2",
        "the agent ran twice: the failure, then the retry"
    );
    let problems = audit(&db.url).await;
    assert!(problems.is_empty(), "{problems:?}");
}
