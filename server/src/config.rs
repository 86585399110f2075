//! Command-line and environment configuration: one clap struct per
//! subcommand, every option also readable from the environment.

use clap::builder::BoolishValueParser;
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;

/// Provider Error Recovery: classifies AI agent failures and recovers from
/// them durably (retry, wait for reset, skip to the next candidate, stop).
#[derive(Debug, Parser)]
#[command(name = "kandev-recovery", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the web app and the REST API (the default when no subcommand is given).
    Serve(ServeArgs),
    /// Classify evidence envelopes: JSONL on stdin (an envelope per line, or
    /// an object whose `evidence` field is one), one classification per line
    /// on stdout, in the same order.
    Classify {
        /// Add an `explain` object to each classification: the rules that
        /// matched in each tier, the one that decided, where its evidence
        /// came from, what provenance set aside, the timing source.
        #[arg(long)]
        explain: bool,
    },
    /// Work with the error catalogue.
    Catalogue {
        #[command(subcommand)]
        command: CatalogueCommand,
    },
    /// Run a prompt with a real agent CLI, recovering through the service.
    ///
    /// With --profile: a route for the dynamic profile. The current
    /// candidate's command runs, its failures are reported, and the runner
    /// follows the service's decision (wait and retry, switch to the next
    /// candidate's command, or stop for a person); the service keeps the
    /// timers.
    ///
    /// With --agent NAME: a concrete session on the configuration's
    /// [agents.NAME] alone, with no profile and no route. The service
    /// classifies each failure and decides under the concrete policy
    /// (defaults: transient errors retried 3 times after 5 s, 10 s, 20 s;
    /// a trusted reset up to 6 h away waited for; otherwise stop); the
    /// runner waits itself and never repeats a prompt after output or tool
    /// use.
    ///
    /// Exit codes: 0 succeeded; 2 bad usage or configuration (nothing ran);
    /// 3 the route or session stopped (the reason is printed); 4 the service
    /// could not be reached or refused a report; 130 interrupted.
    #[command(
        after_help = "Examples:\n  kandev-recovery run --profile \"Claude then Codex\" -- \"fix the failing test\"\n  kandev-recovery run --agent claude --wait-for-reset 6h --max-retries 5 -- \"fix the failing test\"\n\nThe configuration file has one [agents.<name>] table per agent (a profile's candidates name theirs by profile_ref); see docs/adapters.md (\"The runner configuration\") and docs/concrete.md (\"The runner's concrete mode\")."
    )]
    Run(runner::RunArgs),
    /// Serve the app with demo profiles and simulated agents.
    ///
    /// The simulated agents loop through the recovery scenarios (capacity
    /// retries, a quota reset wait, a switch, an unknown error, tool
    /// activity), on the demo's own SQLite file. Open /routes to watch
    /// routes recover live. No network is used.
    Demo(DemoArgs),
    /// Routes on a running server: list (by reference, state, profile),
    /// show one with its attempts, act on one (retry, skip, cancel, stop,
    /// complete, cancel_route). Needs a token (`--token` or KANDEV_TOKEN).
    ///
    /// Exit codes: 0 done; 2 bad usage; 4 the server could not be reached
    /// or refused the request.
    Routes {
        #[command(subcommand)]
        command: crate::operator::RoutesCommand,
    },
    /// Shared circuits on a running server (`list`). Needs a token.
    Circuits {
        #[command(subcommand)]
        command: crate::operator::CircuitsCommand,
    },
    /// Manage API tokens (for adapters, the runner and scripts).
    ///
    /// A token's secret is printed once, when it is created; only its
    /// SHA-256 digest is stored. Send it as `Authorization: Bearer <token>`.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Manage people who sign in in the browser.
    User {
        #[command(subcommand)]
        command: UserCommand,
    },
    /// Manage webhooks on a running server (an administrator's token):
    /// list, add, remove, and a subscription's delivery log.
    Webhooks {
        #[command(subcommand)]
        command: crate::webhooks::cli::WebhooksCommand,
    },
    /// Measure this machine: the database's raw commit ceiling, the
    /// classifier, committed decisions through the HTTP API, timer
    /// lateness, restart reconciliation, event fan-out, memory and the web
    /// app. Progress goes to stderr; the figures to stdout.
    ///
    /// Without --database-url it works on a temporary SQLite file that it
    /// creates and removes. With a PostgreSQL URL it creates its own
    /// scratch databases (`bench_…`) on that server and drops them at the
    /// end: the database the URL names is never written.
    Bench(BenchArgs),
}

/// `kandev-recovery bench` options.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Smaller sizes (finishes in under a minute): for CI, to keep the
    /// command working, not for figures.
    #[arg(long)]
    pub quick: bool,

    /// Print the figures as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,

    /// A PostgreSQL server to measure (`postgres://user@host:5432/db`):
    /// its scratch databases are created from this URL's server and
    /// dropped afterwards. Deliberately not read from DATABASE_URL.
    #[arg(long, value_name = "URL")]
    pub database_url: Option<String>,

    /// Directory holding the built site, for the WASM bundle's size.
    #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
    pub site_root: String,

    /// How durable the SQLite scratch files' commits are, as a server's
    /// `?synchronous=` would have them (`full` is the server's default).
    #[arg(long, value_enum, value_name = "MODE", default_value = "full")]
    pub sqlite_synchronous: crate::store::Synchronous,

    /// Measure only these (comma-separated; all when not given).
    /// `decisions` also measures the ceiling it is compared with.
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PART")]
    pub only: Vec<BenchPart>,

    /// Simulated days of the long run with pruning on (`retention`;
    /// default 30, 3 with `--quick`).
    #[arg(long, value_name = "N")]
    pub days: Option<usize>,
}

/// One measurement of `kandev-recovery bench` (see `--only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchPart {
    /// The engine's raw single-row commit ceiling.
    Ceiling,
    /// Classifier throughput and latency on one core.
    Classifier,
    /// Committed decisions through the HTTP API at 1, 8 and 64 clients.
    Decisions,
    /// Event fan-out to many subscribers.
    Sse,
    /// The WASM bundle's size and a profile page's render time.
    Web,
    /// Timer lateness, restart reconciliation and peak memory.
    Timers,
    /// A long run with pruning on: database size and decisions a second,
    /// day after simulated day.
    Retention,
}

impl BenchArgs {
    /// Whether this run measures `part`.
    pub fn measures(&self, part: BenchPart) -> bool {
        self.only.is_empty()
            || self.only.contains(&part)
            || (part == BenchPart::Ceiling && self.only.contains(&BenchPart::Decisions))
    }
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// List people: name, id, permissions, enabled or disabled, live sessions.
    List {
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// Disable a person: their sessions end at once, and they cannot sign
    /// in until enabled again.
    Disable {
        /// Their name or id.
        #[arg(value_name = "NAME|ID")]
        user: String,
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// Enable a disabled person (they sign in with a new link: `user add`
    /// does not apply; ask for one with `user link`).
    Enable {
        #[arg(value_name = "NAME|ID")]
        user: String,
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// Remove a person and end their sessions at once.
    Remove {
        #[arg(value_name = "NAME|ID")]
        user: String,
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// Give a person more permissions.
    Grant {
        #[arg(value_name = "NAME|ID")]
        user: String,
        /// Comma-separated permissions to add.
        #[arg(long, value_parser = parse_permissions, value_name = "LIST")]
        permissions: crate::auth::Permissions,
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// Take permissions away from a person (from their next request on).
    Revoke {
        #[arg(value_name = "NAME|ID")]
        user: String,
        /// Comma-separated permissions to take away.
        #[arg(long, value_parser = parse_permissions, value_name = "LIST")]
        permissions: crate::auth::Permissions,
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// Print a new one-time sign-in link for an existing person.
    Link {
        #[arg(value_name = "NAME|ID")]
        user: String,
        /// The address people open the app at.
        #[arg(
            long,
            env = "KANDEV_PUBLIC_URL",
            default_value = "http://127.0.0.1:3000"
        )]
        url: String,
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// Add a person and print their one-time sign-in link (alone, on the
    /// last line).
    Add {
        /// Their name, shown in the app; unique.
        name: String,
        /// Comma-separated permissions, as for `token create`.
        #[arg(long, value_parser = parse_permissions, value_name = "LIST")]
        permissions: crate::auth::Permissions,
        /// The address people open the app at.
        #[arg(
            long,
            env = "KANDEV_PUBLIC_URL",
            default_value = "http://127.0.0.1:3000"
        )]
        url: String,
        #[command(flatten)]
        database: DatabaseArg,
    },
}

/// Where the access commands find the database.
#[derive(Debug, Clone, Args)]
pub struct DatabaseArg {
    /// Database URL, as for `serve`.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://data/kandev-recovery.db"
    )]
    pub database_url: String,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Create a token and print it once (alone, on the last line).
    Create {
        /// A name to recognise (and revoke) it by; unique among live tokens.
        #[arg(long)]
        name: String,
        /// Comma-separated permissions: profiles:manage, profiles:select,
        /// routes:act, evidence:submit, office:assign, catalogue:read, routes:any, admin.
        #[arg(long, value_parser = parse_permissions, value_name = "LIST")]
        permissions: crate::auth::Permissions,
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// List tokens (never their secrets).
    List {
        #[command(flatten)]
        database: DatabaseArg,
    },
    /// Revoke a live token by name or id; it stops working at once.
    Revoke {
        /// The token's name or id.
        #[arg(value_name = "NAME|ID")]
        token: String,
        #[command(flatten)]
        database: DatabaseArg,
    },
}

fn parse_permissions(s: &str) -> Result<crate::auth::Permissions, String> {
    crate::auth::Permissions::parse_list(s)
}

/// `kandev-recovery demo` options.
#[derive(Debug, Clone, Args)]
pub struct DemoArgs {
    /// Address to listen on.
    #[arg(long, env = "KANDEV_LISTEN", default_value = "127.0.0.1:3000")]
    pub listen: SocketAddr,

    /// The demo's database (kept apart from the real one).
    #[arg(
        long,
        env = "KANDEV_DEMO_DATABASE_URL",
        default_value = "sqlite://data/kandev-demo.db"
    )]
    pub database_url: String,

    /// Directory holding the built site (WASM, JS, CSS).
    #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
    pub site_root: String,
}

impl From<DemoArgs> for ServeArgs {
    fn from(d: DemoArgs) -> ServeArgs {
        ServeArgs {
            listen: d.listen,
            database_url: d.database_url,
            site_root: d.site_root,
            no_seed: true,
            demo: true,
            ..ServeArgs::default()
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum CatalogueCommand {
    /// Validate a catalogue and run its fixtures: the directory DIR (laid
    /// out like the repository's catalogue/: catalogue.toml, rules/*.toml,
    /// fixtures/*.json), or the embedded catalogue without one. Exit 1 on
    /// any problem, each named with its file, entry and field.
    Check {
        /// A catalogue directory (default: the embedded catalogue).
        #[arg(value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
        /// List every fixture, not only failures.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Score the classifier against labelled corpora (the shared corpus
    /// format), with figures per family (one per file): exact answers,
    /// false recoveries, timing and leaks.
    Score {
        /// Corpus files (JSONL, one labelled case per line). Without any,
        /// every `*.jsonl` in `catalogue/corpus/`, then each recorded round
        /// in `catalogue/rounds/` against its floor in `rounds/floors.toml`
        /// (with --catalogue DIR: DIR's own `corpus/` and `rounds/`).
        files: Vec<std::path::PathBuf>,
        /// Score the catalogue directory DIR (laid out like the
        /// repository's catalogue/) instead of the embedded one: rules
        /// edited there are scored without a rebuild.
        #[arg(long, value_name = "DIR")]
        catalogue: Option<std::path::PathBuf>,
        /// Exit 1 below the gate: 98 % exact, no false recovery, 95 % of
        /// timing right, no leak (a recorded round: below its floor).
        #[arg(long)]
        gate: bool,
        /// List every miss with its rule and excerpt.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Write a fixture skeleton, ready to label, from an entry of a
    /// server's unknown log (its sanitised skeleton; the expected code and
    /// rule say LABEL-ME until a person fills them in).
    FixtureFromUnknown {
        #[command(flatten)]
        remote: crate::operator::Remote,
        /// The entry's id (`catalogue reclassify-unknown --json`, the
        /// Catalogue page or `GET /api/v1/catalogue/unknown`).
        id: String,
        /// Write the fixture file here instead of to stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// How many of a server's logged unknowns a catalogue would now
    /// classify, and as what: the server's catalogue in force, or a
    /// candidate directory with --catalogue (classified here, from the
    /// entries' skeletons).
    ReclassifyUnknown {
        #[command(flatten)]
        remote: crate::operator::Remote,
        /// A candidate catalogue directory to try instead of the server's.
        #[arg(long, value_name = "DIR")]
        catalogue: Option<std::path::PathBuf>,
    },
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "KANDEV_LISTEN", default_value = "127.0.0.1:3000")]
    pub listen: SocketAddr,

    /// Database URL: `sqlite://path/to/file.db` or `postgres://user@host/db`.
    /// Defaults to an SQLite file under ./data/, created on first start.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://data/kandev-recovery.db"
    )]
    pub database_url: String,

    /// Directory holding the built site (WASM, JS, CSS), as `cargo xtask
    /// site` writes it.
    #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
    pub site_root: String,

    /// A catalogue directory to classify with, laid out like the
    /// repository's catalogue/ (catalogue.toml, rules/*.toml): loaded and
    /// validated at start (the server refuses to start with a broken one),
    /// read again on SIGHUP or `POST /api/v1/catalogue/reload`. Without
    /// it, the catalogue embedded in the binary.
    #[arg(long, env = "KANDEV_CATALOGUE", value_name = "DIR")]
    pub catalogue: Option<std::path::PathBuf>,

    /// Do not create the example profile on first start.
    #[arg(long, env = "KANDEV_NO_SEED", value_parser = BoolishValueParser::new())]
    pub no_seed: bool,

    /// Largest accepted request body, in bytes.
    #[arg(long, env = "KANDEV_MAX_BODY_BYTES", default_value_t = 256 * 1024)]
    pub max_body_bytes: usize,

    /// Seconds a client has to send a request's headers, from the moment
    /// its connection opens (or, on a kept-alive connection, from the
    /// request's first byte); slower connections are closed.
    #[arg(long, env = "KANDEV_HEADER_TIMEOUT_SECONDS", default_value_t = 10,
        value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout_seconds: u64,

    /// Seconds a request body has to arrive whole once the server reads
    /// it; a slower one answers 400 and its connection is closed.
    #[arg(long, env = "KANDEV_BODY_TIMEOUT_SECONDS", default_value_t = 30,
        value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub body_timeout_seconds: u64,

    /// Seconds a kept-alive connection may sit with no request in flight
    /// and no bytes either way before it is closed. Longer than HTTP
    /// clients keep idle connections pooled (reqwest: 90 s), so a client
    /// is not handed a connection the server is closing that instant.
    #[arg(long, env = "KANDEV_IDLE_TIMEOUT_SECONDS", default_value_t = 120,
        value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub idle_timeout_seconds: u64,

    /// Connections served at once; more wait in the kernel's accept queue
    /// until one closes. Event streams and long polls each hold one.
    #[arg(long, env = "KANDEV_MAX_CONNECTIONS", default_value_t = 1024,
        value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,

    /// Enable `POST /api/v1/test/clock` to move time forward. For tests only:
    /// never enable it in production.
    #[arg(long, env = "KANDEV_TEST_CLOCK", value_parser = BoolishValueParser::new())]
    pub test_clock: bool,

    /// Also run the demo's simulated agents (see `kandev-recovery demo`).
    #[arg(long, env = "KANDEV_DEMO", value_parser = BoolishValueParser::new())]
    pub demo: bool,

    /// Accept every request without credentials. For local development
    /// only: warns at start, and is refused with a non-loopback --listen.
    #[arg(long, env = "KANDEV_NO_AUTH", value_parser = BoolishValueParser::new())]
    pub no_auth: bool,

    /// Evidence reports (failures, effects, successes, dispatch claims and
    /// acknowledgements) each token or person may send per minute, in
    /// bursts of up to as many; more answer 429 with `retry-after`. 0: no
    /// limit.
    #[arg(long, env = "KANDEV_EVIDENCE_PER_MINUTE", default_value_t = 1200)]
    pub evidence_per_minute: u32,

    /// Routes each token (or person) may open per minute, in bursts of up
    /// to as many; more answer 429 with `retry-after`. 0: no limit.
    #[arg(long, env = "KANDEV_ROUTES_PER_MINUTE", default_value_t = 600)]
    pub routes_per_minute: u32,

    /// How long (seconds) a switch, or a new route, waits for a candidate a
    /// shared circuit holds when every remaining candidate is held; a
    /// longer hold stops the route for a person (`all_candidates_held`).
    #[arg(long, env = "KANDEV_MAX_HOLD_WAIT", default_value_t = crate::routes::service::RouteSettings::DEFAULT_MAX_HOLD_WAIT_SECONDS)]
    pub max_hold_wait: u64,

    /// A dispatch nobody claims within this many seconds stops its route
    /// for a person (`dispatch_not_claimed`). 0: never.
    #[arg(long, env = "KANDEV_DISPATCH_TIMEOUT", default_value_t = crate::routes::service::RouteSettings::DEFAULT_DISPATCH_TIMEOUT_SECONDS)]
    pub dispatch_timeout: u64,

    /// Ended routes (completed, cancelled) are deleted with their
    /// attempts, events and dispatches this many days after their last
    /// change, in small batches in the background. 0: keep them for ever.
    #[arg(long, env = "KANDEV_RETAIN_DAYS", default_value_t = crate::retention::Retention::DEFAULT_RETAIN_DAYS)]
    pub retain_days: u32,

    /// Audit entries are deleted this many days after they were written,
    /// in small batches in the background. 0: keep them for ever.
    #[arg(long, env = "KANDEV_AUDIT_RETAIN_DAYS", default_value_t = crate::retention::Retention::DEFAULT_AUDIT_RETAIN_DAYS)]
    pub audit_retain_days: u32,

    /// Let webhooks deliver to loopback and private addresses (a receiver
    /// on this host or the local network). Off by default: a webhook URL
    /// could otherwise reach services that are not meant to be reachable
    /// from outside (server-side request forgery).
    #[arg(long, env = "KANDEV_ALLOW_PRIVATE_WEBHOOKS", value_parser = BoolishValueParser::new())]
    pub allow_private_webhooks: bool,

    /// The demo's simulated agents' token (made by `demo` before the server
    /// starts; never read from the command line).
    #[arg(skip)]
    pub demo_token: Option<String>,
}

impl ServeArgs {
    /// `serve` options from the environment and defaults alone, for a bare
    /// `kandev-recovery` (which is what `cargo leptos watch` runs).
    pub fn parse_from_env() -> Self {
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            args: ServeArgs,
        }
        Only::parse_from(["kandev-recovery"]).args
    }
}

impl Default for ServeArgs {
    fn default() -> Self {
        ServeArgs {
            listen: "127.0.0.1:3000".parse().expect("valid default address"),
            database_url: "sqlite://data/kandev-recovery.db".into(),
            site_root: "target/site".into(),
            catalogue: None,
            no_seed: false,
            max_body_bytes: 256 * 1024,
            header_timeout_seconds: 10,
            body_timeout_seconds: 30,
            idle_timeout_seconds: 120,
            max_connections: 1024,
            test_clock: false,
            demo: false,
            no_auth: false,
            evidence_per_minute: 1200,
            routes_per_minute: 600,
            max_hold_wait: crate::routes::service::RouteSettings::DEFAULT_MAX_HOLD_WAIT_SECONDS,
            dispatch_timeout:
                crate::routes::service::RouteSettings::DEFAULT_DISPATCH_TIMEOUT_SECONDS,
            retain_days: crate::retention::Retention::DEFAULT_RETAIN_DAYS,
            audit_retain_days: crate::retention::Retention::DEFAULT_AUDIT_RETAIN_DAYS,
            allow_private_webhooks: false,
            demo_token: None,
        }
    }
}
