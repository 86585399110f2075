//! The classifier module, compiled by path for fuzzing (see Cargo.toml).
#![forbid(unsafe_code)]

#[path = "../../src/classify/mod.rs"]
pub mod classify;
