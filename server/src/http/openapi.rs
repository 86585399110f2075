//! The OpenAPI document's frame: its title, tags and the wire types it
//! names. Its paths come from the route list in [`super::api`], which
//! builds the router and the document together, so no route can be served
//! undocumented or documented unserved. Served at `/api/v1/openapi.json`.

use domain::policy::{CandidatePolicy, ClassPolicy, FieldError, RetryPolicy, WaitForReset};
use domain::profile::{
    Candidate, CandidatePreview, CandidateWrite, ConfigurationError, Profile, ProfileWrite,
    SchedulePreview, ValidationReport,
};
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Provider Error Recovery",
        description = "Classifies AI coding agent failures and recovers from them durably."
    ),
    components(schemas(
        Profile, Candidate, CandidatePolicy, ClassPolicy, RetryPolicy, WaitForReset,
        FieldError, ConfigurationError, ValidationReport, CandidatePreview, SchedulePreview,
        ProfileWrite, CandidateWrite, domain::error::ApiError,
        domain::route::RouteSnapshot, domain::route::Attempt, domain::route::Dispatch, domain::route::RouteEvent,
        domain::route::Pending, domain::route::LastFailure, domain::route::CandidateRef, domain::route::Caller,
        domain::api::CreateRoute, domain::api::InvocationReport, domain::api::EffectReport,
        domain::api::ActionRequest, domain::api::EndRequest, domain::api::ClaimRequest,
        domain::api::DecisionView,
        domain::api::FailureAnswer, domain::api::ClaimAnswer, domain::api::AckRequest,
        domain::evidence::Evidence, domain::classification::Classification,
        domain::circuit::CircuitList, domain::circuit::CircuitView, domain::circuit::CircuitHold,
        domain::circuit::CircuitRequest,
        domain::circuit::CircuitScope, domain::circuit::CircuitStatus, domain::error::Viewer,
        domain::audit::Actor, domain::audit::ActorKind, domain::audit::AuditAction,
        domain::audit::AuditEntry, domain::audit::ProfileRevision,
        domain::concrete::EvaluateRequest, domain::concrete::EvaluateAnswer,
        domain::concrete::Verdict, domain::concrete::CycleUsage, domain::concrete::ClassUsage,
        domain::webhook::WebhookWrite, domain::webhook::Webhook, domain::webhook::WebhookEvent,
        domain::webhook::Delivery, domain::webhook::DeliveryState, domain::webhook::DeliveryLog
    )),
    tags(
        (name = "profiles", description = "Dynamic profiles and their per-class recovery policies"),
        (name = "routes", description = "Durable recovery routes: reports, actions, history, events"),
        (name = "dispatches", description = "Claiming and acknowledging prompt deliveries"),
        (name = "concrete", description = "Sessions on one concrete agent profile: classification and policy decisions, no route"),
        (name = "circuits", description = "Shared resource circuits: one probe when a provider, account, model or profile fails for everyone"),
        (name = "access", description = "Who is signed in; signing out"),
        (name = "audit", description = "Who changed what, and when"),
        (name = "webhooks", description = "Signed HTTP posts of route and circuit events"),
        (name = "test", description = "Only with serve --test-clock")
    ),
    modifiers(&BearerAuth, &ClosedProfileBodies),
    security(("bearer" = []))
)]
pub struct ApiDoc;

/// `Authorization: Bearer <token>` (or a browser session). Each endpoint's
/// permission is in docs/access.md's matrix and `crate::http::api`.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        doc.components
            .get_or_insert_with(Default::default)
            .add_security_scheme(
                "bearer",
                SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
            );
    }
}

/// The profile body's reader (`domain::profile::read_profile`) refuses
/// fields it does not know, in the profile and in each candidate, as
/// `deny_unknown_fields` does for the other request bodies (whose schemas
/// say `additionalProperties: false` by themselves). It reads a JSON
/// value rather than deriving `Deserialize`, so its schemas say so here.
struct ClosedProfileBodies;

/// The request-body schemas [`ClosedProfileBodies`] closes.
const CLOSED_PROFILE_BODIES: [&str; 2] = ["ProfileWrite", "CandidateWrite"];

impl utoipa::Modify for ClosedProfileBodies {
    fn modify(&self, doc: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::schema::{AdditionalProperties, Schema};
        use utoipa::openapi::RefOr;
        let Some(components) = doc.components.as_mut() else {
            return;
        };
        for name in CLOSED_PROFILE_BODIES {
            if let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(name) {
                object.additional_properties =
                    Some(Box::new(AdditionalProperties::FreeForm(false)));
            }
        }
    }
}
