//! The runner's view of the service: the REST calls it makes, typed with
//! the same wire types the server answers with. A service that is briefly
//! unreachable (a restart, a 503) is retried for a while. Reports are safe
//! to repeat whatever happened to the first try, because the service fences
//! them by generation and invocation (a repeated failure report is stale, a
//! repeated acknowledgement is answered with the route). A route is created
//! with an idempotency key, so its creation is as safe to repeat: the
//! service answers a repeat with the route the key created. Creating a
//! profile (the demo's) is repeated only when the request surely never
//! arrived (the connection failed) or was refused unchanged (503).

use chrono::{DateTime, Utc};
use domain::api::{
    AckRequest, ActionRequest, ClaimAnswer, ClaimRequest, CreateRoute, EffectKind, EffectReport,
    FailureAnswer, InvocationReport,
};
use domain::circuit::CircuitList;
use domain::concrete::{EvaluateAnswer, EvaluateRequest};
use domain::error::{ApiError, ErrorCode};
use domain::evidence::Evidence;
use domain::ids::{Generation, ProfileId, RouteId};
use domain::profile::Profile;
use domain::route::{Action, Caller, CallerKind, Dispatch, RouteSnapshot};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// How long a call keeps trying while the service is unreachable or
/// answers 503, before the runner gives up.
const UNREACHABLE_PATIENCE: Duration = Duration::from_secs(60);

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("cannot reach the service at {url}: {message}")]
    Unreachable { url: String, message: String },
    /// The service answered with an error body.
    #[error("{} ({}): {}", .0.error, .0.status, .0.message)]
    Api(Box<ApiError>),
    #[error("unexpected answer from {url}: {message}")]
    Decode { url: String, message: String },
    /// The profile cannot serve this run (a candidate is gone).
    #[error("{0}")]
    Profile(String),
}

pub type Result<T, E = ServiceError> = std::result::Result<T, E>;

impl ServiceError {
    /// The route the service answered with, for a stale or refused report.
    pub fn route(&self) -> Option<&RouteSnapshot> {
        match self {
            ServiceError::Api(e) => e.route.as_deref(),
            _ => None,
        }
    }
}

/// The identity every report about an invocation carries.
pub type Invocation = InvocationReport;

/// A client for one service.
#[derive(Clone)]
pub struct Service {
    base: String,
    token: Option<String>,
    http: reqwest::Client,
}

impl Service {
    pub fn new(server: &str, token: Option<String>) -> Result<Service> {
        let base = server.trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ServiceError::Unreachable {
                url: base,
                message: "the server URL must start with http:// or https://".into(),
            });
        }
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .build()
            .map_err(|e| ServiceError::Unreachable {
                url: base.clone(),
                message: e.to_string(),
            })?;
        Ok(Service { base, token, http })
    }

    /// The web app's page for a route, for people.
    pub fn route_page(&self, route_id: &RouteId) -> String {
        format!("{}/routes/{route_id}", self.base)
    }

    pub async fn profiles(&self) -> Result<Vec<Profile>> {
        self.call(reqwest::Method::GET, "/profiles", None, None)
            .await
    }

    pub async fn profile(&self, id: &ProfileId) -> Result<Profile> {
        self.call(reqwest::Method::GET, &format!("/profiles/{id}"), None, None)
            .await
    }

    /// Creates a profile (the demo's).
    pub async fn create_profile(&self, body: &Value) -> Result<Profile> {
        self.create("/profiles", body.clone()).await
    }

    pub async fn open_route(
        &self,
        profile_id: &ProfileId,
        caller: CallerKind,
        reference: &str,
    ) -> Result<RouteSnapshot> {
        let body = encode(&CreateRoute {
            profile_id: profile_id.clone(),
            caller: Caller {
                kind: caller,
                reference: reference.to_string(),
            },
        })?;
        // One key for every try of this creation: a try whose answer was
        // lost (the connection closed after the request arrived) is
        // answered by the next with the route it created.
        let key = uuid::Uuid::new_v4().to_string();
        self.send(
            reqwest::Method::POST,
            "/routes",
            Some(body),
            None,
            Repeat::Always,
            Some(&key),
        )
        .await
    }

    pub async fn route(&self, id: &RouteId) -> Result<RouteSnapshot> {
        self.call(reqwest::Method::GET, &format!("/routes/{id}"), None, None)
            .await
    }

    pub async fn report_failure(
        &self,
        route_id: &RouteId,
        envelope: &Evidence,
    ) -> Result<FailureAnswer> {
        self.call(
            reqwest::Method::POST,
            &format!("/routes/{route_id}/failures"),
            Some(encode(envelope)?),
            None,
        )
        .await
    }

    pub async fn report_effect(
        &self,
        route_id: &RouteId,
        invocation: &Invocation,
        kind: EffectKind,
        provider_session_id: Option<&str>,
    ) -> Result<RouteSnapshot> {
        let body = encode(&EffectReport {
            generation: invocation.generation,
            invocation_id: invocation.invocation_id.clone(),
            prompt_generation: invocation.prompt_generation,
            kind,
            provider_session_id: provider_session_id.map(str::to_string),
        })?;
        self.call(
            reqwest::Method::POST,
            &format!("/routes/{route_id}/effects"),
            Some(body),
            None,
        )
        .await
    }

    pub async fn report_success(
        &self,
        route_id: &RouteId,
        invocation: &Invocation,
    ) -> Result<RouteSnapshot> {
        self.call(
            reqwest::Method::POST,
            &format!("/routes/{route_id}/success"),
            Some(encode(invocation)?),
            None,
        )
        .await
    }

    /// `retry_now`, `skip_now`, `cancel` or `stop`.
    pub async fn act(
        &self,
        route_id: &RouteId,
        action: Action,
        expected_generation: Generation,
    ) -> Result<RouteSnapshot> {
        self.call(
            reqwest::Method::POST,
            &format!("/routes/{route_id}/actions"),
            Some(encode(&ActionRequest {
                action,
                expected_generation,
            })?),
            None,
        )
        .await
    }

    /// The decision the service would take for a concrete session's
    /// failure (`POST /policies/evaluate`): nothing is stored or scheduled.
    pub async fn evaluate(&self, request: &EvaluateRequest) -> Result<EvaluateAnswer> {
        self.call(
            reqwest::Method::POST,
            "/policies/evaluate",
            Some(encode(request)?),
            None,
        )
        .await
    }

    /// The server's clock, which every deadline it answers is on. Read
    /// from the circuit list, which carries it for the same reason.
    pub async fn server_time(&self) -> Result<DateTime<Utc>> {
        let list: CircuitList = self
            .call(reqwest::Method::GET, "/circuits", None, None)
            .await?;
        Ok(list.server_time)
    }

    /// Long-polls for this route's next dispatch (up to `wait` seconds).
    pub async fn claim(
        &self,
        route_id: &RouteId,
        lease_seconds: u32,
        wait_seconds: u32,
    ) -> Result<Option<Dispatch>> {
        let body = encode(&ClaimRequest {
            route_id: Some(route_id.clone()),
            caller_kind: None,
            lease_seconds,
            wait_seconds,
        })?;
        let reply: ClaimAnswer = self
            .call(
                reqwest::Method::POST,
                "/dispatches/claim",
                Some(body),
                Some(Duration::from_secs(wait_seconds as u64 + 30)),
            )
            .await?;
        Ok(reply.dispatches.into_iter().next())
    }

    pub async fn acknowledge(&self, dispatch: &Dispatch) -> Result<RouteSnapshot> {
        self.call(
            reqwest::Method::POST,
            &format!("/dispatches/{}/ack", dispatch.id),
            Some(encode(&AckRequest {
                generation: dispatch.generation,
            })?),
            None,
        )
        .await
    }

    async fn call<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        timeout: Option<Duration>,
    ) -> Result<T> {
        self.send(method, path, body, timeout, Repeat::Always, None)
            .await
    }

    /// `call` for a request that must not be applied twice.
    async fn create<T: DeserializeOwned>(&self, path: &str, body: Value) -> Result<T> {
        self.send(
            reqwest::Method::POST,
            path,
            Some(body),
            None,
            Repeat::IfNotSent,
            None,
        )
        .await
    }

    async fn send<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
        timeout: Option<Duration>,
        repeat: Repeat,
        idempotency_key: Option<&str>,
    ) -> Result<T> {
        let url = format!("{}/api/v1{path}", self.base);
        let give_up = tokio::time::Instant::now() + UNREACHABLE_PATIENCE;
        let mut pause = Duration::from_millis(250);
        loop {
            let mut request = self
                .http
                .request(method.clone(), &url)
                .timeout(timeout.unwrap_or(Duration::from_secs(30)));
            if let Some(token) = &self.token {
                request = request.bearer_auth(token);
            }
            if let Some(key) = idempotency_key {
                request = request.header("Idempotency-Key", key);
            }
            if let Some(b) = &body {
                request = request.json(b);
            }
            let outcome = match request.send().await {
                Ok(response) => {
                    let status = response.status();
                    // A rate limit says when to come back; nothing was recorded.
                    let retry_after = response
                        .headers()
                        .get(reqwest::header::RETRY_AFTER)
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    let text = response.text().await.unwrap_or_default();
                    if status.is_success() {
                        return serde_json::from_str(&text).map_err(|e| ServiceError::Decode {
                            url: url.clone(),
                            message: e.to_string(),
                        });
                    }
                    let mut error: ApiError =
                        serde_json::from_str(&text).unwrap_or_else(|_| ApiError {
                            error: ErrorCode::HttpError,
                            message: text.chars().take(200).collect(),
                            errors: Vec::new(),
                            profile: None,
                            route: None,
                            status: 0,
                        });
                    error.status = status.as_u16();
                    if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                        if let Some(seconds) = retry_after {
                            pause = pause.max(Duration::from_secs(seconds.min(60)));
                        }
                    } else if status != reqwest::StatusCode::SERVICE_UNAVAILABLE {
                        return Err(ServiceError::Api(Box::new(error)));
                    }
                    ServiceError::Api(Box::new(error))
                }
                Err(e) => {
                    let error = ServiceError::Unreachable {
                        url: self.base.clone(),
                        message: describe_reqwest(&e),
                    };
                    // A timeout may have been applied: do not create twice.
                    if repeat == Repeat::IfNotSent && !e.is_connect() {
                        return Err(error);
                    }
                    error
                }
            };
            if tokio::time::Instant::now() + pause > give_up {
                return Err(outcome);
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(5));
        }
    }
}

/// Whether a failed request may be sent again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Repeat {
    Always,
    /// Only when it surely did not arrive, or was refused unchanged (503).
    IfNotSent,
}

/// reqwest's top-level message hides the cause ("error sending request").
/// A request body as JSON, once, so every try sends the same bytes.
fn encode<T: Serialize>(body: &T) -> Result<Value> {
    serde_json::to_value(body).map_err(|e| ServiceError::Decode {
        url: String::new(),
        message: format!("the request body could not be written as JSON: {e}"),
    })
}

fn describe_reqwest(e: &reqwest::Error) -> String {
    let mut message = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        message = format!("{message}: {s}");
        source = s.source();
    }
    message
}
