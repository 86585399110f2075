//! Routes on the wire: snapshots, attempts, dispatches and events, as the
//! API returns them and the route panels render them. Shared by server and
//! browser; no logic beyond naming.

pub mod decision;
pub mod machine;

pub use decision::{DecisionKind, Rejection, RouteOutcome, StopReason};
pub use machine::Action;

use crate::policy::{ErrorClass, OnExhausted};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// SPEC.md's route states (plus the terminal `completed` / `cancelled`).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum RouteState {
    /// The current candidate is working (or about to be prompted).
    Active,
    /// A retry of the same candidate is scheduled.
    RetryWait,
    /// Waiting for a trusted provider reset time.
    WaitingForReset,
    /// A retry (or post-reset attempt) has been dispatched and is in flight.
    Retrying,
    /// Moving to the next candidate: a switch dispatch is pending.
    Switching,
    /// Automatic recovery stopped; a person decides.
    ActionRequired,
    Completed,
    Cancelled,
}

impl RouteState {
    pub const ALL: &'static [RouteState] = <RouteState as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<RouteState> {
        s.parse().ok()
    }

    /// States with a pending schedule (a deadline the backend owns).
    pub fn is_waiting(self) -> bool {
        matches!(self, RouteState::RetryWait | RouteState::WaitingForReset)
    }
}

/// Who drives the route.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum CallerKind {
    Kanban,
    Workflow,
    Utility,
    Office,
}

impl CallerKind {
    pub const ALL: &'static [CallerKind] = <CallerKind as strum::VariantArray>::VARIANTS;

    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn parse(s: &str) -> Option<CallerKind> {
        s.parse().ok()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Caller {
    pub kind: CallerKind,
    /// The caller's own reference (task id, workflow step, …).
    #[serde(rename = "ref")]
    pub reference: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CandidateRef {
    pub index: usize,
    pub id: String,
    pub label: String,
}

/// What the route does next, when it is waiting.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum PendingKind {
    Retry,
    ResetWait,
}

impl PendingKind {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Pending {
    pub kind: PendingKind,
    /// Absolute UTC deadline; browsers only render it.
    pub deadline: DateTime<Utc>,
    /// 1-based retry number (0 for a reset wait).
    pub retry_ordinal: u32,
    pub max_retries: u32,
    /// What happens when this attempt fails too and recovery is exhausted.
    #[cfg_attr(feature = "ssr", schema(value_type = String, example = "skip"))]
    pub outcome_after: OnExhausted,
    pub code: String,
    #[cfg_attr(feature = "ssr", schema(value_type = String, example = "transient"))]
    pub class: ErrorClass,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LastFailure {
    pub code: String,
    #[cfg_attr(feature = "ssr", schema(value_type = String, example = "transient"))]
    pub class: ErrorClass,
    /// A cause written from the code ("Provider overloaded"), never raw text.
    pub safe_cause: String,
    /// The provider's HTTP error status, when the evidence had one (≥ 400).
    #[serde(default)]
    pub http_status: Option<u16>,
}

/// The authoritative state of a route, as every route endpoint answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RouteSnapshot {
    pub id: String,
    pub profile_id: String,
    pub caller: Caller,
    pub state: RouteState,
    pub generation: i64,
    pub cycle: i64,
    pub candidate: CandidateRef,
    pub invocation_id: String,
    pub prompt_generation: i64,
    pub pending: Option<Pending>,
    pub last_failure: Option<LastFailure>,
    /// Why the route stopped, when it is `action_required`.
    #[cfg_attr(feature = "ssr", schema(value_type = Option<String>, example = "stopped_by_policy"))]
    pub reason: Option<StopReason>,
    /// Candidates skipped in this cycle.
    pub excluded: Vec<String>,
    pub updated_at: DateTime<Utc>,
    /// The server's clock when this snapshot was made, so a browser with a
    /// wrong clock can still count down correctly.
    pub server_time: DateTime<Utc>,
}

/// One row of a route's append-only attempt history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Attempt {
    pub seq: i64,
    pub generation: i64,
    pub cycle: i64,
    pub candidate: CandidateRef,
    pub invocation_id: String,
    pub code: String,
    #[cfg_attr(feature = "ssr", schema(value_type = String, example = "transient"))]
    pub class: ErrorClass,
    pub catalogue_version: String,
    pub classifier_rule: String,
    pub safe_excerpt: String,
    /// The provider's HTTP error status, when the evidence had one (≥ 400).
    pub http_status: Option<u16>,
    /// The class policy in force when the decision was made.
    #[cfg_attr(feature = "ssr", schema(value_type = Object))]
    pub policy: serde_json::Value,
    pub decision: DecisionKind,
    pub retry_ordinal: u32,
    pub deadline: Option<DateTime<Utc>>,
    /// Where the route went.
    #[cfg_attr(feature = "ssr", schema(value_type = String, example = "retry_wait until 2026-11-30T12:00:05+00:00"))]
    pub outcome: RouteOutcome,
    pub created_at: DateTime<Utc>,
}

/// Why a dispatch exists.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum DispatchReason {
    Retry,
    ResetRetry,
    Switch,
}

impl DispatchReason {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The reason for the attempt a pending schedule of `kind` starts.
    pub fn after(kind: Option<PendingKind>) -> DispatchReason {
        match kind {
            Some(PendingKind::ResetWait) => DispatchReason::ResetRetry,
            _ => DispatchReason::Retry,
        }
    }
}

/// Where a dispatch is in its life: handed out with a lease, then
/// acknowledged; voided when its generation is left behind.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum DispatchState {
    /// Waiting to be claimed.
    Pending,
    /// Handed to a caller with a lease, not yet acknowledged.
    Claimed,
    /// The caller delivered the prompt.
    Acked,
    /// Its generation was left behind.
    Void,
}

/// Where a schedule (a durable timer row) is in its life.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ScheduleState {
    /// Waiting for its deadline.
    Armed,
    /// Its deadline came and it created a dispatch.
    Fired,
    /// Its generation was left behind.
    Void,
}

/// The backend telling a caller to deliver the prompt to a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Dispatch {
    pub id: String,
    pub route_id: String,
    pub generation: i64,
    pub invocation_id: String,
    pub prompt_generation: i64,
    pub candidate: CandidateRef,
    pub reason: DispatchReason,
    pub lease_until: Option<DateTime<Utc>>,
}

/// Event kinds (the SSE `event:` field). Browsers only receive named events
/// they listen for, so this list is the one both sides use.
pub mod event_kind {
    pub const CREATED: &str = "route.created";
    pub const FAILURE: &str = "route.failure";
    pub const FIRED: &str = "route.fired";
    pub const ACTION: &str = "route.action";
    pub const EFFECT: &str = "route.effect";
    pub const SUCCESS: &str = "route.success";
    pub const DISPATCH_ACKED: &str = "route.dispatch_acked";
    pub const AMBIGUOUS: &str = "route.ambiguous";
    pub const ALL: [&str; 8] = [
        CREATED,
        FAILURE,
        FIRED,
        ACTION,
        EFFECT,
        SUCCESS,
        DISPATCH_ACKED,
        AMBIGUOUS,
    ];
}

/// A committed transition, as `GET /api/v1/events` streams it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct RouteEvent {
    pub id: i64,
    /// `route.created`, `route.failure`, `route.fired`, `route.action`, …
    pub kind: String,
    pub route: RouteSnapshot,
}
