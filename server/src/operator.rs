//! The operator's command line against a running server, with a token:
//! `kandev-recovery routes list|show|act`, `circuits
//! list|release|probe` and `catalogue
//! fixture-from-unknown|reclassify-unknown`. A thin client of the HTTP
//! API (the same requests the web app sends), printing
//! a table or, with `--json`, the API's own answer.
//!
//! Exit codes: 0 done; 2 bad usage; 4 the server could not be reached or
//! refused the request (its message is printed).

use clap::{Args, Subcommand};
use domain::api::{ActionRequest, EndRequest};
use domain::circuit::{CircuitList, CircuitRequest, CircuitView};
use domain::error::ApiError;
use domain::ids::Generation;
use domain::route::{Action, Attempt, RouteSnapshot};
use std::fmt::Write;
use std::process::ExitCode;

/// Where the server is and how to sign in to it.
#[derive(Debug, Clone, Args)]
pub struct Remote {
    /// The service's address.
    #[arg(long, env = "KANDEV_SERVER", default_value = "http://127.0.0.1:3000")]
    pub server: String,
    /// An API token (`kandev-recovery token create`); reading needs any
    /// token, `act` needs `routes:act`.
    #[arg(long, env = "KANDEV_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Print the API's JSON answer instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Subcommand)]
pub enum RoutesCommand {
    /// List routes, newest first (a page; `--after` the last id for the next).
    List {
        #[command(flatten)]
        remote: Remote,
        /// Only routes whose caller reference is exactly this.
        #[arg(long = "ref")]
        caller_ref: Option<String>,
        /// Only routes in this state (e.g. `action_required`).
        #[arg(long)]
        state: Option<String>,
        /// Only routes of this profile id.
        #[arg(long)]
        profile: Option<String>,
        /// The routes after this route id.
        #[arg(long)]
        after: Option<String>,
        /// At most this many (1 to 1000).
        #[arg(long, default_value_t = 100)]
        limit: i64,
    },
    /// One route and its attempts, newest first.
    Show {
        #[command(flatten)]
        remote: Remote,
        /// The route's id.
        id: String,
    },
    /// Act on a route: `retry_now`, `skip_now`, `cancel` (a wait), `stop`,
    /// or end it: `complete`, `cancel_route`.
    #[command(
        after_help = "Fenced like every transition: without --generation the route's current generation \
                      is read first, so the action applies to the route as this command saw it (409 if it \
                      moved on meanwhile)."
    )]
    Act {
        #[command(flatten)]
        remote: Remote,
        /// The route's id.
        id: String,
        /// retry_now | skip_now | cancel | stop | complete | cancel_route
        action: String,
        /// The generation the action is for (default: the route's now).
        #[arg(long)]
        generation: Option<i64>,
    },
}

#[derive(Debug, Clone, Subcommand)]
pub enum CircuitsCommand {
    /// Every shared circuit: scope, resource, state, until, routes waiting.
    List {
        #[command(flatten)]
        remote: Remote,
    },
    /// Release a circuit now (admin): it closes and the routes waiting for
    /// it go, a few at a time. Audited.
    Release {
        #[command(flatten)]
        remote: Remote,
        /// The circuit as `circuits list` names it: SCOPE:RESOURCE
        /// (`account:anthropic/team-a`).
        id: String,
    },
    /// Make a circuit probe now (admin): it expires, and the next route to
    /// go is its one probe. Audited.
    Probe {
        #[command(flatten)]
        remote: Remote,
        /// The circuit as `circuits list` names it: SCOPE:RESOURCE.
        id: String,
    },
}

/// Why a command failed, and its exit code.
struct Failure(u8, String);

type Outcome = Result<String, Failure>;

fn usage(m: impl Into<String>) -> Failure {
    Failure(2, m.into())
}

struct Client {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

/// The HTTP client of the commands that talk to a server: bounded, so a
/// server that accepts and never answers fails the command ("cannot reach
/// …: operation timed out", exit 4) instead of holding the operator's
/// terminal (or a script) for ever. Every answer they wait for takes
/// milliseconds; nothing they call long-polls.
pub(crate) fn http_client() -> reqwest::Client {
    reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(120))
        .build()
        .unwrap_or_default()
}

impl Client {
    fn new(remote: &Remote) -> Client {
        Client {
            http: http_client(),
            base: remote.server.trim_end_matches('/').to_string(),
            token: remote.token.clone(),
        }
    }

    /// The answer's body as text, or the server's message.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<String, Failure> {
        let mut req = self
            .http
            .request(method, format!("{}/api/v1{path}", self.base));
        if let Some(t) = &self.token {
            req = req.bearer_auth(t);
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req
            .send()
            .await
            .map_err(|e| Failure(4, format!("cannot reach {}: {e}", self.base)))?;
        let status = resp.status();
        let text = resp
            .text()
            .await
            .map_err(|e| Failure(4, format!("the answer did not arrive: {e}")))?;
        if status.is_success() {
            return Ok(text);
        }
        let message = serde_json::from_str::<ApiError>(&text)
            .map(|e| e.message)
            .unwrap_or(text);
        Err(Failure(
            4,
            format!("the server answered {status}: {message}"),
        ))
    }

    async fn get<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
    ) -> Result<(T, String), Failure> {
        let text = self.call(reqwest::Method::GET, path, None).await?;
        let value = serde_json::from_str(&text)
            .map_err(|e| Failure(4, format!("the answer is not what this command reads: {e}")))?;
        Ok((value, text))
    }
}

/// `kandev-recovery routes …`.
pub fn run_routes(command: RoutesCommand) -> ExitCode {
    finish(block_on(routes(command)))
}

/// `kandev-recovery circuits …`.
pub fn run_circuits(command: CircuitsCommand) -> ExitCode {
    finish(block_on(circuits(command)))
}

/// `kandev-recovery catalogue fixture-from-unknown|reclassify-unknown`.
pub fn run_catalogue(command: crate::config::CatalogueCommand) -> ExitCode {
    finish(block_on(catalogue(command)))
}

fn block_on(work: impl std::future::Future<Output = Outcome>) -> Outcome {
    tokio::runtime::Runtime::new()
        .map_err(|e| Failure(4, format!("cannot start the async runtime: {e}")))?
        .block_on(work)
}

fn finish(outcome: Outcome) -> ExitCode {
    match outcome {
        Ok(out) => {
            print!("{out}");
            ExitCode::SUCCESS
        }
        Err(Failure(code, message)) => {
            eprintln!("error: {message}");
            ExitCode::from(code)
        }
    }
}

/// `s` as one URL path segment or query value: unreserved bytes as they
/// are, every other byte percent-encoded.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

async fn routes(command: RoutesCommand) -> Outcome {
    match command {
        RoutesCommand::List {
            remote,
            caller_ref,
            state,
            profile,
            after,
            limit,
        } => {
            let mut query = vec![format!("limit={limit}")];
            for (name, value) in [
                ("caller_ref", caller_ref),
                ("state", state),
                ("profile_id", profile),
                ("after", after),
            ] {
                if let Some(v) = value {
                    query.push(format!("{name}={}", encode(&v)));
                }
            }
            let client = Client::new(&remote);
            let (list, text): (Vec<RouteSnapshot>, _) =
                client.get(&format!("/routes?{}", query.join("&"))).await?;
            Ok(if remote.json {
                json_line(text)
            } else {
                route_table(&list)
            })
        }
        RoutesCommand::Show { remote, id } => {
            let client = Client::new(&remote);
            let (route, text): (RouteSnapshot, _) =
                client.get(&format!("/routes/{}", encode(&id))).await?;
            let (attempts, attempts_text): (Vec<Attempt>, _) = client
                .get(&format!("/routes/{}/attempts?limit=20", encode(&id)))
                .await?;
            if remote.json {
                return Ok(json_line(format!(
                    "{{\"route\":{text},\"attempts\":{attempts_text}}}"
                )));
            }
            Ok(route_details(&route, &attempts))
        }
        RoutesCommand::Act {
            remote,
            id,
            action,
            generation,
        } => {
            let client = Client::new(&remote);
            let generation = match generation {
                Some(g) => Generation(g),
                None => {
                    let (route, _): (RouteSnapshot, _) =
                        client.get(&format!("/routes/{}", encode(&id))).await?;
                    route.generation
                }
            };
            let (path, body) = match action.as_str() {
                "complete" | "cancel_route" => {
                    let verb = if action == "complete" {
                        "complete"
                    } else {
                        "cancel"
                    };
                    let body = EndRequest {
                        expected_generation: generation,
                    };
                    (
                        verb,
                        serde_json::to_value(body).expect("requests serialise"),
                    )
                }
                other => {
                    let action = Action::parse(other).ok_or_else(|| {
                        usage(format!(
                            "`{other}` is not an action: retry_now, skip_now, cancel, stop, complete or cancel_route"
                        ))
                    })?;
                    let body = ActionRequest {
                        action,
                        expected_generation: generation,
                    };
                    (
                        "actions",
                        serde_json::to_value(body).expect("requests serialise"),
                    )
                }
            };
            let text = client
                .call(
                    reqwest::Method::POST,
                    &format!("/routes/{}/{path}", encode(&id)),
                    Some(body),
                )
                .await?;
            if remote.json {
                return Ok(json_line(text));
            }
            let route: RouteSnapshot = serde_json::from_str(&text)
                .map_err(|e| Failure(4, format!("the answer is not a route: {e}")))?;
            Ok(format!(
                "{} is {} (generation {})\n",
                route.id, route.state, route.generation
            ))
        }
    }
}

async fn circuits(command: CircuitsCommand) -> Outcome {
    let (remote, id, path) = match command {
        CircuitsCommand::List { remote } => return circuit_list(remote).await,
        CircuitsCommand::Release { remote, id } => (remote, id, "/circuits/release"),
        CircuitsCommand::Probe { remote, id } => (remote, id, "/circuits/probe"),
    };
    let request = CircuitRequest::parse_key(&id).ok_or_else(|| {
        usage(format!(
            "`{id}` does not name a circuit: SCOPE:RESOURCE, the scope one of provider, account, \
             model or profile (as `kandev-recovery circuits list` shows them)"
        ))
    })?;
    let client = Client::new(&remote);
    let text = client
        .call(
            reqwest::Method::POST,
            path,
            Some(serde_json::to_value(&request).expect("requests serialise")),
        )
        .await?;
    if remote.json {
        return Ok(json_line(text));
    }
    let c: CircuitView = serde_json::from_str(&text)
        .map_err(|e| Failure(4, format!("the answer is not a circuit: {e}")))?;
    Ok(format!(
        "{}:{} is {} ({} route{} still waiting)\n",
        c.scope,
        c.resource,
        c.state,
        c.routes_waiting,
        if c.routes_waiting == 1 { "" } else { "s" }
    ))
}

async fn circuit_list(remote: Remote) -> Outcome {
    let client = Client::new(&remote);
    let (list, text): (CircuitList, _) = client.get("/circuits").await?;
    if remote.json {
        return Ok(json_line(text));
    }
    let rows = list
        .circuits
        .iter()
        .map(|c| {
            vec![
                c.scope.to_string(),
                c.resource.clone(),
                c.state.to_string(),
                c.until.map(|t| t.to_rfc3339()).unwrap_or_default(),
                c.routes_waiting.to_string(),
                c.code.clone(),
            ]
        })
        .collect::<Vec<_>>();
    Ok(table(
        &["SCOPE", "RESOURCE", "STATE", "UNTIL", "WAITING", "CODE"],
        &rows,
    ))
}

async fn catalogue(command: crate::config::CatalogueCommand) -> Outcome {
    use crate::config::CatalogueCommand;
    use domain::catalogue::{UnknownDetail, UnknownReclassification};
    match command {
        CatalogueCommand::FixtureFromUnknown { remote, id, out } => {
            let client = Client::new(&remote);
            let (detail, _): (UnknownDetail, _) = client
                .get(&format!("/catalogue/unknown/{}", encode(&id)))
                .await?;
            let skeleton = detail.skeleton.ok_or_else(|| {
                Failure(
                    4,
                    format!(
                        "entry {id} was logged before skeletons were kept; wait for its next sighting"
                    ),
                )
            })?;
            let fixture = classify::skeleton::fixture(&detail.entry, &skeleton);
            let text = serde_json::to_string_pretty(&fixture).expect("JSON serialises") + "\n";
            match out {
                None => Ok(text),
                Some(path) => {
                    std::fs::write(&path, text)
                        .map_err(|e| Failure(4, format!("cannot write {}: {e}", path.display())))?;
                    Ok(format!(
                        "wrote {} (label expect.code and expect.rule, then run `kandev-recovery catalogue check DIR`)\n",
                        path.display()
                    ))
                }
            }
        }
        CatalogueCommand::ReclassifyUnknown { remote, catalogue } => {
            let client = Client::new(&remote);
            let (report, text) = match catalogue {
                // The server's catalogue in force, on the server.
                None => {
                    client
                        .get::<UnknownReclassification>("/catalogue/unknown/reclassify")
                        .await?
                }
                // A candidate directory, here, on the entries' skeletons.
                Some(dir) => {
                    let candidate = classify::CatalogueFiles::read(&dir)
                        .and_then(|f| f.compile())
                        .map_err(|e| usage(format!("{}: {e}", dir.display())))?;
                    let (log, _): (domain::catalogue::UnknownSnapshot, _) =
                        client.get("/catalogue/unknown").await?;
                    let mut entries = Vec::with_capacity(log.entries.len());
                    for e in log.entries {
                        let (detail, _): (UnknownDetail, _) = client
                            .get(&format!("/catalogue/unknown/{}", encode(&e.id)))
                            .await?;
                        entries.push((detail.entry, detail.skeleton));
                    }
                    let report = classify::skeleton::reclassify(&candidate, &entries);
                    let text = serde_json::to_string(&report).expect("JSON serialises");
                    (report, text)
                }
            };
            if remote.json {
                return Ok(json_line(text));
            }
            Ok(reclassification_table(&report))
        }
        CatalogueCommand::Check { .. } | CatalogueCommand::Score { .. } => {
            Err(usage("not a server command"))
        }
    }
}

fn reclassification_table(r: &domain::catalogue::UnknownReclassification) -> String {
    let mut out = format!(
        "catalogue {}: {} of {} logged unknowns now classified ({} sightings); {} still unknown ({} without a skeleton)\n",
        r.catalogue_version,
        r.classified,
        r.entries,
        r.classified_sightings,
        r.still_unknown,
        r.entries - r.with_skeleton,
    );
    if r.by_code.is_empty() {
        return out;
    }
    out.push('\n');
    let rows = r
        .by_code
        .iter()
        .map(|c| {
            vec![
                c.code.clone(),
                c.class.clone(),
                c.entries.to_string(),
                c.sightings.to_string(),
            ]
        })
        .collect::<Vec<_>>();
    out.push_str(&table(&["CODE", "CLASS", "ENTRIES", "SIGHTINGS"], &rows));
    out
}

fn json_line(mut text: String) -> String {
    text.push('\n');
    text
}

fn route_table(list: &[RouteSnapshot]) -> String {
    let rows = list
        .iter()
        .map(|r| {
            vec![
                r.id.to_string(),
                r.state.to_string(),
                r.caller.kind.to_string(),
                r.caller.reference.clone(),
                r.candidate.label.clone(),
                r.generation.to_string(),
                r.updated_at.to_rfc3339(),
            ]
        })
        .collect::<Vec<_>>();
    table(
        &[
            "ID",
            "STATE",
            "CALLER",
            "REF",
            "CANDIDATE",
            "GEN",
            "UPDATED",
        ],
        &rows,
    )
}

fn route_details(r: &RouteSnapshot, attempts: &[Attempt]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "route       {}", r.id);
    let _ = writeln!(out, "state       {}", r.state);
    let _ = writeln!(out, "caller      {} {}", r.caller.kind, r.caller.reference);
    let _ = writeln!(out, "profile     {}", r.profile_id);
    let _ = writeln!(out, "candidate   {}", r.candidate.label);
    let _ = writeln!(out, "generation  {}", r.generation);
    if let Some(reason) = &r.reason {
        let _ = writeln!(out, "reason      {reason}");
    }
    if let Some(p) = &r.pending {
        let _ = writeln!(
            out,
            "pending     {} until {}",
            p.kind,
            p.deadline.to_rfc3339()
        );
    }
    out.push('\n');
    let rows = attempts
        .iter()
        .map(|a| {
            vec![
                a.seq.to_string(),
                a.candidate.label.clone(),
                a.code.clone(),
                a.decision.to_string(),
                a.created_at.to_rfc3339(),
            ]
        })
        .collect::<Vec<_>>();
    out.push_str(&table(
        &["SEQ", "CANDIDATE", "CODE", "DECISION", "AT"],
        &rows,
    ));
    out
}

/// Columns padded to their widest cell.
fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let line = |out: &mut String, cells: Vec<&str>| {
        let padded: Vec<String> = cells
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        let _ = writeln!(out, "{}", padded.join("  ").trim_end());
    };
    line(&mut out, head.to_vec());
    for row in rows {
        line(&mut out, row.iter().map(String::as_str).collect());
    }
    out
}
