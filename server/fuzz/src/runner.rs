//! The runner's CLI-output readers (`runner/format/`) with the two modules
//! they name: the configuration's `Format` and the evidence item they
//! build. The same source files as the server's.

#[path = "../../src/runner/config.rs"]
pub mod config;
#[path = "../../src/runner/envelope.rs"]
pub mod envelope;
#[path = "../../src/runner/format/mod.rs"]
pub mod format;
