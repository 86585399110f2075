//! `kandev-recovery`: bootstrap only. Parses the command line, sets up
//! logging and hands over to the library.

use clap::Parser;
use server::config::{CatalogueCommand, Cli, Command, ServeArgs};
use std::process::ExitCode;

/// See `server/Cargo.toml`: the classifier's many small allocations.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli
        .command
        .unwrap_or(Command::Serve(ServeArgs::parse_from_env()))
    {
        Command::Serve(args) => serve(args),
        Command::Classify { explain } => classify::cli::run_classify(explain),
        Command::Catalogue {
            command: CatalogueCommand::Check { dir, verbose },
        } => classify::cli::run_catalogue_check(dir.as_deref(), verbose),
        Command::Catalogue {
            command:
                CatalogueCommand::Score {
                    files,
                    catalogue,
                    gate,
                    verbose,
                },
        } => classify::cli::run_catalogue_score(&files, catalogue.as_deref(), gate, verbose),
        Command::Catalogue {
            command:
                command @ (CatalogueCommand::FixtureFromUnknown { .. }
                | CatalogueCommand::ReclassifyUnknown { .. }),
        } => server::operator::run_catalogue(command),
        Command::Run(args) => runner::run(args),
        Command::Routes { command } => server::operator::run_routes(command),
        Command::Circuits { command } => server::operator::run_circuits(command),
        Command::Token { command } => server::auth::cli::run_token(command),
        Command::User { command } => server::auth::cli::run_user(command),
        Command::Webhooks { command } => server::webhooks::cli::run(command),
        Command::Demo(args) => serve(args.into()),
        Command::Bench(args) => server::bench::run(args),
    }
}

fn serve(mut args: ServeArgs) -> ExitCode {
    server::telemetry::init();
    if args.demo {
        // The simulated agents are API clients like any other: they get a
        // token of their own, which the server stores before it listens.
        let token = server::auth::secret::generate(server::auth::secret::TOKEN_PREFIX);
        args.demo_token = Some(token.clone());
        server::demo::spawn(args.listen, token);
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(server::http::serve(args, server::http::shutdown_signal())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = format!("{e:#}"), "server stopped");
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
