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
