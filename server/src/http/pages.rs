//! The server side of the UI: the [`Backend`] the page renderer reads
//! through, backed by the same services as the REST API.

use super::error::HttpError;
use crate::profiles::Profiles;
use crate::routes::Routes;
use crate::store::RouteFilter;
use app::api::Backend;
use domain::error::ApiError;
use domain::ids::RouteId;
use domain::profile::Profile;
use domain::route::{Attempt, RouteSnapshot};

pub struct PageBackend {
    pub catalogue: crate::catalogue::Catalogues,
    pub profiles: Profiles,
    pub routes: Routes,
    pub access: crate::auth::Access,
    pub unknown: crate::unknown::UnknownLog,
}

/// The page's viewer may read classifier internals (`catalogue:read`, as
/// `GET /api/v1/catalogue/unknown`).
fn may_read_catalogue() -> Result<(), ApiError> {
    let may = leptos::prelude::use_context::<domain::error::Viewer>()
        .is_some_and(|v| v.may(domain::access::Permission::CatalogueRead));
    match may {
        true => Ok(()),
        false => Err(to_api(HttpError::Forbidden(
            "The unknown log needs the catalogue:read permission.".into(),
        ))),
    }
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

/// As many attempts as `GET /api/v1/routes/{id}/attempts` answers by default.
const ATTEMPT_LIMIT: i64 = 1000;

#[async_trait::async_trait]
impl Backend for PageBackend {
    async fn list_profiles(&self) -> Result<Vec<Profile>, ApiError> {
        self.profiles.list().await.map_err(to_api)
    }

    async fn get_profile(&self, id: &str) -> Result<Profile, ApiError> {
        self.profiles.get(id).await.map_err(to_api)
    }

    async fn list_routes(
        &self,
        profile_id: Option<&str>,
        caller_ref: Option<&str>,
    ) -> Result<Vec<RouteSnapshot>, ApiError> {
        let filter = RouteFilter {
            profile_id: profile_id.map(str::to_string),
            state: None,
            caller_kind: None,
            caller_ref: caller_ref.map(str::to_string),
            after: None,
            limit: LIST_LIMIT,
        };
        self.routes.list(filter).await.map_err(to_api)
    }

    async fn get_route(&self, id: &str) -> Result<RouteSnapshot, ApiError> {
        self.routes.get(&RouteId::from(id)).await.map_err(to_api)
    }

    async fn route_attempts(&self, id: &str) -> Result<Vec<Attempt>, ApiError> {
        self.routes
            .attempts(&RouteId::from(id), None, ATTEMPT_LIMIT)
            .await
            .map_err(to_api)
    }

    async fn list_people(&self) -> Result<Vec<domain::people::Person>, ApiError> {
        // The renderer reads the store directly: the page's viewer must be
        // an administrator, as for `GET /api/v1/people`.
        let admin = leptos::prelude::use_context::<domain::error::Viewer>()
            .is_some_and(|v| v.may(domain::access::Permission::Admin));
        if !admin {
            return Err(to_api(HttpError::Forbidden(
                "Managing people needs the admin permission.".into(),
            )));
        }
        super::people::people(&self.access).await.map_err(to_api)
    }

    async fn catalogue_in_force(&self) -> Result<domain::catalogue::CatalogueInForce, ApiError> {
        Ok(self.catalogue.current().in_force())
    }

    async fn list_circuits(&self) -> Result<domain::circuit::CircuitList, ApiError> {
        self.routes.circuit_list().await.map_err(to_api)
    }

    async fn unknown_log(&self) -> Result<domain::catalogue::UnknownSnapshot, ApiError> {
        may_read_catalogue()?;
        self.unknown.snapshot().await.map_err(to_api)
    }

    async fn reclassify_unknown(
        &self,
    ) -> Result<domain::catalogue::UnknownReclassification, ApiError> {
        may_read_catalogue()?;
        let catalogue = self.catalogue.current();
        self.unknown.reclassify(&catalogue).await.map_err(to_api)
    }
}

/// A page response's CSP nonce, minted by [`with_nonce`] before the page
/// renders and carried to the render in the request's extensions.
#[derive(Clone)]
pub struct PageNonce(String);

/// Mints the page's nonce (256 random bits from the operating system) and
/// sets the page's Content-Security-Policy with it on the response. The
/// header is set here, on the response itself, rather than through
/// Leptos's `ResponseOptions` from inside the render: a header set that
/// way was once missing from a streamed page (its scripts carried the
/// nonce, its CSP did not, so it never hydrated).
pub async fn with_nonce(
    mut req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    // A secret like any other the server mints: unguessable, and hex is a
    // valid CSP nonce.
    let nonce = crate::auth::secret::generate("");
    req.extensions_mut().insert(PageNonce(nonce.clone()));
    let mut response = next.run(req).await;
    if let Ok(value) = axum::http::HeaderValue::from_str(&super::headers::page_csp(&nonce)) {
        response
            .headers_mut()
            .insert(axum::http::header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// Per page request, before rendering: who is looking (for the UI to hide
/// what they may not do) and the nonce [`with_nonce`] minted, which Leptos
/// then puts on its hydration and resource scripts (no other inline
/// script runs).
pub fn provide_request_context() {
    use leptos::prelude::{provide_context, use_context};
    if let Some(parts) = use_context::<axum::http::request::Parts>() {
        if let Some(p) = parts.extensions.get::<crate::auth::Principal>() {
            provide_context(super::session::viewer_of(p));
        }
        // Replaces the nonce Leptos generated for the render.
        if let Some(PageNonce(nonce)) = parts.extensions.get::<PageNonce>() {
            provide_context(leptos::nonce::Nonce::from_value(nonce.as_str()));
        }
    }
}
