//! The HTTP API's request and answer bodies, in both directions: the
//! server reads requests and writes answers with these types, and the
//! runner (and any Rust adapter) writes requests and reads answers with
//! the same ones. Snapshots, attempts, dispatches and events are in
//! [`crate::route`]; profiles in [`crate::profile`]; the evidence envelope
//! a failure is reported with in [`crate::evidence`].

use crate::circuit::CircuitHold;
use crate::classification::Classification;
use crate::ids::{Generation, ProfileId, RouteId};
use crate::policy::PolicyClass;
use crate::route::{
    Action, Caller, CallerKind, DecisionKind, Dispatch, RouteOutcome, RouteSnapshot, UnsafeReason,
};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What an agent did that makes replaying its prompt unsafe: output or a
/// tool call (ACP's update names). An open set: a name this build does not
/// know is kept as sent and still counts as an effect, because refusing an
/// effect report would let a prompt that did work be sent again.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, strum::Display, strum::EnumString, Serialize, Deserialize,
)]
#[serde(from = "String", into = "String")]
#[strum(serialize_all = "snake_case")]
pub enum EffectKind {
    /// Assistant text.
    AgentMessageChunk,
    ToolCall,
    ToolCallUpdate,
    /// A partial result of the prompt.
    PartialResult,
    #[strum(default)]
    Other(String),
}

open_wire_names!(EffectKind);

impl EffectKind {
    /// The wire name (the name as sent, for one this build does not know).
    pub fn as_str(&self) -> &str {
        match self {
            EffectKind::AgentMessageChunk => "agent_message_chunk",
            EffectKind::ToolCall => "tool_call",
            EffectKind::ToolCallUpdate => "tool_call_update",
            EffectKind::PartialResult => "partial_result",
            EffectKind::Other(name) => name,
        }
    }
}

/// `POST /routes` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CreateRoute {
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub profile_id: ProfileId,
    pub caller: Caller,
}

/// Identity of the invocation a report is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct InvocationReport {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub generation: Generation,
    pub invocation_id: String,
    pub prompt_generation: i64,
}

impl InvocationReport {
    /// The invocation a route is on now.
    pub fn of(route: &RouteSnapshot) -> InvocationReport {
        InvocationReport {
            generation: route.generation,
            invocation_id: route.invocation_id.clone(),
            prompt_generation: route.prompt_generation,
        }
    }

    /// The invocation a dispatch delivers.
    pub fn of_dispatch(d: &Dispatch) -> InvocationReport {
        InvocationReport {
            generation: d.generation,
            invocation_id: d.invocation_id.clone(),
            prompt_generation: d.prompt_generation,
        }
    }
}

/// `POST /routes/{id}/effects` body: the agent produced output or touched tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EffectReport {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub generation: Generation,
    pub invocation_id: String,
    pub prompt_generation: i64,
    /// What the agent did (`agent_message_chunk`, `tool_call`,
    /// `tool_call_update`, `partial_result`; another name counts as an
    /// effect too).
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "tool_call"))]
    pub kind: EffectKind,
    /// The provider-native session, for resumable retries.
    #[serde(default)]
    pub provider_session_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    pub action: Action,
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub expected_generation: Generation,
}

/// `POST /routes/{id}/complete` and `/cancel` body: the generation the
/// caller saw, fencing the end like every transition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct EndRequest {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub expected_generation: Generation,
}

/// The decision as the API reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DecisionView {
    pub kind: DecisionKind,
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "transient"))]
    pub class: Option<PolicyClass>,
    pub retry_ordinal: Option<u32>,
    pub max_retries: Option<u32>,
    pub delay_seconds: Option<u64>,
    pub deadline: Option<DateTime<Utc>>,
    /// Where the route went: its state, or why nothing changed.
    pub outcome: RouteOutcome,
    /// Why the failure was unsafe to recover from automatically (only
    /// with `kind: effect_unsafe`): `boundary_unknown` (no `phase`),
    /// `output_started` (`stream`), `at_teardown`, `effects_reported`,
    /// `effects_in_evidence`, `resume_needs_same_candidate`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsafe_reason: Option<UnsafeReason>,
    /// The shared circuit whose hold outlasted the policy's bound: the
    /// exhausted outcome (`skip` or `stop`) was applied at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_by: Option<CircuitHold>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct FailureAnswer {
    pub classification: Classification,
    pub decision: DecisionView,
    pub route: RouteSnapshot,
}

/// `POST /dispatches/claim` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ClaimRequest {
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub route_id: Option<RouteId>,
    #[serde(default)]
    pub caller_kind: Option<CallerKind>,
    pub lease_seconds: u32,
    #[serde(default)]
    pub wait_seconds: u32,
}

pub const MAX_LEASE_SECONDS: u32 = 3_600;
pub const MAX_CLAIM_WAIT_SECONDS: u32 = 60;

/// `POST /dispatches/claim` answer: the dispatches claimed (none when
/// nothing fell due within `wait_seconds`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClaimAnswer {
    pub dispatches: Vec<Dispatch>,
}

/// `POST /dispatches/{id}/ack` body: the generation of the dispatch whose
/// prompt was delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct AckRequest {
    #[cfg_attr(feature = "openapi", schema(value_type = i64))]
    pub generation: Generation,
}
