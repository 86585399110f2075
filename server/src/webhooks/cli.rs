//! `kandev-recovery webhooks list|add|remove|deliveries`: the webhook API
//! from a terminal, against a running server with an administrator's
//! token. A table for people, or `--json` for scripts (the API's own
//! answer). Exit codes: 0 done; 1 the server refused (its message is
//! printed); 2 bad usage.

use clap::{Args, Subcommand};
use domain::webhook::{DeliveryLog, Webhook, WebhookEvent, WebhookWrite};
use std::process::ExitCode;

/// Where the server is and who is asking.
#[derive(Debug, Clone, Args)]
pub struct ServerArgs {
    /// The server's address.
    #[arg(long, env = "KANDEV_SERVER", default_value = "http://127.0.0.1:3000")]
    pub server: String,
    /// An API token with `admin` (`kandev-recovery token create`).
    #[arg(long, env = "KANDEV_TOKEN", hide_env_values = true)]
    pub token: String,
    /// Print the API's JSON answer instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Subcommand)]
pub enum WebhooksCommand {
    /// Every subscription: id, URL, events, pending and failed deliveries.
    List {
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Subscribe a URL to events.
    Add {
        /// The receiver (http or https).
        #[arg(long)]
        url: String,
        /// Comma-separated events: route.action_required, dispatch.due,
        /// route.completed, route.cancelled, circuit.opened, circuit.closed.
        #[arg(long, value_delimiter = ',', value_parser = parse_event, required = true)]
        events: Vec<WebhookEvent>,
        /// The signing secret (16 to 256 characters). Read from the
        /// environment, not the command line, so it stays out of shell
        /// history and the process list.
        #[arg(long, env = "KANDEV_WEBHOOK_SECRET", hide_env_values = true)]
        secret: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// Remove a subscription and its undelivered deliveries.
    Remove {
        /// The webhook's id (`webhooks list`).
        id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
    /// A subscription's delivery log, newest first.
    Deliveries {
        id: String,
        #[command(flatten)]
        server: ServerArgs,
    },
}

fn parse_event(s: &str) -> Result<WebhookEvent, String> {
    WebhookEvent::parse(s.trim()).ok_or_else(|| {
        let known: Vec<&str> = WebhookEvent::ALL.iter().map(|e| e.as_str()).collect();
        format!("unknown event `{s}`; known: {}", known.join(", "))
    })
}

pub fn run(command: WebhooksCommand) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(execute(command)) {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The command's output, or the message of why it failed.
async fn execute(command: WebhooksCommand) -> Result<String, String> {
    match command {
        WebhooksCommand::List { server } => {
            let (text, hooks): (String, Vec<Webhook>) =
                call(&server, reqwest::Method::GET, "/api/v1/webhooks", None).await?;
            Ok(if server.json { text } else { table(&hooks) })
        }
        WebhooksCommand::Add {
            url,
            events,
            secret,
            server,
        } => {
            let body = serde_json::to_value(WebhookWrite {
                url,
                events,
                secret,
            })
            .map_err(|e| e.to_string())?;
            let (text, hook): (String, Webhook) = call(
                &server,
                reqwest::Method::POST,
                "/api/v1/webhooks",
                Some(body),
            )
            .await?;
            Ok(if server.json {
                text
            } else {
                format!("Added webhook {} → {}\n", hook.id, hook.url)
            })
        }
        WebhooksCommand::Remove { id, server } => {
            let path = format!("/api/v1/webhooks/{id}");
            send(&server, reqwest::Method::DELETE, &path, None).await?;
            Ok(if server.json {
                format!("{{\"removed\":{}}}\n", serde_json::Value::from(id))
            } else {
                format!("Removed webhook {id}\n")
            })
        }
        WebhooksCommand::Deliveries { id, server } => {
            let path = format!("/api/v1/webhooks/{id}/deliveries");
            let (text, log): (String, DeliveryLog) =
                call(&server, reqwest::Method::GET, &path, None).await?;
            Ok(if server.json { text } else { log_table(&log) })
        }
    }
}

/// Sends a request; answers the body of a 2xx, or the server's message.
async fn send(
    server: &ServerArgs,
    method: reqwest::Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> Result<String, String> {
    let base = server.server.trim_end_matches('/');
    let mut req = crate::operator::http_client()
        .request(method, format!("{base}{path}"))
        .bearer_auth(&server.token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req
        .send()
        .await
        .map_err(|e| format!("cannot reach the server at {base}: {e}"))?;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    if status.is_success() {
        return Ok(text);
    }
    let why = serde_json::from_str::<domain::error::ApiError>(&text)
        .map(|e| {
            let fields: Vec<String> = e
                .errors
                .iter()
                .map(|f| format!("{}: {}", f.field, f.message))
                .collect();
            match fields.is_empty() {
                true => e.message,
                false => format!("{} ({})", e.message, fields.join("; ")),
            }
        })
        .unwrap_or(text);
    Err(format!("the server answered {status}: {why}"))
}

/// [`send`], with the answer read as `T` too.
async fn call<T: serde::de::DeserializeOwned>(
    server: &ServerArgs,
    method: reqwest::Method,
    path: &str,
    body: Option<serde_json::Value>,
) -> Result<(String, T), String> {
    let text = send(server, method, path, body).await?;
    let value = serde_json::from_str(&text)
        .map_err(|e| format!("the server's answer does not read: {e}"))?;
    Ok((format!("{text}\n"), value))
}

fn events(list: &[WebhookEvent]) -> String {
    list.iter()
        .map(|e| e.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The subscriptions as a table.
pub fn table(hooks: &[Webhook]) -> String {
    if hooks.is_empty() {
        return "No webhooks; add one with `kandev-recovery webhooks add`.\n".into();
    }
    let mut out = format!(
        "{:<35}  {:>7}  {:>6}  {:<40}  EVENTS\n",
        "ID", "PENDING", "FAILED", "URL"
    );
    for h in hooks {
        out += &format!(
            "{:<35}  {:>7}  {:>6}  {:<40}  {}\n",
            h.id,
            h.pending,
            h.failed,
            h.url,
            events(&h.events)
        );
    }
    out
}

/// A delivery log as a table.
pub fn log_table(log: &DeliveryLog) -> String {
    let mut out = format!("{} → {}\n", log.webhook.id, log.webhook.url);
    out += &format!(
        "{:<35}  {:<22}  {:<9}  {:>8}  {:>6}  LAST ERROR\n",
        "DELIVERY", "EVENT", "STATE", "ATTEMPTS", "STATUS"
    );
    for d in &log.deliveries {
        out += &format!(
            "{:<35}  {:<22}  {:<9}  {:>8}  {:>6}  {}\n",
            d.id,
            d.event.as_str(),
            d.state.as_str(),
            d.attempts,
            d.last_status.map_or("-".into(), |s| s.to_string()),
            d.last_error.as_deref().unwrap_or("")
        );
    }
    out
}
