//! `kandev-recovery run`'s command line (the server's binary parses it).

use clap::Args;

/// `kandev-recovery run` options.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The service to report to.
    #[arg(long, env = "KANDEV_SERVER", default_value = "http://127.0.0.1:3000")]
    pub server: String,

    /// The dynamic profile, by id or name: the route's candidates run in
    /// its order, and the service decides and times every recovery.
    #[arg(long, required_unless_present = "agent", conflicts_with = "agent")]
    pub profile: Option<String>,

    /// Concrete mode: run the agent of the configuration's `[agents.NAME]`
    /// table alone, with no profile and no route. Each failure is classified
    /// and decided by the service under the concrete policy the flags below
    /// set; the runner waits and retries itself, and stops with the reason.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["route", "caller", "reference"])]
    pub agent: Option<String>,

    /// Who is calling: kanban, workflow, utility (the default) or office.
    #[arg(long, value_parser = parse_caller, value_name = "KIND")]
    pub caller: Option<domain::route::CallerKind>,

    /// The caller's own reference for the route (a task id, a step name).
    #[arg(long = "ref", value_name = "REF")]
    pub reference: Option<String>,

    /// Attach to an existing route instead of opening one (a restarted
    /// runner picks up its wait where it was).
    #[arg(long, value_name = "ID")]
    pub route: Option<String>,

    /// The runner configuration (TOML) [default: kandev-runner.toml in the
    /// working directory].
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,

    /// An API token for the service.
    #[arg(long, env = "KANDEV_TOKEN", hide_env_values = true)]
    pub token: Option<String>,

    /// Also show the agent's own stderr as it comes.
    #[arg(long, short)]
    pub verbose: bool,

    /// Print each evidence envelope (one JSON line on stderr) before it is
    /// reported: what the classifier sees, for a new catalogue fixture.
    #[arg(long)]
    pub show_evidence: bool,

    #[command(flatten)]
    pub concrete: ConcreteFlags,

    /// The prompt, after `--`.
    #[arg(last = true, value_name = "PROMPT")]
    pub prompt: Vec<String>,
}

/// The concrete policy of `run --agent`, in the policy document's words
/// (docs/concrete.md lists the defaults). Durations read `90s`, `5m`,
/// `6h`, `1d`, `1h30m`, or plain seconds.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Concrete mode (--agent)")]
pub struct ConcreteFlags {
    // (`requires = "agent"` is not enforced across a flatten: the runner
    // refuses these without --agent itself.)
    /// Transient errors (overloaded, rate limited, network): retries after
    /// the failed attempt, 0–10; 0 turns retrying off [default: 3].
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,

    /// Transient errors: the delay before the first retry, 1s–1h; each
    /// later delay doubles [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub initial_interval: Option<String>,

    /// Both classes: the longest trusted reset to wait for (a usage limit
    /// that says when it resets), up to 7d; 0 or `off` never waits
    /// [default: 6h]. A reset further away stops the run.
    #[arg(long, value_name = "DURATION")]
    pub wait_for_reset: Option<String>,
}

impl ConcreteFlags {
    /// The flags given, by name (to refuse them without --agent).
    pub fn given(&self) -> Vec<&'static str> {
        [
            (self.max_retries.is_some(), "--max-retries"),
            (self.initial_interval.is_some(), "--initial-interval"),
            (self.wait_for_reset.is_some(), "--wait-for-reset"),
        ]
        .into_iter()
        .filter_map(|(given, name)| given.then_some(name))
        .collect()
    }
}

fn parse_caller(s: &str) -> Result<domain::route::CallerKind, String> {
    domain::route::CallerKind::parse(s)
        .ok_or_else(|| format!("`{s}` is not a caller; use kanban, workflow, utility or office"))
}
