//! Provider Error Recovery service: classifies AI coding agent failures
//! and recovers from them durably.
//!
//! Layout, in the order a failure travels (the classifier is the
//! `classify` crate, the wire types and the policy document the `domain`
//! crate, the runner the `runner` crate):
//! - [`recovery`]: the evaluator and the effect-safety gate — pure
//!   functions from a classified failure and a policy to a `Decision`.
//! - [`routes`]: durable routes — the failure planner (pure), dispatch
//!   claims and acknowledgements, and the thin service that commits one
//!   generation-fenced transaction per transition. The state table it
//!   obeys is `domain::route::machine`, shared with the browser.
//! - [`scheduler`]: the durable timer loop over schedule rows (claimed, so
//!   several servers on one PostgreSQL database share them) and restart
//!   reconciliation.
//! - [`circuits`]: shared resource circuits (pure core): which resource a
//!   failure names, when it opens, the one probe, eligibility.
//! - [`profiles`]: dynamic profiles — validation, legacy normalisation,
//!   optimistic concurrency — over the store.
//! - [`store`]: persistence behind one trait, SQLite (one server per file)
//!   and PostgreSQL (any number of servers) from the same SQL.
//! - [`http`]: the REST API and its OpenAPI document from one route list,
//!   health probes, the Leptos pages, and [`http::Server`], the one place
//!   a server is assembled.
//! - [`audit`]: who acts (the request's actor, carried to the events and
//!   audit entries it causes) and the audit trail.
//! - [`catalogue`]: the catalogue in force (embedded, or a directory) and
//!   its atomic reload.
//! - [`unknown`]: the bounded log of evidence the catalogue did not match.
//! - [`webhooks`]: subscriptions to route and circuit events, delivered
//!   signed from durable rows, one at a time per subscription.
//! - [`demo`]: the demo's simulated agents, the runner's session loop over
//!   scripted attempts.
//! - [`clock`]: the one injectable source of time.
//! - [`config`]: command-line and environment configuration.
//! - [`telemetry`]: structured logs; [`meters`]: Prometheus metrics.
//! - [`bench`]: `kandev-recovery bench` — the figures of this machine, and
//!   the fixtures the `cargo bench` benchmarks share with it.
//!
#![forbid(unsafe_code)]
// Leptos view types nest deeply; their Send checks need more room.
#![recursion_limit = "256"]

pub mod audit;
pub mod auth;
pub mod bench;
pub mod catalogue;
pub mod circuits;
pub mod clock;
pub mod config;
pub mod demo;
pub mod http;
pub mod meters;
pub mod operator;
pub mod profiles;
pub mod recovery;
pub mod retention;
pub mod routes;
pub mod scheduler;
pub mod store;
pub mod telemetry;
pub mod unknown;
pub mod webhooks;
