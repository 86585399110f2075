//! `app::policy`, the same source files, without Leptos: the policy core
//! is plain Rust over serde, and its enums are declared with `app`'s
//! `wire_names!`, so that macro's file comes along.

// `open_wire_names!` is not used by the policy core.
#[allow(unused_macros)]
#[macro_use]
#[path = "../../../../app/src/names.rs"]
mod names;

#[path = "../../../../app/src/policy/mod.rs"]
pub mod policy;
