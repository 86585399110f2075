//! `kandev-recovery run --agent NAME`: a concrete session — one agent of
//! the runner's configuration, no profile, no route. The runner keeps the
//! session's product defaults ([`policy`]) and its own timers; the service
//! classifies each failure and takes the decision under that policy, with
//! the cycle counters the runner keeps (`POST /api/v1/policies/evaluate`),
//! so a concrete session shares the routes' classes, timing and
//! effect-safety gate. The runner carries the decision out ([`next`],
//! [`session`]): retry at its time, wait for a trusted reset, or stop with
//! the reason. docs/concrete.md describes it.

pub mod next;
pub mod policy;
pub mod session;
