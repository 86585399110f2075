//! `format = "acp"`: the runner as an Agent Client Protocol client over the
//! agent's stdio, on the `agent-client-protocol` crate: `initialize`,
//! `session/new`, `session/prompt`, and `session/cancel` on Ctrl-C.
//!
//! `session/update` notifications are shown as they come; message chunks
//! and tool calls are effects and are kept, in order, as `acp_update`
//! items, so the evidence shows what happened before an error. A JSON-RPC
//! error answer becomes an `acp_error` item, a stop reason other than
//! `end_turn` an `acp_stop` item. Permission requests are answered from
//! the configuration (deny unless allowed): the runner has no person to ask.

use super::attempt::{
    start, Context, Effects, End, Outcome, Progress, TAIL_BYTES, TAIL_LINES, TAIL_LINE_BYTES,
};
use super::config::Permissions;
use super::envelope::{stop_item, truncate, EffectKind, Phase, Record, Tail};
use super::process::{self, GRACE};
use agent_client_protocol::{self as acp, Agent as _};
use domain::evidence::{AcpErrorItem, AcpUpdateItem, Item};
use nix::sys::signal::Signal;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

/// Updates kept for the evidence; consecutive message chunks are merged.
const MAX_UPDATES: usize = 40;
/// Text kept of one merged message update.
const UPDATE_TEXT_BYTES: usize = 600;
/// After an agent exits, how long its last output is read.
const DRAIN: Duration = Duration::from_secs(3);
/// After a prompt's answer, how long late notifications are waited for.
const SETTLE: Duration = Duration::from_millis(100);

/// What the protocol handler passes to the attempt loop.
enum Event {
    Text(String),
    Thought,
    Tool {
        kind: EffectKind,
        title: Option<String>,
        status: Option<String>,
    },
    Permission {
        title: String,
        allowed: bool,
    },
}

/// Answers the agent's requests; everything it hears goes to the loop.
struct Handler {
    events: mpsc::UnboundedSender<Event>,
    permissions: Permissions,
    allow_tools: Vec<String>,
}

#[async_trait::async_trait(?Send)]
impl acp::Client for Handler {
    async fn request_permission(
        &self,
        args: acp::RequestPermissionRequest,
    ) -> acp::Result<acp::RequestPermissionResponse> {
        let kind = args
            .tool_call
            .fields
            .kind
            .as_ref()
            .and_then(|k| serde_json::to_value(k).ok())
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "other".into());
        let allowed = match self.permissions {
            Permissions::Deny => false,
            Permissions::AllowAll => true,
            Permissions::AllowListed => self.allow_tools.iter().any(|t| t == &kind),
        };
        let wanted = if allowed {
            [
                acp::PermissionOptionKind::AllowOnce,
                acp::PermissionOptionKind::AllowAlways,
            ]
        } else {
            [
                acp::PermissionOptionKind::RejectOnce,
                acp::PermissionOptionKind::RejectAlways,
            ]
        };
        let option = wanted
            .iter()
            .find_map(|w| args.options.iter().find(|o| &o.kind == w));
        let title = args
            .tool_call
            .fields
            .title
            .clone()
            .unwrap_or_else(|| kind.clone());
        let _ = self.events.send(Event::Permission {
            title,
            allowed: allowed && option.is_some(),
        });
        Ok(acp::RequestPermissionResponse::new(match option {
            Some(o) => acp::RequestPermissionOutcome::Selected(
                acp::SelectedPermissionOutcome::new(o.option_id.clone()),
            ),
            // No option says "reject": answer as if the turn was cancelled,
            // which the protocol requires agents to accept.
            None => acp::RequestPermissionOutcome::Cancelled,
        }))
    }

    async fn session_notification(&self, args: acp::SessionNotification) -> acp::Result<()> {
        let event = match args.update {
            acp::SessionUpdate::AgentMessageChunk(chunk) => match chunk.content {
                acp::ContentBlock::Text(t) => Event::Text(t.text),
                _ => Event::Text(String::new()),
            },
            acp::SessionUpdate::AgentThoughtChunk(_) => Event::Thought,
            acp::SessionUpdate::ToolCall(call) => Event::Tool {
                kind: EffectKind::ToolCall,
                title: Some(call.title),
                status: serde_json::to_value(call.status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string)),
            },
            acp::SessionUpdate::ToolCallUpdate(update) => Event::Tool {
                kind: EffectKind::ToolCallUpdate,
                title: update.fields.title,
                status: update
                    .fields
                    .status
                    .and_then(|s| serde_json::to_value(s).ok())
                    .and_then(|v| v.as_str().map(str::to_string)),
            },
            _ => return Ok(()),
        };
        let _ = self.events.send(event);
        Ok(())
    }
}

/// The ordered updates, merged and bounded.
struct Updates {
    items: Vec<Item>,
}

impl Updates {
    fn push(&mut self, update: EffectKind, text: Option<&str>, status: Option<String>) {
        if let (
            &EffectKind::AgentMessageChunk,
            Some(Item::AcpUpdate(AcpUpdateItem {
                update: last,
                text: Some(acc),
                ..
            })),
        ) = (&update, self.items.last_mut())
        {
            if last == EffectKind::AgentMessageChunk.as_str() {
                if acc.len() < UPDATE_TEXT_BYTES {
                    acc.push_str(text.unwrap_or(""));
                    *acc = truncate(acc, UPDATE_TEXT_BYTES);
                }
                return;
            }
        }
        if self.items.len() == MAX_UPDATES {
            // Keep the first half (how it began) and the latest.
            self.items.remove(MAX_UPDATES / 2);
        }
        self.items.push(Item::AcpUpdate(AcpUpdateItem {
            update: update.to_string(),
            text: text.map(|t| truncate(t, UPDATE_TEXT_BYTES)),
            status,
        }));
    }
}

/// Runs one ACP attempt.
pub async fn run(ctx: Context<'_>) -> End {
    // A `{prompt}` on an ACP command line is honoured too; the prompt also
    // goes over the protocol.
    let mut agent = match start(&ctx, Stdio::piped()) {
        Ok(agent) => agent,
        Err(end) => return *end,
    };
    let stdin = agent.child.stdin.take().expect("stdin is piped");
    let stdout = agent.child.stdout.take().expect("stdout is piped");
    let stderr = agent.child.stderr.take().expect("stderr is piped");
    let (err_tx, mut err_rx) = mpsc::unbounded_channel::<String>();
    let err_task = tokio::task::spawn_local(async move {
        let mut lines = BufReader::new(stderr).lines();
        while let Ok(Some(l)) = lines.next_line().await {
            if err_tx.send(l).is_err() {
                break;
            }
        }
    });

    let (events_tx, mut events) = mpsc::unbounded_channel();
    let handler = Handler {
        events: events_tx,
        permissions: ctx.agent.permissions,
        allow_tools: ctx.agent.allow_tools.clone(),
    };
    let (conn, io) =
        acp::ClientSideConnection::new(handler, stdin.compat_write(), stdout.compat(), |f| {
            tokio::task::spawn_local(f);
        });
    let mut io_task = tokio::task::spawn_local(io);

    let mut stderr_tail = Tail::new(TAIL_LINES, TAIL_LINE_BYTES, TAIL_BYTES);
    let mut updates = Updates { items: Vec::new() };
    let mut effects = Effects::default();
    let mut phase = Phase::SessionInit;
    let mut failure: Vec<Item> = Vec::new();
    let mut interrupted = false;
    let mut succeeded = false;
    let mut exited: Option<std::process::ExitStatus> = None;
    let mut session_id: Option<String> = None;
    let far = || Instant::now() + Duration::from_secs(86_400 * 365);
    let timeout_at = ctx
        .agent
        .timeout_seconds
        .map(|s| Instant::now() + Duration::from_secs(s));
    let mut timed_out = false;

    let cwd = ctx
        .cwd
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| std::path::PathBuf::from("."));
    // initialize + session/new: failures here are `session_init`.
    let mut setup = Box::pin(async {
        conn.initialize(
            acp::InitializeRequest::new(acp::ProtocolVersion::V1).client_info(
                acp::Implementation::new("kandev-recovery", env!("CARGO_PKG_VERSION")),
            ),
        )
        .await?;
        conn.new_session(acp::NewSessionRequest::new(cwd)).await
    });
    let session = loop {
        tokio::select! {
            r = &mut setup => break Some(r),
            Some(l) = err_rx.recv() => { ctx.ui.agent_stderr(&l); stderr_tail.push(&l); }
            _ = ctx.cancel.cancelled(), if !interrupted => { interrupted = true; break None; }
            _ = tokio::time::sleep_until(timeout_at.unwrap_or_else(far)), if timeout_at.is_some() => {
                timed_out = true;
                break None;
            }
            s = agent.child.wait() => {
                exited = s.ok();
                break None;
            }
        }
    };
    drop(setup);
    let _ = ctx.progress.send(Progress::Delivered);
    match session {
        Some(Ok(s)) => {
            let id = s.session_id.clone();
            session_id = Some(id.to_string());
            phase = Phase::Prompt;
            let prompt = conn.prompt(acp::PromptRequest::new(id.clone(), vec![ctx.prompt.into()]));
            tokio::pin!(prompt);
            let mut cancel_sent: Option<Instant> = None;
            loop {
                tokio::select! {
                    r = &mut prompt => {
                        match r {
                            Ok(response) => {
                                let ended = response.stop_reason == acp::StopReason::EndTurn;
                                if ended && !interrupted && !timed_out {
                                    succeeded = true;
                                } else if !interrupted {
                                    // The envelope carries the protocol's own name for it.
                                    let stop_reason = serde_json::to_value(response.stop_reason)
                                        .ok()
                                        .and_then(|v| v.as_str().map(str::to_string))
                                        .unwrap_or_else(|| "unknown".into());
                                    failure.push(stop_item(&stop_reason));
                                }
                            }
                            Err(e) => failure.push(acp_error(&e)),
                        }
                        break;
                    }
                    Some(event) = events.recv() => {
                        if let Event::Text(_) | Event::Tool { .. } = &event {
                            phase = Phase::Stream;
                        }
                        show(&ctx, event, &mut updates, &mut effects, session_id.clone());
                    }
                    Some(l) = err_rx.recv() => { ctx.ui.agent_stderr(&l); stderr_tail.push(&l); }
                    _ = ctx.cancel.cancelled(), if !interrupted && !timed_out => {
                        interrupted = true;
                        let _ = conn.cancel(acp::CancelNotification::new(id.clone())).await;
                        cancel_sent = Some(Instant::now() + GRACE);
                    }
                    _ = tokio::time::sleep_until(timeout_at.unwrap_or_else(far)), if timeout_at.is_some() && !interrupted && !timed_out => {
                        timed_out = true;
                        ctx.ui.status("the agent ran past its timeout; stopping it");
                        let _ = conn.cancel(acp::CancelNotification::new(id.clone())).await;
                        cancel_sent = Some(Instant::now() + GRACE);
                    }
                    _ = tokio::time::sleep_until(cancel_sent.unwrap_or_else(far)), if cancel_sent.is_some() => break,
                    s = agent.child.wait() => {
                        exited = s.ok();
                        failure.push(Item::AcpError(AcpErrorItem {
                            code: None,
                            message: Some("the agent exited during the prompt".into()),
                            data: None,
                        }));
                        break;
                    }
                }
            }
        }
        Some(Err(e)) => failure.push(acp_error(&e)),
        None => {}
    }
    // Read what the agent said before it went: an agent that exits right
    // after its last update leaves it in the pipe, and each notification
    // is handled on its own task. Until stdout ends (the agent gone) or a
    // short while (an agent that stays up between prompts).
    let drain_until = Instant::now() + if exited.is_some() { DRAIN } else { SETTLE };
    let _ = tokio::time::timeout_at(drain_until, &mut io_task).await;
    for _ in 0..32 {
        tokio::task::yield_now().await;
    }
    while let Ok(event) = events.try_recv() {
        show(&ctx, event, &mut updates, &mut effects, session_id.clone());
    }
    drop(conn);
    io_task.abort();
    if exited.is_none() {
        agent.signal(Signal::SIGTERM);
        if tokio::time::timeout(GRACE, agent.child.wait())
            .await
            .is_err()
        {
            agent.signal(Signal::SIGKILL);
        }
    }
    drop(agent);
    // The group is gone, so stderr ends: read it to the end.
    let _ = tokio::time::timeout(DRAIN, async {
        while let Some(l) = err_rx.recv().await {
            stderr_tail.push(&l);
        }
    })
    .await;
    err_task.abort();
    if succeeded {
        ctx.ui.assistant("\n");
    }
    if interrupted {
        // Only the interruption: the agent's earlier notices would compete
        // with it in the classifier.
        failure.clear();
        stderr_tail = Tail::new(TAIL_LINES, TAIL_LINE_BYTES, TAIL_BYTES);
        stderr_tail.push(
            "kandev-recovery: the run was interrupted by the user (Ctrl-C, SIGTERM, SIGHUP or SIGQUIT)",
        );
        failure.push(stop_item("cancelled"));
    }
    if timed_out {
        stderr_tail.push(&format!(
            "kandev-recovery: the agent ran longer than its configured timeout ({} s) and was stopped",
            ctx.agent.timeout_seconds.unwrap_or(0)
        ));
    }
    let mut items = updates.items;
    items.extend(failure);
    End {
        outcome: if interrupted {
            Outcome::Interrupted
        } else if succeeded {
            Outcome::Succeeded
        } else {
            Outcome::Failed
        },
        record: Record {
            phase,
            items,
            stderr: stderr_tail.lines(),
            stdout: Vec::new(),
            // The runner ends an ACP agent itself; its exit says something
            // only when the agent went first.
            exit: exited
                .filter(|_| !succeeded && !interrupted)
                .map(|s| process::exit_item(&s)),
        },
    }
}

fn show(
    ctx: &Context<'_>,
    event: Event,
    updates: &mut Updates,
    effects: &mut Effects,
    session: Option<String>,
) {
    match event {
        Event::Text(t) => {
            if !t.is_empty() {
                ctx.ui.assistant(&t);
            }
            updates.push(EffectKind::AgentMessageChunk, Some(&t), None);
            effects.saw(EffectKind::AgentMessageChunk, session, &ctx.progress);
        }
        Event::Thought => {}
        Event::Tool {
            kind,
            title,
            status,
        } => {
            if kind == EffectKind::ToolCall {
                ctx.ui.status(&format!(
                    "tool: {}",
                    title.as_deref().unwrap_or("(untitled)")
                ));
            }
            updates.push(kind.clone(), None, status);
            effects.saw(kind, session, &ctx.progress);
        }
        Event::Permission { title, allowed } => ctx.ui.status(&format!(
            "permission {} for {title}",
            if allowed { "granted" } else { "refused" }
        )),
    }
}

fn acp_error(e: &acp::Error) -> Item {
    Item::AcpError(AcpErrorItem {
        code: Some(i64::from(i32::from(e.code))),
        message: Some(e.message.clone()),
        data: e.data.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_merge_text_and_stay_bounded() {
        let mut u = Updates { items: Vec::new() };
        u.push(EffectKind::AgentMessageChunk, Some("Hel"), None);
        u.push(EffectKind::AgentMessageChunk, Some("lo"), None);
        u.push(EffectKind::ToolCall, None, Some("pending".into()));
        assert_eq!(u.items.len(), 2);
        assert!(
            matches!(&u.items[0], Item::AcpUpdate(AcpUpdateItem { text: Some(t), .. }) if t == "Hello")
        );
        for _ in 0..100 {
            u.push(EffectKind::ToolCallUpdate, None, None);
        }
        assert_eq!(u.items.len(), MAX_UPDATES);
        assert!(
            matches!(&u.items[0], Item::AcpUpdate(AcpUpdateItem { update, .. }) if update == "agent_message_chunk")
        );
    }
}
