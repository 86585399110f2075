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
    Classify,
    /// Work with the error catalogue.
    Catalogue {
        #[command(subcommand)]
        command: CatalogueCommand,
    },
}

#[derive(Debug, Subcommand)]
pub enum CatalogueCommand {
    /// Validate the built-in catalogue and run its fixtures.
    Check {
        /// List every fixture, not only failures.
        #[arg(long, short)]
        verbose: bool,
    },
    /// Score the classifier against labelled corpora (the shared corpus
    /// format), with figures per family (one per file): exact answers,
    /// false recoveries, timing and leaks.
    Score {
        /// Corpus files (JSONL, one labelled case per line). Without any,
        /// every `*.jsonl` in `catalogue/corpus/`.
        files: Vec<std::path::PathBuf>,
        /// Exit 1 below the gate: 98 % exact, no false recovery, 95 % of
        /// timing right, no leak.
        #[arg(long)]
        gate: bool,
        /// List every miss with its rule and excerpt.
        #[arg(long, short)]
        verbose: bool,
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

    /// Directory holding the built site (WASM, JS, CSS), as cargo-leptos
    /// writes it.
    #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
    pub site_root: String,

    /// Do not create the example profile on first start.
    #[arg(long, env = "KANDEV_NO_SEED", value_parser = BoolishValueParser::new())]
    pub no_seed: bool,

    /// Largest accepted request body, in bytes.
    #[arg(long, env = "KANDEV_MAX_BODY_BYTES", default_value_t = 256 * 1024)]
    pub max_body_bytes: usize,

    /// Enable `POST /api/v1/test/clock` to move time forward. For tests only:
    /// never enable it in production.
    #[arg(long, env = "KANDEV_TEST_CLOCK", value_parser = BoolishValueParser::new())]
    pub test_clock: bool,
}

impl ServeArgs {
    /// `serve` options from the environment and defaults alone, for a bare
    /// `kandev-recovery` (which is what `cargo leptos serve` runs).
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
            no_seed: false,
            max_body_bytes: 256 * 1024,
            test_clock: false,
        }
    }
}
