//! `/api/v1/routes`, `/api/v1/dispatches`, `/api/v1/events` and the test
//! clock. Thin: the route service decides and commits.

use super::error::{HttpError, HttpResult};
use super::extract::{JsonBody, Query, TestClockEnabled};
use super::guard::{Caller, DecisionRead};
use super::AppState;
use crate::auth::rules::{may_open_route, may_report_on};
use crate::auth::{Permission, Principal};
use crate::routes::feed;
use crate::routes::idempotency::{self, Creation, IdempotencyKey, RouteKey};
use crate::routes::lifecycle::End;
use crate::routes::RouteError;
use crate::store::{EventRow, RouteFilter};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use domain::api::{
    AckRequest, ActionRequest, ClaimAnswer, ClaimRequest, CreateRoute, EffectReport, EndRequest,
    FailureAnswer, InvocationReport,
};
use domain::error::{ApiError, ErrorCode};
use domain::ids::RouteId;
use domain::policy::{FieldError, FieldErrorCode};
use domain::route::{Attempt, RouteSnapshot};
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_stream::wrappers::ReceiverStream;

impl From<RouteError> for HttpError {
    fn from(e: RouteError) -> Self {
        match e {
            RouteError::NotFound(what) => HttpError::NotFound(format!("The {what}")),
            RouteError::Invalid(errors) => HttpError::Invalid(errors),
            RouteError::Malformed(m) => HttpError::Malformed(m),
            RouteError::Stale(route) => HttpError::StaleRoute(route),
            RouteError::InvalidAction { message, route } => {
                HttpError::InvalidAction(message, route)
            }
            RouteError::Conflict(m) => HttpError::Conflict(ErrorCode::Conflict, m),
            RouteError::ProfileUnusable(m) => HttpError::Conflict(ErrorCode::ProfileUnusable, m),
            RouteError::Corrupt(m) => HttpError::Internal(m),
            RouteError::Store(s) => s.into(),
        }
    }
}

/// Open a route for a dynamic profile, at its first candidate. The
/// `office` caller needs `office:assign`, every other `profiles:select`.
///
/// With an `Idempotency-Key` header the creation may be repeated: the
/// same key and request from the same caller answer the route the key
/// created (200, `Idempotent-Replayed: true`) instead of a second route.
#[utoipa::path(post, path = "/routes", tag = "routes", operation_id = "create_route", request_body = CreateRoute,
    params(("Idempotency-Key" = Option<String>, Header,
        description = "1 to 255 visible ASCII characters, e.g. a UUID; the caller's own")),
    responses((status = 201, description = "Created: the route, at its profile's first candidate", body = RouteSnapshot),
              (status = 200, description = "The route this idempotency key created earlier",
               body = RouteSnapshot,
               headers(("idempotent-replayed" = String, description = "`true`: an earlier creation's route"))),
              (status = 403, description = "The credential lacks `office:assign` (the `office` caller) or \
                `profiles:select` (every other caller), or a browser write lacks its CSRF token", body = ApiError),
              (status = 404, description = "No profile has `profile_id`", body = ApiError),
              (status = 409, description = "`profile_unusable`: the profile cannot open a route (a configuration \
                error, no candidates); `conflict`: shared circuits kept changing, send it again", body = ApiError),
              (status = 422, description = "The body is JSON of the wrong shape, or the idempotency key is malformed \
                or was sent before with another request; `errors` names each field", body = ApiError),
              (status = 429, description = "Too many route creations from this credential; nothing was created",
               body = ApiError,
               headers(("retry-after" = u64, description = "Seconds until a creation is accepted again")))))]
pub async fn create(
    State(s): State<AppState>,
    Caller(caller): Caller,
    headers: HeaderMap,
    JsonBody(req): JsonBody<CreateRoute>,
) -> HttpResult<Response> {
    may_open_route(
        &caller,
        req.caller.kind == domain::route::CallerKind::Office,
    )
    .map_err(HttpError::Forbidden)?;
    s.access
        .take_opening(&caller)
        .map_err(|seconds| HttpError::RateLimited("route creations", seconds))?;
    let key = idempotency_key(&headers)?.map(|key| RouteKey {
        scope: caller.id.clone(),
        key,
    });
    let (route, creation) = s
        .routes
        .create_opened_by(req, key, Some(&caller.id))
        .await?;
    Ok(match creation {
        Creation::Created => (StatusCode::CREATED, Json(route)).into_response(),
        Creation::Replayed => (
            StatusCode::OK,
            [(REPLAYED, HeaderValue::from_static("true"))],
            Json(route),
        )
            .into_response(),
    })
}

/// Marks an answer given again for a repeated idempotency key.
const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");

/// The request's idempotency key, if it sent one (and only one).
fn idempotency_key(headers: &HeaderMap) -> HttpResult<Option<IdempotencyKey>> {
    let mut values = headers.get_all(idempotency::HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let invalid = |e: FieldError| HttpError::Invalid(vec![e]);
    if values.next().is_some() {
        return Err(invalid(FieldError::new(
            idempotency::HEADER,
            FieldErrorCode::InvalidValue,
            "send one idempotency key, not several",
        )));
    }
    // Bytes outside ASCII read as replacement characters, which the
    // key's own check refuses with its own message.
    IdempotencyKey::parse(&String::from_utf8_lossy(value.as_bytes()))
        .map(Some)
        .map_err(invalid)
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only the routes of this profile.
    pub profile_id: Option<String>,
    /// A route state, e.g. `retry_wait`.
    pub state: Option<String>,
    /// `kanban`, `workflow`, `utility` or `office`.
    pub caller_kind: Option<String>,
    /// Only the routes whose caller reference (`caller.ref`: a Kanban
    /// card, a workflow run) is exactly this.
    pub caller_ref: Option<String>,
    /// The next page: the routes after this route id (the last of the
    /// previous page) in the list's order.
    pub after: Option<String>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<i64>,
}

/// The largest page any list answers.
const MAX_PAGE: i64 = 1000;

/// `limit` as asked, else `default`; outside 1 to 1,000 it names the field.
fn page_limit(limit: Option<i64>, default: i64) -> HttpResult<i64> {
    match limit {
        None => Ok(default),
        Some(n) if (1..=MAX_PAGE).contains(&n) => Ok(n),
        Some(_) => Err(HttpError::Invalid(vec![FieldError::out_of_range(
            "limit",
            "page size",
            1,
            MAX_PAGE as u64,
        )])),
    }
}

/// List routes, newest first (by creation, then id). Pages with a cursor:
/// `after` the last route id of a page reads the next page; routes opened
/// meanwhile never shift it, so no route is seen twice or missed.
#[utoipa::path(get, path = "/routes", tag = "routes", operation_id = "list_routes", params(ListQuery),
    responses((status = 200, description = "The routes, newest first", body = [RouteSnapshot]),
              (status = 422, description = "`state` is not a route state, `caller_kind` not a caller kind, \
                `limit` not between 1 and 1000, or `after` names no route", body = ApiError)))]
pub async fn list(
    State(s): State<AppState>,
    Query(q): Query<ListQuery>,
) -> HttpResult<Json<Vec<RouteSnapshot>>> {
    let invalid = |field: &str, message: String| {
        HttpError::Invalid(vec![FieldError::new(
            field,
            FieldErrorCode::InvalidValue,
            message,
        )])
    };
    if let Some(state) = q.state.as_deref().filter(|s| !s.is_empty()) {
        if domain::route::RouteState::parse(state).is_none() {
            return Err(invalid("state", format!("`{state}` is not a route state")));
        }
    }
    if let Some(kind) = q.caller_kind.as_deref().filter(|s| !s.is_empty()) {
        if domain::route::CallerKind::parse(kind).is_none() {
            return Err(invalid(
                "caller_kind",
                format!("`{kind}` is not a caller kind"),
            ));
        }
    }
    let limit = page_limit(q.limit, 100)?;
    let after = match q.after.as_deref().filter(|a| !a.is_empty()) {
        None => None,
        Some(id) => Some(
            s.routes
                .cursor(&RouteId::from(id.to_string()))
                .await?
                .ok_or_else(|| {
                    invalid(
                        "after",
                        format!("no route has the id `{id}` (pruned?): list from the start again"),
                    )
                })?,
        ),
    };
    let filter = RouteFilter {
        profile_id: q.profile_id,
        state: q.state,
        caller_kind: q.caller_kind,
        caller_ref: q.caller_ref,
        after,
        limit,
    };
    Ok(Json(s.routes.list(filter).await?))
}

/// One route's authoritative snapshot.
#[utoipa::path(get, path = "/routes/{id}", tag = "routes", operation_id = "get_route",
    params(("id" = String, Path, description = "The route's id")),
    responses((status = 200, description = "The route now", body = RouteSnapshot),
              (status = 404, description = "No route has this id", body = ApiError)))]
pub async fn get(
    State(s): State<AppState>,
    Path(id): Path<RouteId>,
) -> HttpResult<Json<RouteSnapshot>> {
    Ok(Json(s.routes.get(&id).await?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AttemptsQuery {
    /// The next page: the attempts before this `seq` (the last of the
    /// previous page).
    pub after: Option<i64>,
    /// At most this many (default and most 1000).
    pub limit: Option<i64>,
}

/// A route's append-only attempt history, newest first, in pages: `after`
/// the last `seq` of a page reads the next (older) one.
#[utoipa::path(get, path = "/routes/{id}/attempts", tag = "routes", operation_id = "list_route_attempts",
    params(("id" = String, Path, description = "The route's id"), AttemptsQuery),
    responses((status = 200, description = "The route's attempts, newest first", body = [Attempt]),
              (status = 404, description = "No route has this id", body = ApiError),
              (status = 422, description = "`limit` is not between 1 and 1000", body = ApiError)))]
pub async fn attempts(
    State(s): State<AppState>,
    Path(id): Path<RouteId>,
    Query(q): Query<AttemptsQuery>,
) -> HttpResult<Json<Vec<Attempt>>> {
    let limit = page_limit(q.limit, MAX_PAGE)?;
    Ok(Json(s.routes.attempts(&id, q.after, limit).await?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RouteEventsQuery {
    /// The next page: the events after this event id (the last of the
    /// previous page).
    pub after: Option<i64>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<i64>,
}

/// A route's committed events, oldest first, in pages: `after` the last
/// event id of a page reads the next one. (`GET /events` streams them as
/// they happen.)
#[utoipa::path(get, path = "/routes/{id}/events", tag = "routes", operation_id = "list_route_events",
    params(("id" = String, Path, description = "The route's id"), RouteEventsQuery),
    responses((status = 200, description = "The route's events, oldest first", body = [domain::route::RouteEvent]),
              (status = 404, description = "No route has this id", body = ApiError),
              (status = 422, description = "`limit` is not between 1 and 1000", body = ApiError)))]
pub async fn route_events(
    State(s): State<AppState>,
    Path(id): Path<RouteId>,
    Query(q): Query<RouteEventsQuery>,
) -> HttpResult<Json<Vec<domain::route::RouteEvent>>> {
    let limit = page_limit(q.limit, 100)?;
    Ok(Json(
        s.routes.events(&id, q.after.unwrap_or(0), limit).await?,
    ))
}

/// Report a failure: an evidence envelope naming the route's generation,
/// invocation and prompt generation. Answers the classification, the
/// decision and the route. Stale evidence changes nothing.
///
/// **Send a `phase`.** Automatic recovery (retry, reset wait, switch)
/// needs the envelope's `phase` to place the failure before any result —
/// `launch`, `session_init` or `prompt` — and no output or tool activity
/// (reported through `/effects` or as `acp_update` items). A missing
/// phase, `stream` or `teardown` is `effect_unsafe` and stops the route
/// for a person; `decision.unsafe_reason` says which rule applied
/// (`boundary_unknown`, `output_started`, `at_teardown`,
/// `effects_reported`, `effects_in_evidence`,
/// `resume_needs_same_candidate`). The one exception is a resumable
/// failure: `resumable: {"provider_session_id", "generation"}` naming the
/// provider session the effects were reported under and the provider-side
/// turn to resume; its retry's dispatch carries `resume`, telling the
/// caller to resume that session instead of sending the prompt again.
#[utoipa::path(post, path = "/routes/{id}/failures", tag = "routes", operation_id = "report_failure",
    params(("id" = String, Path, description = "The route's id")),
    request_body(content = domain::evidence::Evidence, description = "An evidence envelope: route identity (generation, invocation_id, prompt_generation), phase (launch | session_init | prompt permit automatic recovery; stream, teardown or none stop for a person), agent, provider_id, model_id, occurred_at, resumable, items"),
    responses((status = 200, description = "The classification, the decision and the route; a stale report \
                changes nothing (`decision.kind` `stale`)", body = FailureAnswer),
              (status = 400, description = "The body is not JSON, or not an evidence envelope", body = ApiError),
              (status = 404, description = "No route has this id, or it is another caller's", body = ApiError),
              (status = 409, description = "`conflict`: shared circuits kept changing; report the failure again",
               body = ApiError)))]
pub async fn failures(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<RouteId>,
    read: Option<Extension<DecisionRead>>,
    JsonBody(body): JsonBody,
) -> HttpResult<Json<FailureAnswer>> {
    let read = read.map(|Extension(DecisionRead(rows))| rows);
    match &read {
        // The opener came with the route the guard read: no read of its own.
        Some(rows) => own(&caller, rows.opener.as_deref(), "route")?,
        None => own_route(&s, &caller, &id).await?,
    }
    Ok(Json(s.routes.report_failure_read(&id, &body, read).await?))
}

/// Report output or tool activity of the current invocation. Output of an
/// earlier invocation whose failure was already being recovered from is a
/// late effect: while the next attempt is not yet delivered it is
/// withdrawn and the route stops (`effect_after_failure`); once delivered,
/// a `late_effect` attempt row records that the work may have run twice.
#[utoipa::path(post, path = "/routes/{id}/effects", tag = "routes", operation_id = "report_effect",
    params(("id" = String, Path, description = "The route's id")),
    request_body = EffectReport,
    responses((status = 200, description = "The route after the effect", body = RouteSnapshot),
              (status = 404, description = "No route has this id, or it is another caller's", body = ApiError),
              (status = 409, description = "`conflict`: the route kept changing; report the effect again",
               body = ApiError)))]
pub async fn effects(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<RouteId>,
    JsonBody(report): JsonBody<EffectReport>,
) -> HttpResult<Json<RouteSnapshot>> {
    own_route(&s, &caller, &id).await?;
    Ok(Json(s.routes.report_effect(&id, report).await?))
}

/// Report that the current invocation succeeded.
#[utoipa::path(post, path = "/routes/{id}/success", tag = "routes", operation_id = "report_success",
    params(("id" = String, Path, description = "The route's id")),
    request_body = InvocationReport,
    responses((status = 200, description = "The route, active again; its next prompt is a new invocation",
               body = RouteSnapshot),
              (status = 404, description = "No route has this id, or it is another caller's", body = ApiError),
              (status = 409, description = "`stale_generation`: the report names an earlier invocation, or \
                `invalid_action`: the route's state takes no success; `route` is the route now", body = ApiError)))]
pub async fn success(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<RouteId>,
    JsonBody(report): JsonBody<InvocationReport>,
) -> HttpResult<Json<RouteSnapshot>> {
    own_route(&s, &caller, &id).await?;
    Ok(Json(s.routes.report_success(&id, report).await?))
}

/// `retry_now`, `skip_now`, `cancel` or `stop`, with the generation the
/// caller saw. A stale generation answers 409 with the route; `cancel` and
/// `stop` of a stopped route answer 200 with it.
#[utoipa::path(post, path = "/routes/{id}/actions", tag = "routes", operation_id = "act_on_route",
    params(("id" = String, Path, description = "The route's id")),
    request_body = ActionRequest,
    responses((status = 200, description = "The route after the action", body = RouteSnapshot),
              (status = 404, description = "No route has this id", body = ApiError),
              (status = 409, description = "`stale_generation`: the route moved on since `expected_generation`, or \
                `invalid_action`: its state does not allow the action; `route` is the route now", body = ApiError)))]
pub async fn actions(
    State(s): State<AppState>,
    Path(id): Path<RouteId>,
    JsonBody(req): JsonBody<ActionRequest>,
) -> HttpResult<Json<RouteSnapshot>> {
    // Audited (`route.action`) in the action's own transaction.
    Ok(Json(s.routes.act(&id, req).await?))
}

/// Complete the route: the caller's session is over. The route ends
/// (`completed`) with the generation the caller saw; its armed schedules
/// and open dispatches are voided with it. Completing a completed route
/// answers it as it is.
#[utoipa::path(post, path = "/routes/{id}/complete", tag = "routes", operation_id = "complete_route",
    params(("id" = String, Path, description = "The route's id")),
    request_body = EndRequest,
    responses((status = 200, description = "The route, `completed`", body = RouteSnapshot),
              (status = 404, description = "No route has this id, or it is another caller's", body = ApiError),
              (status = 409, description = "`stale_generation`: the route moved on since `expected_generation`, or \
                `invalid_action`: the route was cancelled; `route` is the route now", body = ApiError)))]
pub async fn complete(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<RouteId>,
    JsonBody(req): JsonBody<EndRequest>,
) -> HttpResult<Json<RouteSnapshot>> {
    may_end(&s, &caller, &id).await?;
    end_route(&s, &id, End::Complete, req).await
}

/// Cancel the route: it is given up. The route ends (`cancelled`) with
/// the generation the caller saw; its armed schedules and open dispatches
/// are voided with it. Cancelling a cancelled route answers it as it is.
/// (The `cancel` action of `/actions` is another thing: it cancels a wait
/// and stops the route for a person.)
#[utoipa::path(post, path = "/routes/{id}/cancel", tag = "routes", operation_id = "cancel_route",
    params(("id" = String, Path, description = "The route's id")),
    request_body = EndRequest,
    responses((status = 200, description = "The route, `cancelled`", body = RouteSnapshot),
              (status = 404, description = "No route has this id, or it is another caller's", body = ApiError),
              (status = 409, description = "`stale_generation`: the route moved on since `expected_generation`, or \
                `invalid_action`: the route was completed; `route` is the route now", body = ApiError)))]
pub async fn cancel(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<RouteId>,
    JsonBody(req): JsonBody<EndRequest>,
) -> HttpResult<Json<RouteSnapshot>> {
    may_end(&s, &caller, &id).await?;
    end_route(&s, &id, End::Cancel, req).await
}

/// Ends the route; who did is a route action in the audit trail, written
/// in the end's own transaction.
async fn end_route(
    s: &AppState,
    id: &RouteId,
    how: End,
    req: EndRequest,
) -> HttpResult<Json<RouteSnapshot>> {
    Ok(Json(s.routes.end(id, how, req).await?))
}

/// Who may end a route: a person or tool with `routes:act` any route (as
/// with the manual actions); a caller with only `evidence:submit` the
/// routes it opened (its own session).
async fn may_end(s: &AppState, caller: &Principal, id: &RouteId) -> HttpResult<()> {
    if caller.grants(Permission::RoutesAct) {
        return Ok(());
    }
    own_route(s, caller, id).await
}

/// The answer for `what` (`route`, `dispatch`) when `caller` may not
/// report on what `opener` opened: the 404 of one that does not exist, so
/// a refusal tells nobody which routes exist.
fn own(caller: &Principal, opener: Option<&str>, what: &'static str) -> HttpResult<()> {
    if may_report_on(caller, opener) {
        Ok(())
    } else {
        Err(RouteError::NotFound(what).into())
    }
}

/// [`own`] for route `id`, reading its opener unless `caller` may report
/// on any caller's routes.
async fn own_route(s: &AppState, caller: &Principal, id: &RouteId) -> HttpResult<()> {
    if caller.grants(Permission::RoutesAny) {
        return Ok(());
    }
    let opener = s.store.route_opener(id.as_str()).await?;
    own(caller, opener.as_deref(), "route")
}

/// Claim due dispatches with a lease; waits up to `wait_seconds` when none is due.
#[utoipa::path(post, path = "/dispatches/claim", tag = "dispatches", operation_id = "claim_dispatches", request_body = ClaimRequest,
    responses((status = 200, description = "The dispatches claimed (none when nothing fell due in `wait_seconds`)",
               body = ClaimAnswer)))]
pub async fn claim(
    State(s): State<AppState>,
    Caller(caller): Caller,
    JsonBody(req): JsonBody<ClaimRequest>,
) -> HttpResult<Json<ClaimAnswer>> {
    // Another caller's route (named or not) has nothing to claim, exactly
    // like a route that does not exist.
    let opened_by = (!caller.grants(Permission::RoutesAny)).then(|| caller.id.clone());
    Ok(Json(ClaimAnswer {
        dispatches: s.routes.claim_opened_by(req, opened_by).await?,
    }))
}

/// Acknowledge that a claimed dispatch's prompt was delivered.
#[utoipa::path(post, path = "/dispatches/{id}/ack", tag = "dispatches", operation_id = "acknowledge_dispatch",
    params(("id" = String, Path, description = "The dispatch's id")),
    request_body = AckRequest,
    responses((status = 200, description = "Delivered: the route, active on the dispatch's invocation", body = RouteSnapshot),
              (status = 404, description = "No dispatch has this id, or it is another caller's", body = ApiError),
              (status = 409, description = "The dispatch was withdrawn (its route moved on or its lease ran out): \
                its prompt must not run; `route` is the route now", body = ApiError)))]
pub async fn ack(
    State(s): State<AppState>,
    Caller(caller): Caller,
    Path(id): Path<String>,
    JsonBody(req): JsonBody<AckRequest>,
) -> HttpResult<Json<RouteSnapshot>> {
    if !caller.grants(Permission::RoutesAny) {
        let opener = s.store.dispatch_opener(&id).await?;
        own(&caller, opener.as_deref(), "dispatch")?;
    }
    Ok(Json(s.routes.acknowledge(&id, req.generation).await?))
}

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventsQuery {
    /// Only this route's events.
    pub route_id: Option<String>,
    /// Resume after this event id (the `Last-Event-ID` header wins).
    pub after: Option<i64>,
}

/// Server-sent events: every committed transition, with ids; reconnect with
/// `Last-Event-ID` to resume without gaps. Without either, starts from now.
#[utoipa::path(get, path = "/events", tag = "routes", operation_id = "stream_events",
    params(EventsQuery,
        ("Last-Event-ID" = Option<i64>, Header,
         description = "Resume after this event id (what EventSource sends when it reconnects); wins over `after`")),
    responses((status = 200, description = "Server-sent events, each `data` a RouteEvent payload; kept open",
        body = String, content_type = "text/event-stream"),
        (status = 400, description = "`after` or `Last-Event-ID` is not a number", body = ApiError)))]
pub async fn events(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<EventsQuery>,
) -> HttpResult<Sse<impl futures::Stream<Item = Result<Event, Infallible>>>> {
    let header = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.trim()
                .parse::<i64>()
                .map_err(|_| HttpError::Malformed("Last-Event-ID must be a number".into()))
        })
        .transpose()?;
    let mut last = match header.or(q.after) {
        Some(id) => id,
        None => s.store.last_event_id().await?,
    };
    // Subscribed before the backlog is read: see routes::feed.
    let mut feed = s.routes.feed().await?;
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let store = s.store.clone();
    let signals = s.routes.signals().clone();
    // The stream outlives the request's one credential check: it checks
    // again every few seconds and ends once the credential is no longer
    // valid (revoked, signed out, its person disabled or removed).
    let (access, credentials) = (s.access.clone(), headers.clone());
    let mut recheck = tokio::time::interval(super::STREAM_RECHECK);
    recheck.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // `route_id=` means every route, in the store's reads and here alike.
    let route = q.route_id.filter(|r| !r.is_empty());
    tokio::spawn(async move {
        let send = |e: &EventRow| tx.send(Ok(sse_event(e)));
        loop {
            // The backlog after `last`, from the store: on connecting, and
            // again whenever this stream fell behind the shared tail.
            loop {
                let batch = match store.events_after(last, route.as_deref(), feed::PAGE).await {
                    Ok(b) => b,
                    Err(e) => {
                        // Nothing after `last` may be skipped: look again.
                        tracing::warn!(error = %e, "event stream read failed; retrying in 1 s");
                        tokio::select! {
                            _ = tokio::time::sleep(Duration::from_secs(1)) => continue,
                            _ = tx.closed() => return,
                            _ = signals.shutdown.cancelled() => return,
                        }
                    }
                };
                for e in &batch {
                    last = e.id;
                    if send(e).await.is_err() {
                        return;
                    }
                }
                if (batch.len() as i64) < feed::PAGE {
                    break;
                }
            }
            // Then what the tail reads, filtered here.
            loop {
                tokio::select! {
                    r = feed.recv() => match r {
                        Ok(batch) => {
                            let seen = last;
                            for e in batch.iter().filter(|e| e.id > seen) {
                                last = e.id;
                                if route.as_deref().is_some_and(|r| r != e.route_id) {
                                    continue;
                                }
                                if send(e).await.is_err() {
                                    return;
                                }
                            }
                        }
                        // Too far behind: read the store from `last` again.
                        Err(broadcast::error::RecvError::Lagged(_)) => break,
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                    _ = tx.closed() => return,
                    _ = recheck.tick() => {
                        if !still_admitted(&access, &credentials).await {
                            return;
                        }
                    }
                    _ = signals.shutdown.cancelled() => {
                        // Said before the stream ends, so a client can tell a
                        // server going away from a lost connection. It has no
                        // id: resuming from the last event's id loses nothing.
                        let _ = tx.send(Ok(shutdown_event())).await;
                        return;
                    }
                }
            }
        }
    });
    Ok(Sse::new(ReceiverStream::new(rx))
        .keep_alive(KeepAlive::new().interval(s.limits.sse_keep_alive())))
}

/// Whether the credential `headers` carry would still be let in to the
/// event stream. A database that cannot answer keeps the stream open: an
/// outage is not a revocation.
async fn still_admitted(access: &crate::auth::Access, headers: &HeaderMap) -> bool {
    match access.resolve(headers).await {
        Ok(credential) => {
            crate::auth::rules::decide(crate::auth::Rule::SignedIn, &credential, false)
                == crate::auth::Decision::Allow
        }
        Err(_) => true,
    }
}

/// The event stream's last frame when the server shuts down: `event:
/// shutdown`, with a hint to reconnect after a few seconds (the
/// `retry` field EventSource honours).
pub const SHUTDOWN_EVENT: &str = "shutdown";

/// One committed event as the stream sends it.
fn sse_event(e: &EventRow) -> Event {
    let actor = match &e.actor {
        Some(actor) => format!(",\"actor\":{actor}"),
        None => String::new(),
    };
    let payload = format!(
        "{{\"id\":{},\"kind\":{},\"route\":{}{actor}}}",
        e.id,
        serde_json::Value::from(e.kind.as_str()),
        e.payload
    );
    Event::default()
        .id(e.id.to_string())
        .event(e.kind.clone())
        .data(payload)
}

fn shutdown_event() -> Event {
    Event::default()
        .event(SHUTDOWN_EVENT)
        .retry(Duration::from_secs(3))
        .data(r#"{"reason":"the server is shutting down; reconnect with Last-Event-ID to resume"}"#)
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AdvanceClock {
    pub advance_seconds: f64,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ClockAnswer {
    pub now: chrono::DateTime<chrono::Utc>,
    /// Schedules that fired because of this advance.
    pub fired: usize,
}

/// Move the clock forward (only with `serve --test-clock`), then fire
/// everything due and stop routes whose dispatch lease ran out before
/// answering.
#[utoipa::path(post, path = "/test/clock", tag = "test", operation_id = "advance_test_clock", request_body = AdvanceClock,
    responses((status = 200, description = "The clock now, and how many schedules fired", body = ClockAnswer),
              (status = 403, description = "The credential is not an administrator's, a browser write lacks its \
                CSRF token, or the server runs without `--test-clock`", body = ApiError),
              (status = 422, description = "The body is JSON of the wrong shape, or `advance_seconds` is not \
                between 0 and 31,536,000; `errors` names the field", body = ApiError)))]
pub async fn advance_clock(
    State(s): State<AppState>,
    _: TestClockEnabled,
    JsonBody(req): JsonBody<AdvanceClock>,
) -> HttpResult<Json<ClockAnswer>> {
    if !req.advance_seconds.is_finite() || !(0.0..=31_536_000.0).contains(&req.advance_seconds) {
        return Err(HttpError::Invalid(vec![FieldError::out_of_range(
            "advance_seconds",
            "advance (seconds)",
            0,
            31_536_000,
        )]));
    }
    s.clock.advance(chrono::Duration::milliseconds(
        (req.advance_seconds * 1000.0) as i64,
    ));
    let fired = s.routes.fire_due().await?;
    s.routes.stop_ambiguous().await?;
    s.routes.stop_unclaimed().await?;
    Ok(Json(ClockAnswer {
        now: s.clock.now(),
        fired,
    }))
}
