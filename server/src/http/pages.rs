//! The server side of the UI: the [`Backend`] the page renderer reads
//! through, backed by the same services as the REST API.

use super::error::HttpError;
use crate::profiles::Profiles;
use crate::routes::Routes;
use crate::store::RouteFilter;
use app::api::{ApiError, Backend};
use app::ids::RouteId;
use app::profile::Profile;
use app::route::{Attempt, RouteSnapshot};

pub struct PageBackend {
    pub profiles: Profiles,
    pub routes: Routes,
}

/// The same error body (and status) the REST API would answer.
fn to_api(e: impl Into<HttpError>) -> ApiError {
    let http: HttpError = e.into();
    let status = http.status_code().as_u16();
    ApiError {
        status,
        ..http.body()
    }
}

/// As many routes as `GET /api/v1/routes` answers by default.
const LIST_LIMIT: i64 = 100;

#[async_trait::async_trait]
impl Backend for PageBackend {
    async fn list_profiles(&self) -> Result<Vec<Profile>, ApiError> {
        self.profiles.list().await.map_err(to_api)
    }

    async fn get_profile(&self, id: &str) -> Result<Profile, ApiError> {
        self.profiles.get(id).await.map_err(to_api)
    }

    async fn list_routes(&self, profile_id: Option<&str>) -> Result<Vec<RouteSnapshot>, ApiError> {
        let filter = RouteFilter {
            profile_id: profile_id.map(str::to_string),
            state: None,
            caller_kind: None,
            limit: LIST_LIMIT,
        };
        self.routes.list(filter).await.map_err(to_api)
    }

    async fn get_route(&self, id: &str) -> Result<RouteSnapshot, ApiError> {
        self.routes.get(&RouteId::from(id)).await.map_err(to_api)
    }

    async fn route_attempts(&self, id: &str) -> Result<Vec<Attempt>, ApiError> {
        self.routes
            .attempts(&RouteId::from(id))
            .await
            .map_err(to_api)
    }

    async fn list_circuits(&self) -> Result<app::circuit::CircuitList, ApiError> {
        self.routes.circuit_list().await.map_err(to_api)
    }
}

/// Per page request, before rendering: who is looking (for the UI to hide
/// what they may not do) and the Content-Security-Policy with this
/// response's nonce (Leptos puts it on its hydration and resource scripts;
/// no other inline script runs).
pub fn provide_request_context() {
    use leptos::prelude::{provide_context, use_context};
    if let Some(parts) = use_context::<axum::http::request::Parts>() {
        if let Some(p) = parts.extensions.get::<crate::auth::Principal>() {
            provide_context(super::session::viewer_of(p));
        }
    }
    if let (Some(nonce), Some(response)) = (
        leptos::nonce::use_nonce(),
        use_context::<leptos_axum::ResponseOptions>(),
    ) {
        if let Ok(value) =
            axum::http::HeaderValue::from_str(&super::headers::page_csp(&nonce.to_string()))
        {
            response.insert_header(axum::http::header::CONTENT_SECURITY_POLICY, value);
        }
    }
}
