//! Routes on the wire: snapshots, attempts, dispatches and events, as the
//! API returns them and the route panels render them, with the states and
//! kinds they carry. Shared by server and browser. Beside them:
//! [`decision`] (what a failure led to: decision kinds, stop reasons,
//! outcomes) and [`machine`] (docs/design.md's state table and the manual actions
//! it allows).

pub mod decision;
pub mod machine;

pub use decision::{DecisionKind, Rejection, RouteOutcome, StopReason, UnsafeReason};
pub use machine::Action;

use crate::ids::{Generation, ProfileId, RouteId};
use crate::policy::{ErrorClass, OnExhausted};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

wire_names! {
    /// The route states of docs/design.md (plus the terminal `completed` / `cancelled`).
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
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
        /// Ended: the caller's session is over. Nothing moves it again.
        Completed,
        /// Ended: the route was given up. Nothing moves it again.
        Cancelled,
    }
}

impl RouteState {
    /// States with a pending schedule (a deadline the backend owns).
    pub fn is_waiting(self) -> bool {
        matches!(self, RouteState::RetryWait | RouteState::WaitingForReset)
    }

    /// Ended states: the route takes no trigger any more (and, after the
    /// retention time, is pruned).
    pub fn is_terminal(self) -> bool {
        matches!(self, RouteState::Completed | RouteState::Cancelled)
    }
}

wire_names! {
    /// Who drives the route.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum CallerKind {
        Kanban,
        Workflow,
        Utility,
        Office,
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Caller {
    pub kind: CallerKind,
    /// The caller's own reference (task id, workflow step, …).
    #[serde(rename = "ref")]
    pub reference: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CandidateRef {
    pub index: usize,
    pub id: String,
    pub label: String,
}

wire_names! {
    /// What the route does next, when it is waiting.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum PendingKind {
        Retry,
        ResetWait,
        /// A switch to a candidate a shared circuit holds: dispatched when
        /// the hold ends (the route is `switching` meanwhile).
        Switch,
    }
}

/// Where a resumed attempt continues: the provider-native session and the
/// provider-side generation (turn) it resumes. A dispatch that carries it
/// tells the caller to resume that session (Claude Code `--resume`, Codex
/// `exec resume`, ACP `session/load`), not to send the prompt again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Resume {
    pub provider_session_id: String,
    pub generation: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Pending {
    pub kind: PendingKind,
    /// Absolute UTC deadline; browsers only render it.
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub deadline: DateTime<Utc>,
    /// 1-based retry number (0 for a reset wait).
    pub retry_ordinal: u32,
    pub max_retries: u32,
    /// What happens when this attempt fails too and recovery is exhausted.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "skip"))]
    pub outcome_after: OnExhausted,
    pub code: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "transient"))]
    pub class: ErrorClass,
    /// A shared circuit holding the candidate: the deadline is its, not
    /// the policy's (absent when the policy alone set the deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub circuit: Option<crate::circuit::CircuitHold>,
    /// The attempt resumes the provider session the failed one ran in
    /// (a provider-supported resumable retry), instead of repeating the
    /// prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LastFailure {
    pub code: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "transient"))]
    pub class: ErrorClass,
    /// A cause written from the code ("Provider overloaded"), never raw text.
    pub safe_cause: String,
    /// The provider's HTTP error status, when the evidence had one (≥ 400).
    #[serde(default)]
    pub http_status: Option<u16>,
    /// Why the failure was unsafe to recover from automatically (decision
    /// `effect_unsafe`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsafe_reason: Option<UnsafeReason>,
    /// A shared circuit held the candidate longer than its policy would
    /// wait, so the policy's exhausted outcome was applied at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<crate::circuit::CircuitHold>,
}

/// The authoritative state of a route, as every route endpoint answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RouteSnapshot {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub id: RouteId,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub profile_id: ProfileId,
    pub caller: Caller,
    pub state: RouteState,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub generation: Generation,
    pub cycle: i64,
    pub candidate: CandidateRef,
    pub invocation_id: String,
    pub prompt_generation: i64,
    pub pending: Option<Pending>,
    pub last_failure: Option<LastFailure>,
    /// Why the route stopped, when it is `action_required`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "stopped_by_policy"))]
    pub reason: Option<StopReason>,
    /// Candidates skipped in this cycle.
    pub excluded: Vec<String>,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub updated_at: DateTime<Utc>,
    /// The server's clock when this snapshot was made, so a browser with a
    /// wrong clock can still count down correctly.
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub server_time: DateTime<Utc>,
}

/// One row of a route's append-only attempt history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Attempt {
    pub seq: i64,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub generation: Generation,
    pub cycle: i64,
    pub candidate: CandidateRef,
    pub invocation_id: String,
    pub code: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "transient"))]
    pub class: ErrorClass,
    pub catalogue_version: String,
    pub classifier_rule: String,
    pub safe_excerpt: String,
    /// The provider's HTTP error status, when the evidence had one (≥ 400).
    pub http_status: Option<u16>,
    /// The class policy in force when the decision was made (`null` for
    /// errors no policy governs). Kept as JSON here: the browser reads it
    /// only to word it (`words::policy_of`).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::policy::ClassPolicy>))]
    pub policy: serde_json::Value,
    pub decision: DecisionKind,
    pub retry_ordinal: u32,
    #[serde(default, deserialize_with = "crate::wire_time::rfc3339_opt")]
    pub deadline: Option<DateTime<Utc>>,
    /// Where the route went.
    pub outcome: RouteOutcome,
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub created_at: DateTime<Utc>,
    /// The whole classification the decision was made from (the failure
    /// report's `classification`), as it was then; absent on attempts
    /// recorded before it was kept.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::classification::Classification>))]
    pub classification: Option<serde_json::Value>,
    /// Why the decision was `effect_unsafe`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsafe_reason: Option<UnsafeReason>,
    /// The shared circuit whose hold outlasted the policy's bound, so the
    /// exhausted outcome was applied at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held_by: Option<crate::circuit::CircuitHold>,
    /// For a `late_effect` row: the kind of the effect that arrived late.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub late_effect: Option<String>,
    /// For a `returned` row: the candidate left, and what had held the
    /// one returned to back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returned: Option<Returned>,
}

/// A return to a preferred candidate (failback): where the route came from
/// and, when a shared circuit had held the candidate back, its code and
/// when that ended (its reset, or its probe's success).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Returned {
    pub from: CandidateRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::wire_time::rfc3339_opt"
    )]
    pub since: Option<DateTime<Utc>>,
}

wire_names! {
    /// Why a dispatch exists.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum DispatchReason {
        Retry,
        ResetRetry,
        Switch,
    }
}

impl DispatchReason {
    /// The reason for the attempt a pending schedule of `kind` starts.
    pub fn after(kind: Option<PendingKind>) -> DispatchReason {
        match kind {
            Some(PendingKind::ResetWait) => DispatchReason::ResetRetry,
            Some(PendingKind::Switch) => DispatchReason::Switch,
            _ => DispatchReason::Retry,
        }
    }
}

wire_names! {
    /// Where a dispatch is in its life: handed out with a lease, then
    /// acknowledged; voided when its generation is left behind.
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
}

wire_names! {
    /// Where a schedule (a durable timer row) is in its life.
    pub enum ScheduleState {
        /// Waiting for its deadline.
        Armed,
        /// Its deadline came and it created a dispatch.
        Fired,
        /// Its generation was left behind.
        Void,
    }
}

/// The backend telling a caller to deliver the prompt to a candidate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Dispatch {
    pub id: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub route_id: RouteId,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub generation: Generation,
    pub invocation_id: String,
    pub prompt_generation: i64,
    pub candidate: CandidateRef,
    pub reason: DispatchReason,
    pub lease_until: Option<DateTime<Utc>>,
    /// Resume this provider session at this turn instead of sending the
    /// prompt again: the failed attempt had produced output, and its
    /// provider can continue it without repeating that work.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Resume>,
}

/// The browser's readers (`crate::wire_json`), field for field as serde's.
#[cfg(any(test, feature = "reader"))]
mod read {
    use super::*;
    use crate::wire_json::{Error, Fields, FromJson};
    use serde_json::Value;

    impl FromJson for Caller {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Caller {
                kind: o.get("kind")?,
                reference: o.get("ref")?,
            })
        }
    }

    impl FromJson for CandidateRef {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(CandidateRef {
                index: o.get("index")?,
                id: o.get("id")?,
                label: o.get("label")?,
            })
        }
    }

    impl FromJson for Returned {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Returned {
                from: o.get("from")?,
                code: o.get("code")?,
                since: o.get("since")?,
            })
        }
    }

    impl FromJson for Pending {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Pending {
                kind: o.get("kind")?,
                deadline: o.get("deadline")?,
                retry_ordinal: o.get("retry_ordinal")?,
                max_retries: o.get("max_retries")?,
                outcome_after: o.get("outcome_after")?,
                code: o.get("code")?,
                class: o.get("class")?,
                circuit: o.get("circuit")?,
                resume: o.get("resume")?,
            })
        }
    }

    impl FromJson for Resume {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Resume {
                provider_session_id: o.get("provider_session_id")?,
                generation: o.get("generation")?,
            })
        }
    }

    impl FromJson for LastFailure {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(LastFailure {
                code: o.get("code")?,
                class: o.get("class")?,
                safe_cause: o.get("safe_cause")?,
                http_status: o.get("http_status")?,
                unsafe_reason: o.get("unsafe_reason")?,
                held_by: o.get("held_by")?,
            })
        }
    }

    impl FromJson for RouteSnapshot {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(RouteSnapshot {
                id: o.get("id")?,
                profile_id: o.get("profile_id")?,
                caller: o.get("caller")?,
                state: o.get("state")?,
                generation: o.get("generation")?,
                cycle: o.get("cycle")?,
                candidate: o.get("candidate")?,
                invocation_id: o.get("invocation_id")?,
                prompt_generation: o.get("prompt_generation")?,
                pending: o.get("pending")?,
                last_failure: o.get("last_failure")?,
                reason: o.get("reason")?,
                excluded: o.get("excluded")?,
                updated_at: o.get("updated_at")?,
                server_time: o.get("server_time")?,
            })
        }
    }

    impl FromJson for Attempt {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(Attempt {
                seq: o.get("seq")?,
                generation: o.get("generation")?,
                cycle: o.get("cycle")?,
                candidate: o.get("candidate")?,
                invocation_id: o.get("invocation_id")?,
                code: o.get("code")?,
                class: o.get("class")?,
                catalogue_version: o.get("catalogue_version")?,
                classifier_rule: o.get("classifier_rule")?,
                safe_excerpt: o.get("safe_excerpt")?,
                http_status: o.get("http_status")?,
                policy: o.get("policy")?,
                decision: o.get("decision")?,
                retry_ordinal: o.get("retry_ordinal")?,
                deadline: o.get("deadline")?,
                outcome: o.get("outcome")?,
                created_at: o.get("created_at")?,
                classification: o.get("classification")?,
                unsafe_reason: o.get("unsafe_reason")?,
                held_by: o.get("held_by")?,
                late_effect: o.get("late_effect")?,
                returned: o.get("returned")?,
            })
        }
    }

    impl FromJson for RouteEvent {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(RouteEvent {
                id: o.get("id")?,
                kind: o.get("kind")?,
                route: o.get("route")?,
                actor: o.get("actor")?,
            })
        }
    }
}

wire_names! {
    /// Event kinds (the SSE `event:` field). Browsers only receive named
    /// events they listen for, so this list is the one both sides use.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum EventKind {
        #[serde(rename = "route.created")]
        #[strum(serialize = "route.created")]
        Created,
        #[serde(rename = "route.failure")]
        #[strum(serialize = "route.failure")]
        Failure,
        #[serde(rename = "route.fired")]
        #[strum(serialize = "route.fired")]
        Fired,
        #[serde(rename = "route.action")]
        #[strum(serialize = "route.action")]
        Action,
        #[serde(rename = "route.effect")]
        #[strum(serialize = "route.effect")]
        Effect,
        #[serde(rename = "route.success")]
        #[strum(serialize = "route.success")]
        Success,
        #[serde(rename = "route.dispatch_acked")]
        #[strum(serialize = "route.dispatch_acked")]
        DispatchAcked,
        #[serde(rename = "route.ambiguous")]
        #[strum(serialize = "route.ambiguous")]
        Ambiguous,
        /// A deadline came (or a circuit changed) while a shared circuit
        /// held the candidate: the wait moved, the route stayed where it was.
        #[serde(rename = "route.held")]
        #[strum(serialize = "route.held")]
        Held,
        /// Output or tool activity of an earlier attempt arrived after its
        /// failure was recovered from: the successor withdrawn and the
        /// route stopped, or (delivered already) recorded.
        #[serde(rename = "route.late_effect")]
        #[strum(serialize = "route.late_effect")]
        LateEffect,
        /// A success sent the route's next invocation back to a preferred
        /// candidate that is eligible again (failback).
        #[serde(rename = "route.returned")]
        #[strum(serialize = "route.returned")]
        Returned,
        /// A dispatch nobody claimed within the dispatch timeout: the route
        /// stopped for a person.
        #[serde(rename = "route.unclaimed")]
        #[strum(serialize = "route.unclaimed")]
        Unclaimed,
        /// The caller completed the route: its session is over.
        #[serde(rename = "route.completed")]
        #[strum(serialize = "route.completed")]
        Completed,
        /// The route was cancelled by its caller or a person.
        #[serde(rename = "route.cancelled")]
        #[strum(serialize = "route.cancelled")]
        Cancelled,
    }
}

/// A committed transition, as `GET /api/v1/events` streams it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RouteEvent {
    pub id: i64,
    pub kind: EventKind,
    pub route: RouteSnapshot,
    /// Who caused it: the timer, the caller, or the person or token who
    /// acted. Absent on events committed before actors were recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<crate::audit::Actor>,
}
