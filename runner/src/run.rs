//! The run itself: open or attach to a route, then attempt, report and
//! follow the route until the prompt succeeds or stops.

use crate::args::RunArgs;
use crate::{acp, attempt, client, codex_app, concrete, config, process, session, ui};
use attempt::{End, Progress};
use client::{Service, ServiceError};
use config::{Format, RunnerConfig};
use domain::ids::RouteId;
use domain::policy::describe;
use domain::profile::{Candidate, Profile};
use domain::route::CallerKind;
use session::{Ending, Launcher, Session};
use std::path::PathBuf;
use std::process::ExitCode;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use ui::Ui;

/// The runner's exit codes (documented in docs/adapters.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Succeeded,
    Usage,
    Stopped,
    Service,
    Interrupted,
}

impl Exit {
    pub fn code(self) -> u8 {
        match self {
            Exit::Succeeded => 0,
            Exit::Usage => 2,
            Exit::Stopped => 3,
            Exit::Service => 4,
            Exit::Interrupted => 130,
        }
    }
}

/// Launches configured agents: a process per attempt, read by its format.
pub struct Configured {
    pub config: RunnerConfig,
    /// The agent running now, for a second Ctrl-C.
    pub active: process::ActiveAgent,
}

impl Launcher for Configured {
    async fn attempt(
        &self,
        candidate: &Candidate,
        prompt: &str,
        progress: mpsc::UnboundedSender<Progress>,
        cancel: CancellationToken,
        ui: &Ui,
    ) -> End {
        let agent = match self.config.agent(&candidate.profile_ref, &candidate.label) {
            Ok(a) => a,
            Err(e) => {
                let _ = progress.send(Progress::Delivered);
                return attempt::not_configured(&e.to_string());
            }
        };
        let cwd = self.config.working_dir(agent);
        let ctx = attempt::Context {
            prompt,
            agent,
            cwd,
            progress,
            cancel,
            ui,
            active: &self.active,
        };
        match agent.format {
            Format::Acp => acp::run(ctx).await,
            Format::CodexAppServer => codex_app::run(ctx).await,
            _ => attempt::run(ctx).await,
        }
    }
}

/// `kandev-recovery run …`, start to finish.
pub fn run(args: RunArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("kandev-recovery: cannot start the async runtime: {e}");
            return ExitCode::from(Exit::Service.code());
        }
    };
    // The ACP connection runs local (not `Send`) tasks.
    let local = tokio::task::LocalSet::new();
    let exit = local.block_on(&runtime, run_async(args));
    ExitCode::from(exit.code())
}

async fn run_async(args: RunArgs) -> Exit {
    let ui = Ui::new(args.verbose, args.show_evidence);
    let fail = |message: String, exit: Exit| {
        eprintln!("kandev-recovery: {message}");
        exit
    };
    let prompt = args.prompt.join(" ");
    if prompt.trim().is_empty() {
        return fail(
            "no prompt: give it after `--`, e.g. kandev-recovery run --profile P -- \"fix the tests\" \
             (or --agent NAME for one configured agent)"
                .into(),
            Exit::Usage,
        );
    }
    let path = args
        .config
        .clone()
        .unwrap_or_else(|| PathBuf::from(config::DEFAULT_FILE));
    let config = match RunnerConfig::load(&path) {
        Ok(c) => c,
        Err(e) => return fail(e.to_string(), Exit::Usage),
    };
    let service = match Service::new(&args.server, args.token.clone()) {
        Ok(s) => s,
        Err(e) => return fail(e.to_string(), Exit::Usage),
    };
    if let Some(name) = &args.agent {
        return run_concrete(&args, name, config, service, &prompt, &ui).await;
    }
    let given = args.concrete.given();
    if !given.is_empty() {
        return fail(
            format!(
                "{} set the concrete policy of --agent; a profile's candidates carry their own policies",
                given.join(", ")
            ),
            Exit::Usage,
        );
    }
    let Some(wanted) = args.profile.as_deref() else {
        return fail(
            "give a profile (--profile P) or one agent of the configuration (--agent NAME)".into(),
            Exit::Usage,
        );
    };
    let caller = args.caller.unwrap_or(CallerKind::Utility);
    let profile = match find_profile(&service, wanted).await {
        Ok(p) => p,
        Err(Opened::Usage(m)) => return fail(m, Exit::Usage),
        Err(Opened::Service(e)) => return fail(e.to_string(), Exit::Service),
    };
    // Every candidate must be runnable before anything runs or is opened.
    for c in &profile.candidates {
        if let Err(e) = config.runnable(&c.profile_ref, &c.label) {
            return fail(e.to_string(), Exit::Usage);
        }
    }
    let (route, attached) = match open(&service, &args, &profile, caller).await {
        Ok(v) => v,
        Err(Opened::Usage(m)) => return fail(m, Exit::Usage),
        Err(Opened::Service(e)) => return fail(e.to_string(), Exit::Service),
    };
    ui.status(&format!(
        "route {} for profile \"{}\" — {}",
        route.id,
        profile.name,
        service.route_page(&route.id)
    ));

    let cancel = CancellationToken::new();
    let active = process::ActiveAgent::default();
    tokio::task::spawn_local(interrupt_on_signal(cancel.clone(), active.clone()));
    let launcher = Configured { config, active };
    let mut session = Session {
        service: &service,
        profile,
        launcher: &launcher,
        ui: &ui,
        cancel,
        prompt: &prompt,
    };
    match session.follow(route, attached).await {
        Ending::Succeeded(_) => Exit::Succeeded,
        Ending::Stopped(_) => Exit::Stopped,
        Ending::Interrupted(_) => Exit::Interrupted,
        Ending::Refused(route, why) => {
            ui.status(&format!("{why}; see {}", service.route_page(&route.id)));
            Exit::Stopped
        }
        Ending::Service(e) => fail(e.to_string(), Exit::Service),
    }
}

/// `run --agent NAME`: one configured agent under the concrete policy.
async fn run_concrete(
    args: &RunArgs,
    name: &str,
    config: RunnerConfig,
    service: Service,
    prompt: &str,
    ui: &Ui,
) -> Exit {
    let fail = |message: String, exit: Exit| {
        eprintln!("kandev-recovery: {message}");
        exit
    };
    let agent = match config.runnable(name, name) {
        Ok(a) => a,
        Err(e) => return fail(e.to_string(), Exit::Usage),
    };
    let policy = match concrete::policy::concrete_policy(&args.concrete) {
        Ok(p) => p,
        Err(e) => return fail(e, Exit::Usage),
    };
    let (family, provider_id) = agent.identity();
    let candidate = Candidate {
        id: name.to_string(),
        label: name.to_string(),
        agent: family,
        provider_id,
        model_id: agent.model_id.clone().unwrap_or_default(),
        profile_ref: name.to_string(),
        account_ref: None,
        policy,
    };
    ui.status(&format!(
        "concrete session on {name}, no route: the service decides each failure, this runner keeps the time"
    ));
    ui.status(&format!(
        "transient errors: {}",
        describe(&policy.transient)
    ));
    ui.status(&format!("hard errors: {}", describe(&policy.hard)));
    let cancel = CancellationToken::new();
    let active = process::ActiveAgent::default();
    tokio::task::spawn_local(interrupt_on_signal(cancel.clone(), active.clone()));
    let launcher = Configured { config, active };
    let session = concrete::session::ConcreteSession {
        service: &service,
        launcher: &launcher,
        ui,
        cancel,
        prompt,
        candidate,
        policy,
    };
    match session.run().await {
        concrete::session::Ending::Succeeded => Exit::Succeeded,
        concrete::session::Ending::Stopped => Exit::Stopped,
        concrete::session::Ending::Interrupted => Exit::Interrupted,
        concrete::session::Ending::Service(e) => fail(e.to_string(), Exit::Service),
    }
}

enum Opened {
    Usage(String),
    Service(ServiceError),
}

impl From<ServiceError> for Opened {
    fn from(e: ServiceError) -> Self {
        Opened::Service(e)
    }
}

/// The profile, by id or name.
async fn find_profile(service: &Service, wanted: &str) -> Result<Profile, Opened> {
    let profiles = service.profiles().await?;
    let wanted = wanted.trim();
    let matching: Vec<&Profile> = profiles
        .iter()
        .filter(|p| p.id == *wanted || p.name == wanted)
        .collect();
    let profile = match matching.as_slice() {
        [one] => (*one).clone(),
        [] => {
            let known = profiles
                .iter()
                .map(|p| format!("{} (\"{}\")", p.id, p.name))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(Opened::Usage(format!(
                "no profile with id or name `{wanted}`; profiles: {}",
                if known.is_empty() {
                    "none".into()
                } else {
                    known
                }
            )));
        }
        _ => {
            return Err(Opened::Usage(format!(
                "several profiles are named `{wanted}`; give its id instead"
            )))
        }
    };
    if let Some(e) = &profile.configuration_error {
        return Err(Opened::Usage(format!(
            "profile \"{}\" cannot authorise work until it is repaired: {}",
            profile.name, e.message
        )));
    }
    Ok(profile)
}

/// The route: attached with `--route`, opened otherwise.
async fn open(
    service: &Service,
    args: &RunArgs,
    profile: &Profile,
    caller: CallerKind,
) -> Result<(domain::route::RouteSnapshot, bool), Opened> {
    match &args.route {
        Some(id) => {
            let route = service.route(&RouteId::from(id.as_str())).await?;
            if route.profile_id != profile.id {
                return Err(Opened::Usage(format!(
                    "route {id} belongs to profile {}, not {}",
                    route.profile_id, profile.id
                )));
            }
            Ok((route, true))
        }
        None => {
            let reference = args.reference.clone().unwrap_or_else(|| "cli".into());
            let route = service.open_route(&profile.id, caller, &reference).await?;
            Ok((route, false))
        }
    }
}

/// The first Ctrl-C, SIGTERM, SIGHUP (the terminal closed) or SIGQUIT
/// cancels the run: the agent is stopped, then the route. A second one
/// kills the agent's group and exits at once, whatever is in flight.
async fn interrupt_on_signal(cancel: CancellationToken, active: process::ActiveAgent) {
    use tokio::signal::unix::{signal, SignalKind};
    let kinds = [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
        SignalKind::quit(),
    ];
    let mut streams = Vec::new();
    for kind in kinds {
        match signal(kind) {
            Ok(s) => streams.push(s),
            Err(e) => eprintln!("kandev-recovery: cannot watch for signals: {e}"),
        }
    }
    if streams.is_empty() {
        return;
    }
    futures::future::select_all(streams.iter_mut().map(|s| Box::pin(s.recv()))).await;
    cancel.cancel();
    futures::future::select_all(streams.iter_mut().map(|s| Box::pin(s.recv()))).await;
    eprintln!("kandev-recovery: interrupted again; stopping now");
    active.kill();
    std::process::exit(i32::from(Exit::Interrupted.code()));
}
