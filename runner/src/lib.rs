//! `kandev-recovery run`: drives a real agent CLI through the service.
//!
//! The runner opens (or attaches to) a route for a dynamic profile, runs the
//! current candidate's command from its configuration file
//! ([`config`]), reads the agent's structured output ([`format`], or the
//! Agent Client Protocol in [`acp`]) to tell real work from the CLI's own
//! error notices, and reports what happened: effects as they occur, then a
//! success or an evidence envelope ([`envelope`]). It never decides: it
//! follows the route the service answers with ([`step`], [`session`]) —
//! waiting for the backend's dispatch with a live countdown ([`ui`]),
//! switching to the next candidate's command, or stopping for a person.
//!
//! With `--agent NAME` instead of a profile it runs a concrete session
//! ([`concrete`]): one configured agent, each failure decided by the
//! service under a concrete policy, the waits kept by the runner.
//!
//! Exit codes: 0 the prompt succeeded; 2 bad usage or configuration
//! (nothing ran); 3 the route stopped for a person; 4 the service could
//! not be reached or refused a report; 130 interrupted (Ctrl-C, SIGTERM,
//! SIGHUP, SIGQUIT; a second one exits at once).
//!
//! A library that sees only `domain` and the service's HTTP API. Without
//! the default `client` feature only the pure parts compile — the runner's
//! configuration, the envelope it builds and the output readers — which is
//! what the fuzz targets exercise.

#[cfg(feature = "client")]
pub mod acp;
#[cfg(feature = "client")]
pub mod args;
#[cfg(feature = "client")]
pub mod attempt;
#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod codex_app;
#[cfg(feature = "client")]
pub mod codex_session;
#[cfg(feature = "client")]
pub mod concrete;
pub mod config;
pub mod envelope;
pub mod format;
#[cfg(feature = "client")]
pub mod process;
#[cfg(feature = "client")]
mod run;
#[cfg(feature = "client")]
pub mod session;
#[cfg(feature = "client")]
pub mod step;
#[cfg(feature = "client")]
pub mod ui;

#[cfg(feature = "client")]
pub use args::RunArgs;
#[cfg(feature = "client")]
pub use run::{run, Configured, Exit};
