//! One attempt of a command-line agent: launch it ([`super::process`]),
//! stream its assistant text to the user as it arrives, tell the runner
//! when the prompt is delivered and when the first effect happens, keep
//! bounded tails of its output, and say how it ended. The reading of its
//! output is the format's ([`super::format`]); this is the I/O around it.

use super::config::{argv, AgentConfig, Format};
use super::envelope::{effect_item, exit_item, stop_item, EffectKind, Phase, Record, Tail};
use super::format::{reader, Finish, Seen};
use super::process::{self, ActiveAgent, GRACE};
use super::ui::Ui;
use domain::evidence::Item;
use nix::sys::signal::Signal;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Lines kept of each stream for the evidence.
pub const TAIL_LINES: usize = 40;
/// Bytes kept of each tail line.
pub const TAIL_LINE_BYTES: usize = 2048;
/// Bytes kept of each tail: two tails and the structured items stay well
/// inside the service's smallest sensible body limit.
pub const TAIL_BYTES: usize = 12 * 1024;
/// A longer stdout line is not parsed: in a JSON format it counts as
/// output the runner could not read, which fails closed (an effect).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;
/// Lines in flight from the pipes (with [`MAX_LINE_BYTES`], the memory
/// bound of a reader).
pub(crate) const LINE_QUEUE: usize = 16;
/// Structured errors kept per attempt.
pub(crate) const MAX_ERRORS: usize = 4;
/// After the agent exits, how long output still in its pipes is read (a
/// grandchild may hold them open).
const DRAIN: Duration = Duration::from_secs(2);

/// What the attempt tells the runner while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    /// The prompt reached the agent (acknowledge the dispatch now).
    Delivered,
    /// The first effect of this attempt.
    Effect(EffectKind, Option<String>),
}

/// How the attempt ended.
#[derive(Debug, Clone, PartialEq)]
pub struct End {
    pub outcome: Outcome,
    /// Everything the envelope needs if this was a failure.
    pub record: Record,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed,
    /// Stopped by Ctrl-C, SIGTERM, SIGHUP or SIGQUIT.
    Interrupted,
}

/// Everything one attempt needs.
pub struct Context<'a> {
    pub prompt: &'a str,
    pub agent: &'a AgentConfig,
    pub cwd: Option<PathBuf>,
    pub progress: mpsc::UnboundedSender<Progress>,
    pub cancel: CancellationToken,
    pub ui: &'a Ui,
    pub active: &'a ActiveAgent,
}

/// Tracks effects so only the first of each attempt is reported.
#[derive(Default)]
pub struct Effects {
    reported: bool,
    seen: Vec<EffectKind>,
}

impl Effects {
    pub fn saw(
        &mut self,
        kind: EffectKind,
        session: Option<String>,
        tx: &mpsc::UnboundedSender<Progress>,
    ) {
        if !self.seen.contains(&kind) {
            self.seen.push(kind.clone());
        }
        if !self.reported {
            self.reported = true;
            let _ = tx.send(Progress::Effect(kind, session));
        }
    }

    pub fn any(&self) -> bool {
        !self.seen.is_empty()
    }

    pub fn items(&self) -> Vec<Item> {
        self.seen.iter().map(|k| effect_item(k.clone())).collect()
    }
}

/// Why the runner stopped an attempt itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stopped {
    Interrupted,
    TimedOut(u64),
}

/// Runs a command-line agent once.
pub async fn run(ctx: Context<'_>) -> End {
    let mut agent = match start(&ctx, Stdio::null()) {
        Ok(agent) => agent,
        Err(end) => return *end,
    };
    let _ = ctx.progress.send(Progress::Delivered);
    let stdout = agent.child.stdout.take().expect("stdout is piped");
    let stderr = agent.child.stderr.take().expect("stderr is piped");

    let (lines_tx, mut lines_rx) = mpsc::channel::<(Stream, Line)>(LINE_QUEUE);
    let out_task = tokio::spawn(read_lines(stdout, Stream::Stdout, lines_tx.clone()));
    let err_task = tokio::spawn(read_lines(stderr, Stream::Stderr, lines_tx));

    let mut reader = reader(ctx.agent.format);
    let mut stdout_tail = Tail::new(TAIL_LINES, TAIL_LINE_BYTES, TAIL_BYTES);
    let mut stderr_tail = Tail::new(TAIL_LINES, TAIL_LINE_BYTES, TAIL_BYTES);
    let mut effects = Effects::default();
    let mut errors: Vec<Item> = Vec::new();
    let mut finish: Option<Finish> = None;
    let mut session: Option<String> = None;
    let mut stopped: Option<Stopped> = None;
    let mut status: Option<std::io::Result<std::process::ExitStatus>> = None;
    let mut pipes_open = true;
    let far = || Instant::now() + Duration::from_secs(86_400 * 365);
    // Optional: a user's limit on how long the agent may run.
    let timeout_at = ctx
        .agent
        .timeout_seconds
        .map(|s| Instant::now() + Duration::from_secs(s));
    // After SIGTERM: when to SIGKILL. After the exit: until when to read.
    let mut kill_at: Option<Instant> = None;
    let mut drain_until: Option<Instant> = None;

    while pipes_open || status.is_none() {
        tokio::select! {
            line = lines_rx.recv(), if pipes_open => {
                let Some((stream, line)) = line else {
                    pipes_open = false;
                    continue;
                };
                match (stream, line) {
                    (Stream::Stderr, Line::Text(l)) => {
                        ctx.ui.agent_stderr(&l);
                        stderr_tail.push(&l);
                    }
                    (Stream::Stderr, Line::TooLong(prefix)) => stderr_tail.push(&prefix),
                    (Stream::Stdout, Line::TooLong(prefix)) => {
                        stdout_tail.push(&prefix);
                        if ctx.agent.format != Format::Plain {
                            ctx.ui.status("the agent printed a line too long to read; treating it as output");
                        }
                        effects.saw(EffectKind::AgentMessageChunk, session.clone(), &ctx.progress);
                    }
                    (Stream::Stdout, Line::Text(l)) => {
                        let read = reader.stdout_line(&l);
                        if read.keep {
                            stdout_tail.push(&l);
                        }
                        for seen in read.seen {
                            match seen {
                                Seen::Text(t) => {
                                    ctx.ui.assistant(&t);
                                    effects.saw(EffectKind::AgentMessageChunk, session.clone(), &ctx.progress);
                                }
                                Seen::Tool(name) => {
                                    ctx.ui.status(&format!("tool: {name}"));
                                    effects.saw(EffectKind::ToolCall, session.clone(), &ctx.progress);
                                }
                                Seen::Unreadable => {
                                    ctx.ui.status("the agent printed a line that could not be read; treating it as output");
                                    effects.saw(EffectKind::AgentMessageChunk, session.clone(), &ctx.progress);
                                }
                                Seen::Notice(n) => ctx.ui.status(&n),
                                Seen::Error(e) => {
                                    let item = e.to_item();
                                    // A CLI repeats its final error in its
                                    // result; once is evidence enough.
                                    if errors.last() != Some(&item) {
                                        // The latest errors say most; a CLI that
                                        // retried on its own may print dozens.
                                        if errors.len() == MAX_ERRORS {
                                            errors.remove(0);
                                        }
                                        errors.push(item);
                                    }
                                }
                                Seen::Session(s) => session = Some(s),
                                Seen::Finished(f) => finish = Some(f),
                            }
                        }
                    }
                }
            }
            s = agent.child.wait(), if status.is_none() => {
                status = Some(s);
                drain_until = Some(Instant::now() + DRAIN);
            }
            _ = ctx.cancel.cancelled(), if stopped.is_none() => {
                stopped = Some(Stopped::Interrupted);
                agent.signal(Signal::SIGTERM);
                kill_at = Some(Instant::now() + GRACE);
            }
            _ = tokio::time::sleep_until(timeout_at.unwrap_or_else(far)), if timeout_at.is_some() && stopped.is_none() && status.is_none() => {
                stopped = Some(Stopped::TimedOut(ctx.agent.timeout_seconds.unwrap_or(0)));
                ctx.ui.status("the agent ran past its timeout; stopping it");
                agent.signal(Signal::SIGTERM);
                kill_at = Some(Instant::now() + GRACE);
            }
            _ = tokio::time::sleep_until(kill_at.unwrap_or_else(far)), if kill_at.is_some() && status.is_none() => {
                kill_at = None;
                agent.signal(Signal::SIGKILL);
            }
            _ = tokio::time::sleep_until(drain_until.unwrap_or_else(far)), if drain_until.is_some() && pipes_open => {
                break;
            }
        }
    }
    out_task.abort();
    err_task.abort();
    drop(agent);
    if ctx.agent.format == Format::CodexJson && finish == Some(Finish::Failure) && stopped.is_none()
    {
        // Codex printed its failure as prose; its session file has it as
        // data (the error's kind, the exhausted window's reset). That
        // replaces the prose item of the same `turn.failed`.
        if let Some(report) = session
            .as_deref()
            .and_then(|id| super::codex_session::failure(&ctx.agent.env, ctx.cwd.as_deref(), id))
        {
            errors.pop();
            errors.push(report.to_item());
        }
    }
    let exit = status.and_then(Result::ok).map(|s| process::exit_item(&s));
    let succeeded = stopped.is_none()
        && exit == Some(exit_item(Some(0), None))
        && finish != Some(Finish::Failure)
        && (finish == Some(Finish::Success) || ctx.agent.format == Format::Plain);
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
            phase: if effects.any() {
                Phase::Stream
            } else {
                Phase::Prompt
            },
            items,
            stderr: stderr_tail.lines(),
            stdout: stdout_tail.lines(),
            exit,
        },
    }
}

/// The outcome of an attempt that ran, and what its record keeps: when the
/// user stopped it, only that (the agent's earlier notices would compete
/// with it in the classifier); when the runner's timeout stopped it, that
/// beside the agent's errors; else the agent's errors, if it failed.
pub(crate) fn conclude(
    stopped: Option<Stopped>,
    succeeded: bool,
    errors: Vec<Item>,
    items: &mut Vec<Item>,
    stdout_tail: &mut Tail,
    stderr_tail: &mut Tail,
) -> Outcome {
    match stopped {
        Some(Stopped::Interrupted) => {
            *stdout_tail = Tail::new(TAIL_LINES, TAIL_LINE_BYTES, TAIL_BYTES);
            *stderr_tail = Tail::new(TAIL_LINES, TAIL_LINE_BYTES, TAIL_BYTES);
            stderr_tail.push(
                "kandev-recovery: the run was interrupted by the user (Ctrl-C, SIGTERM, SIGHUP or SIGQUIT)",
            );
            items.push(stop_item("cancelled"));
            Outcome::Interrupted
        }
        Some(Stopped::TimedOut(seconds)) => {
            stderr_tail.push(&format!(
                "kandev-recovery: the agent ran longer than its configured timeout ({seconds} s) and was stopped"
            ));
            items.extend(errors);
            Outcome::Failed
        }
        None => {
            items.extend(errors);
            if succeeded {
                Outcome::Succeeded
            } else {
                Outcome::Failed
            }
        }
    }
}

/// The candidate has no usable configuration (the profile changed while
/// the runner ran): nothing was started.
pub fn not_configured(message: &str) -> End {
    End {
        outcome: Outcome::Failed,
        record: Record {
            phase: Phase::Launch,
            items: Vec::new(),
            stderr: vec![format!("kandev-recovery: {message}")],
            stdout: Vec::new(),
            exit: None,
        },
    }
}

/// Starts the agent's process with its command line (the prompt put in
/// where the agent's configuration asks). If it cannot start, the prompt
/// never left: nothing was delivered, but the dispatch is settled by the
/// launch failure this answers, so it is reported settled here. A started
/// agent's caller says when the prompt is delivered (at once on a command
/// line, after the handshake over a protocol).
pub(crate) fn start(ctx: &Context<'_>, stdin: Stdio) -> Result<process::AgentProcess, Box<End>> {
    let args = argv(ctx.agent, ctx.prompt);
    process::spawn(ctx.agent, &args, ctx.cwd.as_deref(), stdin, ctx.active).map_err(|e| {
        let _ = ctx.progress.send(Progress::Delivered);
        Box::new(launch_failure(&args[0], &e, ctx.ui))
    })
}

/// The agent's executable could not be started (missing, not executable).
fn launch_failure(program: &str, e: &std::io::Error, ui: &Ui) -> End {
    let line = if e.kind() == std::io::ErrorKind::NotFound {
        format!("{program}: command not found ({e})")
    } else {
        format!("cannot start {program}: {e}")
    };
    ui.status(&line);
    End {
        outcome: Outcome::Failed,
        record: Record {
            phase: Phase::Launch,
            items: Vec::new(),
            stderr: vec![format!("kandev-recovery: {line}")],
            stdout: Vec::new(),
            exit: Some(process::launch_failure_exit(e)),
        },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

#[derive(Debug)]
pub(crate) enum Line {
    Text(String),
    /// Longer than [`MAX_LINE_BYTES`]: its first bytes only.
    TooLong(String),
}

/// Splits a stream into lines of at most [`MAX_LINE_BYTES`]; the rest of a
/// longer line is read and dropped, so memory stays bounded whatever the
/// agent prints.
pub(crate) async fn read_lines(
    mut r: impl AsyncRead + Unpin,
    stream: Stream,
    tx: mpsc::Sender<(Stream, Line)>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut line: Vec<u8> = Vec::new();
    let mut overflow = false;
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut rest = &buf[..n];
        while let Some(i) = memchr::memchr(b'\n', rest) {
            keep(&mut line, &mut overflow, &rest[..i]);
            let done = std::mem::take(&mut line);
            let item = finish_line(done, std::mem::take(&mut overflow));
            if tx.send((stream, item)).await.is_err() {
                return;
            }
            rest = &rest[i + 1..];
        }
        keep(&mut line, &mut overflow, rest);
    }
    if !line.is_empty() || overflow {
        let _ = tx.send((stream, finish_line(line, overflow))).await;
    }
}

/// Adds `bytes` to the line being read, up to the bound.
fn keep(line: &mut Vec<u8>, overflow: &mut bool, bytes: &[u8]) {
    if *overflow {
        return;
    }
    let room = MAX_LINE_BYTES.saturating_sub(line.len());
    if bytes.len() > room {
        line.extend_from_slice(&bytes[..room]);
        *overflow = true;
    } else {
        line.extend_from_slice(bytes);
    }
}

fn finish_line(bytes: Vec<u8>, overflow: bool) -> Line {
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim_end_matches('\r');
    if overflow {
        Line::TooLong(super::envelope::truncate(text, TAIL_LINE_BYTES))
    } else {
        Line::Text(text.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(input: Vec<u8>) -> Vec<Line> {
        let (tx, mut rx) = mpsc::channel(16);
        let reader = tokio::spawn(read_lines(std::io::Cursor::new(input), Stream::Stdout, tx));
        let mut out = Vec::new();
        while let Some((_, l)) = rx.recv().await {
            out.push(l);
        }
        reader.await.expect("reader");
        out
    }

    #[tokio::test]
    async fn lines_are_split_and_bounded() {
        let mut input = b"one\r\ntwo\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 10));
        input.extend(b"\nlast");
        let lines = lines_of(input).await;
        assert_eq!(lines.len(), 4);
        assert!(matches!(&lines[0], Line::Text(t) if t == "one"));
        assert!(matches!(&lines[1], Line::Text(t) if t == "two"));
        assert!(
            matches!(&lines[2], Line::TooLong(t) if t.len() <= TAIL_LINE_BYTES + 3),
            "{:?}",
            lines
                .iter()
                .map(|l| match l {
                    Line::Text(t) => format!("text {}", t.len()),
                    Line::TooLong(t) => format!("long {}", t.len()),
                })
                .collect::<Vec<_>>()
        );
        assert!(matches!(&lines[3], Line::Text(t) if t == "last"));
    }
}
