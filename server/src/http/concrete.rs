//! `/api/v1/classify` and `/api/v1/policies/evaluate`: recovery for
//! sessions on one concrete agent profile, with no route. Thin: the route
//! service classifies and the evaluator decides
//! (`crate::routes::concrete`, `crate::recovery::concrete`).

use super::error::HttpResult;
use super::extract::JsonBody;
use super::AppState;
use axum::extract::State;
use axum::Json;
use domain::classification::Classification;
use domain::concrete::EvaluateAnswer;
use domain::error::ApiError;

/// Classify one evidence envelope: the code, class, confidence, scope,
/// rule, validated timing and safe excerpt the classifier gives it. Route
/// identity is not needed and nothing is stored, except the unknown log's
/// sanitised entry for evidence the catalogue does not recognise.
/// Rate-limited like failure reports.
#[utoipa::path(post, path = "/classify", tag = "concrete", operation_id = "classify_evidence",
    request_body(content = domain::evidence::Evidence, description = "An evidence envelope (route identity optional)"),
    responses((status = 200, description = "The classification", body = Classification),
              (status = 400, description = "The body is not JSON, or not an evidence envelope", body = ApiError)))]
pub async fn classify(
    State(s): State<AppState>,
    JsonBody(body): JsonBody,
) -> HttpResult<Json<Classification>> {
    Ok(Json(s.routes.classify(&body).await?))
}

/// The decision the evaluator would take for a concrete session's
/// failure: one candidate's policy document (version 1, validated as a
/// profile's would be), the evidence envelope, and what this cycle
/// already used per class (default: nothing). The effect-safety gate
/// applies: the envelope's `phase` must be `launch`, `session_init` or
/// `prompt` and it must carry no output or tool activity, or the answer
/// is `effect_unsafe`. Nothing is stored or scheduled; the answer's
/// `cycle` is what to send with the next failure of the same cycle.
#[utoipa::path(post, path = "/policies/evaluate", tag = "concrete", operation_id = "evaluate_policy",
    request_body = domain::concrete::EvaluateRequest,
    responses((status = 200, description = "The classification, the decision and the cycle after it",
               body = EvaluateAnswer)))]
pub async fn evaluate(
    State(s): State<AppState>,
    JsonBody(body): JsonBody,
) -> HttpResult<Json<EvaluateAnswer>> {
    Ok(Json(s.routes.evaluate(&body).await?))
}
