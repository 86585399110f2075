//! Integration tests, in one binary: the server library links once, not
//! once per file (each link is large with the Leptos views inside).
//!
//! The classifier (`classify_*`: CLI contract, collisions, corpus,
//! fixtures, leaks, properties, registry,
//! timing), then the store (`group_commit`: transitions committed in
//! batches still succeed and fail alone), HTTP, route scenarios, races and crashes, most of which run on
//! SQLite and PostgreSQL
//! (`on_both_engines!`); PostgreSQL is expected at TEST_POSTGRES_URL
//! (default postgres://postgres@127.0.0.1:5432/test).
//!
//! `instances`: several processes of the real binary on one PostgreSQL
//! database (10,000 schedules through a kill -9, a rolling restart,
//! commits waking streams and claims on another server), and the refusal
//! of a second server on one SQLite file.
//!
//! `paths`: walks no other test takes — a lease running out while the
//! server runs, retry now and stop while waiting, an unmappable stored
//! profile under a live route, kill -9 at every step of claim → deliver →
//! acknowledge.
//!
//! `faults`: the database failing under a running service (PostgreSQL
//! stopped, slow; SQLite on a full disk, read-only), injected by
//! `fault_proxy`; `shutdown`: what a graceful stop finishes, ends and
//! leaves for the next start, and a runner carrying on through a restart.
//!
//! `openapi_doc`: the OpenAPI document's structure (unique operation ids,
//! path parameters matching their templates, closed request bodies), so
//! the client generators in clients/ keep working without Python.
//!
//! `agents_*`: the real agent CLIs (installed by scripts/setup into
//! server/tests/agents) against `fake_provider` on 127.0.0.1.

#[macro_use]
mod support;

mod access;
mod access_hardening;
mod access_leaks;
mod agents_cli;
mod api_fuzz_findings;
mod audit;
mod catalogue_dir;
mod catalogue_reload;
mod classify_cli;
mod classify_collisions;
mod classify_corpus;
mod classify_fixtures;
mod classify_leaks;
mod classify_properties;
mod classify_registry;
mod classify_timing;
mod concrete_sessions;
mod fake_provider;
mod fault_proxy;
mod faults;
mod group_commit;
mod http_events;
mod http_metrics;
mod http_profiles;
mod instances;
mod model;
mod openapi_doc;
mod operator_cli;
mod paths;
mod retention;
mod routes_attempts;
mod routes_circuits;
mod routes_corrupt;
mod routes_crash;
mod routes_failback;
mod routes_keys;
mod routes_lifecycle;
mod routes_lookup;
mod routes_races;
mod routes_safety;
mod routes_scenarios;
mod runner_agents;
mod runner_concrete;
mod runner_harness;
mod runner_scripts;
mod shutdown;
mod store;
mod unknown_growth;
mod unknown_log;
mod webhooks;
