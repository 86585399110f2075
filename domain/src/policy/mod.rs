//! The version-1 class policy document: what a candidate does after a
//! transient or a hard failure.
//!
//! This module is the single implementation of the policy rules. The server
//! validates API input with it and the browser validates the settings form
//! with it, so the two can never disagree about limits or field paths. It is
//! plain Rust: no Leptos, no I/O, no clock.
//!
//! - [`limits`]: the backend-owned bounds, as named constants.
//! - [`document`]: the typed document ([`CandidatePolicy`], [`ClassPolicy`]).
//! - [`reader`]: the field-error reader toolkit — reading untrusted JSON
//!   while collecting every problem as a field-addressable [`FieldError`].
//! - [`validate`]: the version-1 document read with it.
//! - [`error`]: [`FieldError`], the one shape of a validation problem.
//! - [`schedule`]: the exponential retry delays a policy implies.
//! - [`legacy`]: one-time normalisation of `retry_same` / `try_next` / `stop`
//!   documents and their per-code rules.
//! - [`class`]: error classes and the built-in code → class registry.
//! - [`text`]: names and references refuse hidden characters (control,
//!   bidirectional, zero-width).

pub mod class;
pub mod document;
pub mod error;
pub mod legacy;
pub mod limits;
pub mod reader;
pub mod schedule;
pub mod text;
pub mod validate;

pub use class::{ErrorClass, PolicyClass};
pub use document::{CandidatePolicy, ClassPolicy, OnExhausted, RetryPolicy, WaitForReset};
pub use error::{FieldError, FieldErrorCode};
pub use schedule::{describe, format_duration, retry_delay_seconds, retry_schedule};
