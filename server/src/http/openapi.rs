//! The OpenAPI document, generated from the handler annotations and the
//! wire types, served at `/api/v1/openapi.json`.

use app::policy::{CandidatePolicy, ClassPolicy, FieldError, RetryPolicy, WaitForReset};
use app::profile::{
    Candidate, CandidatePreview, ConfigurationError, Profile, SchedulePreview, ValidationReport,
};
use serde::Serialize;
use utoipa::{OpenApi, ToSchema};

/// A profile as clients send it to create, update or validate. `revision`
/// is required on update; candidate `id`s are optional on create.
#[derive(Serialize, ToSchema)]
pub struct ProfileWrite {
    pub name: String,
    pub revision: Option<i64>,
    pub candidates: Vec<CandidateWrite>,
}

/// A candidate as clients send it. Without `policy`, both classes skip
/// immediately.
#[derive(Serialize, ToSchema)]
pub struct CandidateWrite {
    pub id: Option<String>,
    pub label: String,
    pub agent: String,
    pub provider_id: Option<String>,
    pub model_id: Option<String>,
    pub profile_ref: Option<String>,
    /// A non-secret name of the provider account (`team-a`): candidates
    /// naming the same one share its circuit.
    pub account_ref: Option<String>,
    pub policy: Option<CandidatePolicy>,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Provider Error Recovery",
        description = "Classifies AI coding agent failures and recovers from them durably."
    ),
    paths(
        super::profiles::list,
        super::profiles::create,
        super::profiles::validate,
        super::profiles::get,
        super::profiles::update,
        super::profiles::delete,
        super::routes::create,
        super::routes::list,
        super::routes::get,
        super::routes::attempts,
        super::routes::failures,
        super::routes::effects,
        super::routes::success,
        super::routes::actions,
        super::routes::claim,
        super::routes::ack,
        super::routes::events,
        super::routes::advance_clock,
        super::circuits::list,
        super::health::healthz,
        super::health::readyz,
    ),
    components(schemas(
        Profile, Candidate, CandidatePolicy, ClassPolicy, RetryPolicy, WaitForReset,
        FieldError, ConfigurationError, ValidationReport, CandidatePreview, SchedulePreview,
        ProfileWrite, CandidateWrite, app::api::ApiError,
        app::route::RouteSnapshot, app::route::Attempt, app::route::Dispatch, app::route::RouteEvent,
        app::route::Pending, app::route::LastFailure, app::route::CandidateRef, app::route::Caller,
        crate::routes::CreateRoute, crate::routes::InvocationReport, crate::routes::EffectReport,
        crate::routes::ActionRequest, crate::routes::ClaimRequest, crate::routes::DecisionView,
        crate::routes::FailureAnswer, super::routes::ClaimAnswer, super::routes::AckRequest,
        super::routes::AdvanceClock, super::routes::ClockAnswer,
        app::circuit::CircuitList, app::circuit::CircuitView, app::circuit::CircuitHold,
        app::circuit::CircuitScope, app::circuit::CircuitStatus
    )),
    tags(
        (name = "profiles", description = "Dynamic profiles and their per-class recovery policies"),
        (name = "routes", description = "Durable recovery routes: reports, actions, history, events"),
        (name = "dispatches", description = "Claiming and acknowledging prompt deliveries"),
        (name = "circuits", description = "Shared resource circuits: one probe when a provider, account, model or profile fails for everyone"),
        (name = "test", description = "Only with serve --test-clock")
    )
)]
pub struct ApiDoc;
