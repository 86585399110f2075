//! `kandev-recovery run`'s command line (the server's binary parses it).

use clap::Args;

/// `kandev-recovery run` options.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// The service to report to.
    #[arg(long, env = "KANDEV_SERVER", default_value = "http://127.0.0.1:3000")]
    pub server: String,

    /// The dynamic profile, by id or name.
    #[arg(long)]
    pub profile: String,

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

    /// The prompt, after `--`.
    #[arg(last = true, value_name = "PROMPT")]
    pub prompt: Vec<String>,
}

fn parse_caller(s: &str) -> Result<domain::route::CallerKind, String> {
    domain::route::CallerKind::parse(s)
        .ok_or_else(|| format!("`{s}` is not a caller; use kanban, workflow, utility or office"))
}
