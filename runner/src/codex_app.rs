//! `format = "codex-app-server"`: the runner as a client of Codex's app
//! server over the agent's stdio (JSON-RPC 2.0, one message per line):
//! `initialize` and `initialized`, `thread/start` in the agent's working
//! directory, `turn/start` with the prompt, and `turn/interrupt` on Ctrl-C
//! or the timeout. The server's notifications are read by
//! [`crate::format::codex_app`] (text and tool items are effects, a failed
//! turn's error is built from its data); its approval requests are answered
//! from the configuration as the ACP path's permission requests are (deny
//! unless allowed). Once the turn completes the server is stopped.

use super::attempt::{
    conclude, read_lines, start, Context, Effects, End, Line, Progress, Stopped, Stream,
    LINE_QUEUE, MAX_ERRORS, TAIL_BYTES, TAIL_LINES, TAIL_LINE_BYTES,
};
use super::envelope::{EffectKind, Phase, Record, Tail};
use super::format::codex_app::{answer, CodexApp, Message};
use super::format::{unparsed, ErrorReport, Finish, Seen};
use super::process::{self, GRACE};
use domain::evidence::Item;
use nix::sys::signal::Signal;
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::mpsc;
use tokio::time::Instant;

/// After the server exits, how long output still in its pipes is read.
const DRAIN: Duration = Duration::from_secs(2);

/// The runner's requests, by id.
const INITIALIZE: i64 = 0;
const THREAD_START: i64 = 1;
const TURN_START: i64 = 2;
const TURN_INTERRUPT: i64 = 3;

/// A structured error, once (the last ones say most).
fn keep_error(errors: &mut Vec<Item>, report: ErrorReport) {
    let item = report.to_item();
    if errors.last() != Some(&item) {
        if errors.len() == MAX_ERRORS {
            errors.remove(0);
        }
        errors.push(item);
    }
}

async fn send(stdin: &mut ChildStdin, message: Value) {
    let mut line = message.to_string();
    line.push('\n');
    // A server that went away is noticed by its exit.
    let _ = stdin.write_all(line.as_bytes()).await;
    let _ = stdin.flush().await;
}

fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Runs one attempt against `codex app-server`.
pub async fn run(ctx: Context<'_>) -> End {
    // A `{prompt}` on the command line is honoured too; the prompt also
    // goes over the protocol.
    let mut agent = match start(&ctx, Stdio::piped()) {
        Ok(agent) => agent,
        Err(end) => return *end,
    };
    let mut stdin = agent.child.stdin.take().expect("stdin is piped");
    let stdout = agent.child.stdout.take().expect("stdout is piped");
    let stderr = agent.child.stderr.take().expect("stderr is piped");
    let (lines_tx, mut lines_rx) = mpsc::channel::<(Stream, Line)>(LINE_QUEUE);
    let out_task = tokio::spawn(read_lines(stdout, Stream::Stdout, lines_tx.clone()));
    let err_task = tokio::spawn(read_lines(stderr, Stream::Stderr, lines_tx));

    let cwd = ctx
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    let mut reader = CodexApp::default();
    let mut stdout_tail = Tail::new(TAIL_LINES, TAIL_LINE_BYTES, TAIL_BYTES);
    let mut stderr_tail = Tail::new(TAIL_LINES, TAIL_LINE_BYTES, TAIL_BYTES);
    let mut effects = Effects::default();
    let mut errors: Vec<Item> = Vec::new();
    let mut phase = Phase::SessionInit;
    let mut delivered = false;
    let mut finish: Option<Finish> = None;
    let mut thread: Option<String> = None;
    let mut turn: Option<String> = None;
    let mut stopped: Option<Stopped> = None;
    let mut status: Option<std::process::ExitStatus> = None;
    let mut pipes_open = true;
    let far = || Instant::now() + Duration::from_secs(86_400 * 365);
    let timeout_at = ctx
        .agent
        .timeout_seconds
        .map(|s| Instant::now() + Duration::from_secs(s));
    // After an interrupt: how long the server has to end the turn.
    let mut give_up_at: Option<Instant> = None;
    let mut drain_until: Option<Instant> = None;

    send(
        &mut stdin,
        request(
            INITIALIZE,
            "initialize",
            json!({"clientInfo": {"name": "kandev-recovery", "version": env!("CARGO_PKG_VERSION")}}),
        ),
    )
    .await;

    while finish.is_none() && (pipes_open || status.is_none()) {
        tokio::select! {
            line = lines_rx.recv(), if pipes_open => {
                let Some((stream, line)) = line else {
                    pipes_open = false;
                    continue;
                };
                let l = match (stream, line) {
                    (Stream::Stderr, Line::Text(l)) => {
                        ctx.ui.agent_stderr(&l);
                        stderr_tail.push(&l);
                        continue;
                    }
                    (Stream::Stderr, Line::TooLong(prefix)) => {
                        stderr_tail.push(&prefix);
                        continue;
                    }
                    (Stream::Stdout, Line::TooLong(prefix)) => {
                        // A message too long to read may have been output.
                        stdout_tail.push(&prefix);
                        ctx.ui.status("the agent printed a line too long to read; treating it as output");
                        effects.saw(EffectKind::AgentMessageChunk, thread.clone(), &ctx.progress);
                        phase = Phase::Stream;
                        continue;
                    }
                    (Stream::Stdout, Line::Text(l)) => l,
                };
                let read = match Message::parse(&l) {
                    Message::Response { id, result } => {
                        match (id.as_i64(), result) {
                            (Some(INITIALIZE), Ok(_)) => {
                                send(&mut stdin, json!({"jsonrpc": "2.0", "method": "initialized"})).await;
                                send(&mut stdin, request(THREAD_START, "thread/start", json!({"cwd": cwd}))).await;
                            }
                            (Some(THREAD_START), Ok(r)) => {
                                let id = r.pointer("/thread/id").and_then(Value::as_str).unwrap_or("").to_string();
                                reader.set_thread(&id);
                                thread = Some(id.clone());
                                send(&mut stdin, request(TURN_START, "turn/start", json!({
                                    "threadId": id,
                                    "input": [{"type": "text", "text": ctx.prompt}],
                                }))).await;
                                phase = Phase::Prompt;
                                if !delivered {
                                    delivered = true;
                                    let _ = ctx.progress.send(Progress::Delivered);
                                }
                            }
                            (Some(TURN_START), Ok(r)) => {
                                turn = r.pointer("/turn/id").and_then(Value::as_str).map(str::to_string);
                                if stopped.is_some() {
                                    if let (Some(t), Some(u)) = (&thread, &turn) {
                                        send(&mut stdin, request(TURN_INTERRUPT, "turn/interrupt", json!({"threadId": t, "turnId": u}))).await;
                                    }
                                }
                            }
                            (Some(TURN_INTERRUPT), _) => {}
                            (id, Err(e)) => {
                                // One of the runner's requests was refused: the
                                // turn cannot go on.
                                let method = match id {
                                    Some(INITIALIZE) => "initialize",
                                    Some(THREAD_START) => "thread/start",
                                    _ => "turn/start",
                                };
                                let message = e.get("message").and_then(Value::as_str).unwrap_or("");
                                keep_error(&mut errors, ErrorReport {
                                    status: None,
                                    body: None,
                                    message: Some(format!("codex app-server: {method} failed: {message}")),
                                });
                                finish = Some(Finish::Failure);
                            }
                            _ => {}
                        }
                        continue;
                    }
                    Message::Request { id, method, params } => {
                        let a = answer(&method, &params, ctx.agent.permissions, &ctx.agent.allow_tools);
                        if let Some(title) = &a.title {
                            ctx.ui.status(&format!(
                                "permission {} for {title}",
                                if a.allowed { "granted" } else { "refused" }
                            ));
                        }
                        let reply = match a.result {
                            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                            Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
                        };
                        send(&mut stdin, reply).await;
                        continue;
                    }
                    Message::Notification { method, params } => reader.notification(&method, &params),
                    Message::Other => unparsed(&l),
                };
                if read.keep && !l.trim_start().starts_with('{') {
                    // A banner or crash trace; the protocol's own lines are
                    // read as data instead.
                    stdout_tail.push(&l);
                }
                for seen in read.seen {
                    match seen {
                        Seen::Text(t) => {
                            ctx.ui.assistant(&t);
                            effects.saw(EffectKind::AgentMessageChunk, thread.clone(), &ctx.progress);
                            phase = Phase::Stream;
                        }
                        Seen::Tool(name) => {
                            ctx.ui.status(&format!("tool: {name}"));
                            effects.saw(EffectKind::ToolCall, thread.clone(), &ctx.progress);
                            phase = Phase::Stream;
                        }
                        Seen::Unreadable => {
                            ctx.ui.status("the agent printed a line that could not be read; treating it as output");
                            effects.saw(EffectKind::AgentMessageChunk, thread.clone(), &ctx.progress);
                            phase = Phase::Stream;
                        }
                        Seen::Notice(n) => ctx.ui.status(&n),
                        Seen::Error(e) => keep_error(&mut errors, e),
                        Seen::Session(s) => {
                            if thread.is_none() {
                                thread = Some(s);
                            }
                        }
                        Seen::Finished(f) => finish = Some(f),
                    }
                }
            }
            s = agent.child.wait(), if status.is_none() => {
                status = s.ok();
                if status.is_none() {
                    break;
                }
                drain_until = Some(Instant::now() + DRAIN);
            }
            _ = ctx.cancel.cancelled(), if stopped.is_none() => {
                stopped = Some(Stopped::Interrupted);
                if let (Some(t), Some(u)) = (&thread, &turn) {
                    send(&mut stdin, request(TURN_INTERRUPT, "turn/interrupt", json!({"threadId": t, "turnId": u}))).await;
                }
                give_up_at = Some(Instant::now() + GRACE);
            }
            _ = tokio::time::sleep_until(timeout_at.unwrap_or_else(far)), if timeout_at.is_some() && stopped.is_none() => {
                stopped = Some(Stopped::TimedOut(ctx.agent.timeout_seconds.unwrap_or(0)));
                ctx.ui.status("the agent ran past its timeout; stopping it");
                if let (Some(t), Some(u)) = (&thread, &turn) {
                    send(&mut stdin, request(TURN_INTERRUPT, "turn/interrupt", json!({"threadId": t, "turnId": u}))).await;
                }
                give_up_at = Some(Instant::now() + GRACE);
            }
            _ = tokio::time::sleep_until(give_up_at.unwrap_or_else(far)), if give_up_at.is_some() => break,
            _ = tokio::time::sleep_until(drain_until.unwrap_or_else(far)), if drain_until.is_some() => break,
        }
    }
    if !delivered {
        let _ = ctx.progress.send(Progress::Delivered);
    }
    // The turn is over (or the server gone): stop the server, its group
    // with it.
    let exited = status;
    if exited.is_none() {
        drop(stdin);
        agent.signal(Signal::SIGTERM);
        if tokio::time::timeout(GRACE, agent.child.wait())
            .await
            .is_err()
        {
            agent.signal(Signal::SIGKILL);
        }
    }
    drop(agent);
    // Its last words on stderr (the group is gone, so the pipe ends).
    let _ = tokio::time::timeout(DRAIN, async {
        while let Some((stream, line)) = lines_rx.recv().await {
            if let (Stream::Stderr, Line::Text(l) | Line::TooLong(l)) = (stream, line) {
                stderr_tail.push(&l);
            }
        }
    })
    .await;
    out_task.abort();
    err_task.abort();
    if finish.is_none() && stopped.is_none() {
        // The server went before the turn ended: the error it did not
        // retry, if it sent one.
        if let Some(report) = reader.pending_failure() {
            keep_error(&mut errors, report);
        }
    }
    let succeeded = stopped.is_none() && finish == Some(Finish::Success);
    let mut items = effects.items();
    let outcome = conclude(
        stopped,
        succeeded,
        errors,
        &mut items,
        &mut stdout_tail,
        &mut stderr_tail,
    );
    End {
        outcome,
        record: Record {
            phase,
            items,
            stderr: stderr_tail.lines(),
            stdout: stdout_tail.lines(),
            // The runner stops the server itself; its exit says something
            // only when it went first.
            exit: exited
                .filter(|_| !succeeded && stopped.is_none())
                .map(|s| process::exit_item(&s)),
        },
    }
}
