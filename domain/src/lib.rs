//! The vocabulary every part of Provider Error Recovery shares: what the
//! server stores and answers, what the runner and adapters send, and what
//! the browser reads. Pure Rust with no I/O, so it compiles into the server,
//! the runner, the fuzz targets and the WASM bundle alike.
//!
//! - [`access`]: the permissions a token or a person holds.
//! - [`api`]: the HTTP API's request and answer bodies, in both
//!   directions (server, runner, adapters).
//! - [`policy`]: the version-1 class policy document — limits, the
//!   field-error reader, validation, schedule, legacy normalisation.
//! - [`profile`]: dynamic profiles on the wire and their validation.
//! - [`route`]: route snapshots, attempts, dispatches and events on the
//!   wire, the typed vocabulary (decisions, stop reasons, outcomes,
//!   dispatch and schedule states) and the state table ([`route::machine`]).
//! - [`audit`]: who did what and when: actors, the audit trail, a
//!   profile's kept revisions.
//! - [`circuit`]: shared resource circuits on the wire.
//! - [`webhook`]: webhook subscriptions, their event kinds and deliveries.
//! - [`catalogue`]: the catalogue in force, reloads and the log of
//!   evidence it did not recognise, on the wire.
//! - [`evidence`]: the evidence envelope an adapter reports a failure
//!   with, and its lenient, bounded readers.
//! - [`classification`]: what the classifier answers for an envelope;
//!   [`explain`]: why (the rules per tier, the deciding one, provenance, timing).
//! - [`concrete`]: `POST /classify` and `POST /policies/evaluate` for
//!   sessions on one concrete agent profile (no route).
//! - [`people`]: people who sign in, for the administrator's page.
//! - [`error`]: the API's error body with typed [`error::ErrorCode`]s, and
//!   the [`error::Viewer`] (who is looking).
//! - [`words`]: wording for people, made from those values in one place.
//! - [`ids`]: `RouteId`, `ProfileId` and `Generation` as types.
//! - [`wire_json`] and [`wire_time`]: how the browser reads JSON, and how
//!   times on the wire are read.
//! - `names`: the `wire_names!` declaration every wire enum uses, so serde
//!   and string names come from one rule.
//!
//! Features: `openapi` derives the OpenAPI schemas (the server);
//! `reader` compiles the browser's hand readers on the host (tests);
//! `browser` reads JSON with them instead of serde (the WASM bundle).
#![forbid(unsafe_code)]

// First: the macros below use it.
#[macro_use]
mod names;

pub mod access;
pub mod api;
pub mod audit;
pub mod catalogue;
pub mod circuit;
pub mod classification;
pub mod concrete;
pub mod error;
pub mod evidence;
pub mod explain;
pub mod ids;
pub mod people;
pub mod policy;
pub mod profile;
pub mod route;
pub mod webhook;
pub mod wire_json;
pub mod wire_time;
pub mod words;
