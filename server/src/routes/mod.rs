//! Durable recovery routes: the route state table of docs/design.md over
//! the store.
//!
//! Layout, one concept per module:
//! - [`machine`] (in `domain::route`, shared with the browser): the state
//!   table — the only transitions there are.
//! - [`plan`]: the route planner, pure — route, what was reported (a
//!   classified failure and its decision, an effect, a success, an
//!   action), profile and `now` in, the change to commit out.
//! - [`service`]: [`Routes`], the thin shell that loads, plans and commits
//!   one fenced transaction per transition; its operations by concept:
//!   [`create`] (opening routes), [`reports`] (failures, effects, success),
//!   [`actions`] (a person's manual actions), [`lifecycle`] (completing
//!   and cancelling a route) and [`firing`] (due schedules, and a
//!   circuit's waiters once its probe came back), and
//!   [`circuit_controls`] (an administrator's release or probe now).
//! - [`concrete`]: classification and decisions for concrete sessions
//!   (no route; nothing stored but the unknown log's entry).
//! - [`dispatch`]: claiming dispatches with a lease, acknowledging them,
//!   and stopping routes whose dispatch lease ran out unacknowledged.
//! - [`model`]: the typed route and its conversions to and from the stored
//!   rows and the wire types (corrupt rows are errors, never defaults).
//! - [`idempotency`]: `Idempotency-Key` on route creation: one route per
//!   key and caller, so a client may repeat a creation whose answer it lost.
//! - [`error`]: [`RouteError`], what the service answers instead of a route.
//! - [`feed`]: the committed event tail, read once per process and
//!   shared by every event stream.
//! - [`signals`]: the wake-ups sent after each commit — in-process, and
//!   relayed from every server's commits on a shared PostgreSQL database.

pub mod actions;
pub mod circuit_controls;
pub mod concrete;
pub mod create;
pub mod dispatch;
pub mod error;
pub mod feed;
pub mod firing;
pub mod idempotency;
pub mod lifecycle;
pub mod model;
pub mod plan;
pub mod reports;
pub mod service;
pub mod signals;

pub use domain::route::machine;
pub use error::{Result, RouteError};
pub use idempotency::{Creation, IdempotencyKey, RouteKey};
pub use service::Routes;
pub use signals::Signals;
