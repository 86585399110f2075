//! Integration tests, in one binary: the server library links once, not
//! once per file (each link is large with the Leptos views inside).
//!
//! Store, HTTP, route scenarios, races, crashes: most run on SQLite and
//! PostgreSQL (`on_both_engines!`); PostgreSQL is expected at
//! TEST_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/test).

#[macro_use]
mod support;

mod http_events;
mod http_profiles;
mod routes_crash;
mod routes_races;
mod routes_scenarios;
mod store;
