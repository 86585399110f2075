//! How the UI talks to the backend.
//!
//! In the browser every call goes to the public REST API (`/api/v1/…`), the
//! same one external clients use, so the UI sees exactly the API's errors.
//! While the server renders a page, the same calls go straight to the
//! [`Backend`] the server provides as context — no HTTP round trip to itself.

use domain::catalogue::CatalogueInForce;
use domain::circuit::CircuitList;
use domain::error::{ApiError, ErrorCode, Viewer};
use domain::ids::Generation;
use domain::profile::Profile;
use domain::route::{Action, Attempt, RouteSnapshot};

/// The viewer of this page. On the server, from the request the page
/// answers; in the browser, from the API.
pub async fn viewer() -> Result<Viewer, ApiError> {
    #[cfg(feature = "ssr")]
    {
        leptos::prelude::use_context::<Viewer>()
            .ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "Not signed in."))
    }
    #[cfg(not(feature = "ssr"))]
    {
        browser::get("/api/v1/session").await
    }
}

/// Ends this browser's session.
pub async fn sign_out() -> Result<(), ApiError> {
    browser::send::<serde_json::Value>("POST", "/api/v1/session/sign-out", &serde_json::Value::Null)
        .await
        .map(|_| ())
}

/// Reads the server renderer needs. The server implements it over its store.
#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait Backend: Send + Sync {
    async fn list_profiles(&self) -> Result<Vec<Profile>, ApiError>;
    async fn get_profile(&self, id: &str) -> Result<Profile, ApiError>;
    /// Routes, newest first; only `profile_id`'s, and those whose caller
    /// reference is `caller_ref`, when given.
    async fn list_routes(
        &self,
        profile_id: Option<&str>,
        caller_ref: Option<&str>,
    ) -> Result<Vec<RouteSnapshot>, ApiError>;
    async fn get_route(&self, id: &str) -> Result<RouteSnapshot, ApiError>;
    /// A route's attempt history, newest first.
    async fn route_attempts(&self, id: &str) -> Result<Vec<Attempt>, ApiError>;
    /// Every shared resource circuit.
    async fn list_circuits(&self) -> Result<CircuitList, ApiError>;
    /// Everyone who signs in (administrators only).
    async fn list_people(&self) -> Result<Vec<domain::people::Person>, ApiError>;
    /// The catalogue this server classifies with.
    async fn catalogue_in_force(&self) -> Result<CatalogueInForce, ApiError>;
    /// The unknown log (`catalogue:read`).
    async fn unknown_log(&self) -> Result<domain::catalogue::UnknownSnapshot, ApiError>;
    /// What the catalogue in force makes of the unknown log (`catalogue:read`).
    async fn reclassify_unknown(
        &self,
    ) -> Result<domain::catalogue::UnknownReclassification, ApiError>;
}

#[cfg(feature = "ssr")]
pub type SharedBackend = std::sync::Arc<dyn Backend>;

#[cfg(feature = "ssr")]
fn backend() -> Result<SharedBackend, ApiError> {
    leptos::prelude::use_context::<SharedBackend>()
        .ok_or_else(|| ApiError::new(ErrorCode::Internal, "no backend in context"))
}

pub async fn list_profiles() -> Result<Vec<Profile>, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.list_profiles().await
    }
    #[cfg(not(feature = "ssr"))]
    {
        browser::get("/api/v1/profiles").await
    }
}

pub async fn get_profile(id: String) -> Result<Profile, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.get_profile(&id).await
    }
    #[cfg(not(feature = "ssr"))]
    {
        browser::get(&format!("/api/v1/profiles/{}", browser::encode(&id))).await
    }
}

/// Routes, newest first; only those of `profile_id`, and those whose
/// caller reference is `caller_ref`, when given.
pub async fn list_routes(
    profile_id: Option<String>,
    caller_ref: Option<String>,
) -> Result<Vec<RouteSnapshot>, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?
            .list_routes(profile_id.as_deref(), caller_ref.as_deref())
            .await
    }
    #[cfg(not(feature = "ssr"))]
    {
        let mut query = Vec::new();
        if let Some(p) = profile_id {
            query.push(format!("profile_id={}", browser::encode(&p)));
        }
        if let Some(r) = caller_ref {
            query.push(format!("caller_ref={}", browser::encode(&r)));
        }
        let path = match query.is_empty() {
            true => "/api/v1/routes".to_string(),
            false => format!("/api/v1/routes?{}", query.join("&")),
        };
        browser::get(&path).await
    }
}

pub async fn get_route(id: String) -> Result<RouteSnapshot, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.get_route(&id).await
    }
    #[cfg(not(feature = "ssr"))]
    {
        browser::get(&format!("/api/v1/routes/{}", browser::encode(&id))).await
    }
}

/// A route's append-only attempt history, newest first.
pub async fn route_attempts(id: String) -> Result<Vec<Attempt>, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.route_attempts(&id).await
    }
    #[cfg(not(feature = "ssr"))]
    {
        browser::get(&format!("/api/v1/routes/{}/attempts", browser::encode(&id))).await
    }
}

/// Every shared resource circuit, not closed ones first.
pub async fn list_circuits() -> Result<CircuitList, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.list_circuits().await
    }
    #[cfg(not(feature = "ssr"))]
    {
        browser::get("/api/v1/circuits").await
    }
}

/// The catalogue this server classifies with (its version, source and
/// load time).
pub async fn catalogue_in_force() -> Result<CatalogueInForce, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.catalogue_in_force().await
    }
    #[cfg(not(feature = "ssr"))]
    {
        browser::get("/api/v1/catalogue/current").await
    }
}

/// The unknown log. The Catalogue page that shows it is rendered on the
/// server only (no island reads it), so the browser never asks.
pub async fn unknown_log() -> Result<domain::catalogue::UnknownSnapshot, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.unknown_log().await
    }
    #[cfg(not(feature = "ssr"))]
    {
        Err(server_only())
    }
}

/// What the catalogue in force makes of the unknown log (server-rendered
/// like [`unknown_log`]).
pub async fn reclassify_unknown() -> Result<domain::catalogue::UnknownReclassification, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.reclassify_unknown().await
    }
    #[cfg(not(feature = "ssr"))]
    {
        Err(server_only())
    }
}

#[cfg(not(feature = "ssr"))]
fn server_only() -> ApiError {
    ApiError::new(ErrorCode::Internal, "rendered by the server only")
}

/// Everyone who signs in (administrators only).
pub async fn list_people() -> Result<Vec<domain::people::Person>, ApiError> {
    #[cfg(feature = "ssr")]
    {
        backend()?.list_people().await
    }
    #[cfg(not(feature = "ssr"))]
    {
        browser::get("/api/v1/people").await
    }
}

/// Disables (`disable`) or enables (`enable`) a person.
pub async fn person_action(
    id: &str,
    action: &'static str,
) -> Result<domain::people::Person, ApiError> {
    browser::send(
        "POST",
        &format!("/api/v1/people/{}/{action}", browser::encode(id)),
        &serde_json::Value::Null,
    )
    .await
}

/// Removes a person.
pub async fn remove_person(id: &str) -> Result<(), ApiError> {
    browser::send::<serde_json::Value>(
        "DELETE",
        &format!("/api/v1/people/{}", browser::encode(id)),
        &serde_json::Value::Null,
    )
    .await
    .map(|_| ())
}

/// Sets a person's permissions.
pub async fn set_person_permissions(
    id: &str,
    permissions: Vec<domain::access::Permission>,
) -> Result<domain::people::Person, ApiError> {
    let mut body = serde_json::Map::new();
    body.insert(
        "permissions".to_string(),
        serde_json::Value::Array(permissions.into_iter().map(|p| p.as_str().into()).collect()),
    );
    browser::send(
        "PUT",
        &format!("/api/v1/people/{}/permissions", browser::encode(id)),
        &serde_json::Value::Object(body),
    )
    .await
}

/// Sends a manual action (`retry_now`, `skip_now`, `cancel`, `stop`) fenced
/// by the generation the page shows. A stale generation answers 409 with
/// the authoritative route in [`ApiError::route`].
pub async fn act_on_route(
    id: &str,
    action: Action,
    expected_generation: Generation,
) -> Result<RouteSnapshot, ApiError> {
    browser::send(
        "POST",
        &format!("/api/v1/routes/{}/actions", browser::encode(id)),
        // By hand, not `json!`, which serialises each value into a `Value`
        // (serde's serializer in the browser bundle for two fields).
        &{
            let mut body = serde_json::Map::new();
            body.insert("action".to_string(), action.as_str().into());
            body.insert(
                "expected_generation".to_string(),
                expected_generation.get().into(),
            );
            serde_json::Value::Object(body)
        },
    )
    .await
}

/// An administrator's circuit control: `release` closes the circuit now,
/// `probe` makes it probe now. Answers the circuit after it.
pub async fn control_circuit(
    scope: domain::circuit::CircuitScope,
    resource: &str,
    control: &'static str,
) -> Result<domain::circuit::CircuitView, ApiError> {
    let mut body = serde_json::Map::new();
    body.insert("scope".to_string(), scope.as_str().into());
    body.insert("resource".to_string(), resource.into());
    browser::send(
        "POST",
        &format!("/api/v1/circuits/{control}"),
        &serde_json::Value::Object(body),
    )
    .await
}

/// Every webhook subscription, oldest first (administrators; browser only).
pub async fn list_webhooks() -> Result<Vec<domain::webhook::Webhook>, ApiError> {
    browser::get("/api/v1/webhooks").await
}

/// Subscribes `url` to `events`, signed with `secret`.
pub async fn create_webhook(
    url: &str,
    events: &[domain::webhook::WebhookEvent],
    secret: &str,
) -> Result<domain::webhook::Webhook, ApiError> {
    let mut body = serde_json::Map::new();
    body.insert("url".to_string(), url.into());
    body.insert(
        "events".to_string(),
        serde_json::Value::Array(events.iter().map(|e| e.as_str().into()).collect()),
    );
    body.insert("secret".to_string(), secret.into());
    browser::send("POST", "/api/v1/webhooks", &serde_json::Value::Object(body)).await
}

/// Removes a subscription and its undelivered deliveries.
pub async fn remove_webhook(id: &str) -> Result<(), ApiError> {
    browser::send::<serde_json::Value>(
        "DELETE",
        &format!("/api/v1/webhooks/{}", browser::encode(id)),
        &serde_json::Value::Null,
    )
    .await
    .map(|_| ())
}

/// A subscription's newest deliveries (browser only).
pub async fn webhook_deliveries(id: &str) -> Result<domain::webhook::DeliveryLog, ApiError> {
    browser::get(&format!(
        "/api/v1/webhooks/{}/deliveries?limit=50",
        browser::encode(id)
    ))
    .await
}

/// Every kept revision of a profile, oldest first (browser only).
pub async fn profile_revisions(id: &str) -> Result<Vec<domain::audit::ProfileRevision>, ApiError> {
    browser::get(&format!(
        "/api/v1/profiles/{}/revisions",
        browser::encode(id)
    ))
    .await
}

/// Creates a profile from its JSON body (browser only).
pub async fn create_profile(body: serde_json::Value) -> Result<Profile, ApiError> {
    browser::send("POST", "/api/v1/profiles", &body).await
}

/// Updates a profile; `body` carries the `revision` it was based on.
pub async fn update_profile(id: &str, body: serde_json::Value) -> Result<Profile, ApiError> {
    browser::send(
        "PUT",
        &format!("/api/v1/profiles/{}", browser::encode(id)),
        &body,
    )
    .await
}

/// Deletes a profile at the revision the page shows.
pub async fn delete_profile(id: &str, revision: i64) -> Result<(), ApiError> {
    let path = format!(
        "/api/v1/profiles/{}?revision={revision}",
        browser::encode(id)
    );
    browser::send::<serde_json::Value>("DELETE", &path, &serde_json::Value::Null)
        .await
        .map(|_| ())
}

#[cfg(feature = "hydrate")]
mod browser {
    use super::{ApiError, ErrorCode};
    use domain::wire_json::FromJson;
    use wasm_bindgen::{JsCast, JsValue};
    use wasm_bindgen_futures::JsFuture;
    use web_sys::{Headers, Request, RequestInit, Response};

    pub fn encode(s: &str) -> String {
        String::from(js_sys::encode_uri_component(s))
    }

    /// The `kandev_csrf` cookie the server set at sign-in.
    fn csrf_token() -> Option<String> {
        let cookies = js_sys::Reflect::get(
            &leptos::prelude::document(),
            &wasm_bindgen::JsValue::from_str("cookie"),
        )
        .ok()?
        .as_string()?;
        cookies
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .find(|(name, _)| *name == "kandev_csrf")
            .map(|(_, value)| value.to_string())
    }

    /// An answer's status and body, or the error a failed request is.
    /// Not generic: the fetch and its future are compiled once, and only
    /// [`parse`] is made per answer type. The browser's own `fetch`, with
    /// its default (same-origin) credentials, so the session cookie goes
    /// along.
    async fn fetch(
        method: &str,
        path: &str,
        body: Option<&serde_json::Value>,
    ) -> Result<(u16, String), ApiError> {
        let init = RequestInit::new();
        init.set_method(method);
        if let Some(body) = body {
            let headers = Headers::new().map_err(internal)?;
            // Every write proves it comes from this app's page: the
            // session's CSRF token is in a cookie only this site's pages
            // can read.
            if let Some(token) = csrf_token() {
                headers.set("x-csrf-token", &token).map_err(internal)?;
            }
            if !body.is_null() {
                headers
                    .set("content-type", "application/json")
                    .map_err(internal)?;
                init.set_body(&JsValue::from_str(&body.to_string()));
            }
            init.set_headers(&headers);
        }
        let request = Request::new_with_str_and_init(path, &init).map_err(internal)?;
        let unreachable = |e: JsValue| {
            ApiError::new(
                ErrorCode::Network,
                format!("The server could not be reached: {}", js_message(&e)),
            )
        };
        let resp: Response = JsFuture::from(leptos::prelude::window().fetch_with_request(&request))
            .await
            .map_err(unreachable)?
            .unchecked_into();
        let status = resp.status();
        // A body that cannot be read is an empty one: an answer that needs
        // one then fails to parse and says so.
        let text = match resp.text() {
            Ok(promise) => JsFuture::from(promise)
                .await
                .ok()
                .and_then(|t| t.as_string()),
            Err(_) => None,
        }
        .unwrap_or_default();
        if resp.ok() {
            Ok((status, text))
        } else {
            let mut err = domain::wire_json::from_str::<ApiError>(&text).unwrap_or_else(|_| {
                ApiError::new(ErrorCode::Internal, format!("The server answered {status}"))
            });
            err.status = status;
            Err(err)
        }
    }

    /// What a JavaScript exception says.
    fn js_message(e: &JsValue) -> String {
        match e.dyn_ref::<js_sys::Error>() {
            Some(e) => e.message().into(),
            None => e.as_string().unwrap_or_default(),
        }
    }

    fn internal(e: JsValue) -> ApiError {
        ApiError::new(ErrorCode::Internal, js_message(&e))
    }

    /// Reads a successful answer as `T` by its [`FromJson`] reader; a 204
    /// is read as the text `null`.
    fn parse<T: FromJson>((status, text): (u16, String)) -> Result<T, ApiError> {
        let text = if status == 204 { "null" } else { text.as_str() };
        domain::wire_json::from_str(text).map_err(|e| {
            ApiError::new(
                ErrorCode::Internal,
                format!("Unexpected answer from the server: {e}"),
            )
        })
    }

    // Browser futures are not `Send`; resources require it. The browser is
    // single-threaded, so wrapping them is sound.
    async fn fetch_sendable(
        method: &'static str,
        path: String,
        body: Option<serde_json::Value>,
    ) -> Result<(u16, String), ApiError> {
        send_wrapper::SendWrapper::new(Box::pin(async move {
            fetch(method, &path, body.as_ref()).await
        }))
        .await
    }

    pub async fn get<T: FromJson + 'static>(path: &str) -> Result<T, ApiError> {
        parse(fetch_sendable("GET", path.to_string(), None).await?)
    }

    pub async fn send<T: FromJson + 'static>(
        method: &'static str,
        path: &str,
        body: &serde_json::Value,
    ) -> Result<T, ApiError> {
        parse(fetch_sendable(method, path.to_string(), Some(body.clone())).await?)
    }
}

/// Without the browser there is nothing to send writes with; the server
/// never calls these (components only write from event handlers).
#[cfg(not(feature = "hydrate"))]
mod browser {
    use super::{ApiError, ErrorCode};
    use serde::de::DeserializeOwned;

    pub fn encode(s: &str) -> String {
        s.to_string()
    }

    #[allow(dead_code)]
    pub async fn get<T: DeserializeOwned>(_path: &str) -> Result<T, ApiError> {
        Err(ApiError::new(
            ErrorCode::Internal,
            "only available in the browser",
        ))
    }

    pub async fn send<T: DeserializeOwned>(
        _method: &str,
        _path: &str,
        _body: &serde_json::Value,
    ) -> Result<T, ApiError> {
        Err(ApiError::new(
            ErrorCode::Internal,
            "only available in the browser",
        ))
    }
}
