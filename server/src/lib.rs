//! Provider Error Recovery service.
//!
//! Layout:
//! - [`classify`]: evidence envelopes → classifications, driven by the data
//!   catalogue in `catalogue/`. The only place that reads provider text.
//! - [`circuits`]: shared resource circuits (pure core): which resource a
//!   failure names, when it opens, the one probe, eligibility.
//! - [`profiles`]: dynamic profiles — validation, legacy normalisation,
//!   optimistic concurrency — over the store.
//! - [`clock`]: the one injectable source of time.
//! - [`store`]: persistence behind one trait, SQLite and PostgreSQL.
//! - [`http`]: the REST API, OpenAPI document, health and the Leptos pages.
//! - [`config`]: command-line and environment configuration.
//! - [`runner`]: `kandev-recovery run` — drives real agent CLIs (plain
//!   output, their JSON event streams, or ACP) through the service.
#![forbid(unsafe_code)]
// Leptos view types nest deeply; their Send checks need more room.
#![recursion_limit = "256"]

pub mod circuits;
pub mod classify;
pub mod clock;
pub mod config;
pub mod http;
pub mod profiles;
pub mod recovery;
pub mod routes;
pub mod runner;
pub mod scheduler;
pub mod store;
pub mod telemetry;
