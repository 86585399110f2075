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
        super::health::healthz,
        super::health::readyz,
    ),
    components(schemas(
        Profile, Candidate, CandidatePolicy, ClassPolicy, RetryPolicy, WaitForReset,
        FieldError, ConfigurationError, ValidationReport, CandidatePreview, SchedulePreview,
        ProfileWrite, CandidateWrite, app::api::ApiError
    )),
    tags((name = "profiles", description = "Dynamic profiles and their per-class recovery policies"))
)]
pub struct ApiDoc;
