//! Access: who may do what.
//!
//! - [`rules`]: the permissions and which one each kind of request needs —
//!   pure, no HTTP or database (the permission rules of docs/design.md,
//!   “Permissions”, live here).
//! - [`secret`]: random secrets, their stored digests, constant-time
//!   comparison.
//! - [`access`]: checks a request's credential (bearer token or browser
//!   session) against the database; creates tokens, users and sessions.
//! - [`limit`]: per-credential rate limits (evidence submission).
//! - [`cli`]: `kandev-recovery token …` and `user add`.
//!
//! The HTTP shell (the guard on every route, the 401/403 answers) is in
//! `crate::http::guard`; the route list in `crate::http::api` names each
//! endpoint's rule.

pub mod access;
pub mod cli;
pub mod limit;
pub mod rules;
pub mod secret;

pub use access::Access;
pub use rules::{Credential, Decision, Permission, Permissions, Principal, Rule, Via};
