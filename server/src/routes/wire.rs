//! The route API's request and answer bodies that are the server's own
//! (snapshots, attempts and dispatches are shared with the browser in
//! `domain::route`).

use chrono::{DateTime, Utc};
use classify::Classification;
use domain::circuit::CircuitHold;
use domain::ids::{Generation, ProfileId, RouteId};
use domain::policy::PolicyClass;
use domain::route::{
    Action, Caller, CallerKind, DecisionKind, RouteOutcome, RouteSnapshot, UnsafeReason,
};
use serde::{Deserialize, Serialize};

/// `POST /routes` body.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRoute {
    #[schema(value_type = String)]
    pub profile_id: ProfileId,
    pub caller: Caller,
}

/// Identity of the invocation a report is about.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InvocationReport {
    #[schema(value_type = i64)]
    pub generation: Generation,
    pub invocation_id: String,
    pub prompt_generation: i64,
}

/// `POST /routes/{id}/effects` body: the agent produced output or touched tools.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EffectReport {
    #[schema(value_type = i64)]
    pub generation: Generation,
    pub invocation_id: String,
    pub prompt_generation: i64,
    /// `agent_message_chunk`, `tool_call`, `tool_call_update`, `partial_result`, …
    pub kind: String,
    /// The provider-native session, for resumable retries.
    #[serde(default)]
    pub provider_session_id: Option<String>,
}

#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionRequest {
    pub action: Action,
    #[schema(value_type = i64)]
    pub expected_generation: Generation,
}

/// The decision as the API reports it.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct DecisionView {
    pub kind: DecisionKind,
    #[schema(value_type = Option<String>, example = "transient")]
    pub class: Option<PolicyClass>,
    pub retry_ordinal: Option<u32>,
    pub max_retries: Option<u32>,
    pub delay_seconds: Option<u64>,
    pub deadline: Option<DateTime<Utc>>,
    /// Where the route went: its state, or why nothing changed.
    #[schema(value_type = String, example = "retry_wait until 2026-11-30T12:00:05+00:00")]
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

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct FailureAnswer {
    #[schema(value_type = Object)]
    pub classification: Classification,
    pub decision: DecisionView,
    pub route: RouteSnapshot,
}

/// `POST /dispatches/claim` body.
#[derive(Debug, Clone, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClaimRequest {
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub route_id: Option<RouteId>,
    #[serde(default)]
    pub caller_kind: Option<CallerKind>,
    pub lease_seconds: u32,
    #[serde(default)]
    pub wait_seconds: u32,
}

pub const MAX_LEASE_SECONDS: u32 = 3_600;
pub const MAX_CLAIM_WAIT_SECONDS: u32 = 60;
