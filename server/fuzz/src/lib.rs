//! The server modules the fuzz targets drive, compiled by path (see
//! Cargo.toml), and the checks each target makes (`checks`, shared with
//! the server's integration tests, which replay stored inputs through it).
#![forbid(unsafe_code)]

#[path = "../../src/classify/mod.rs"]
pub mod classify;
pub mod runner;
mod standins;
pub use standins::{clock, store};

pub use app::policy;

pub mod checks;
