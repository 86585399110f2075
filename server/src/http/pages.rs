//! The server side of the UI: the [`Backend`] the page renderer reads
//! through, backed by the same services as the REST API.

use crate::profiles::{ProfileError, Profiles};
use app::api::{ApiError, Backend};
use app::profile::Profile;

pub struct PageBackend {
    pub profiles: Profiles,
}

fn to_api(e: ProfileError) -> ApiError {
    let http: super::error::HttpError = e.into();
    let status = http.status_code().as_u16();
    ApiError {
        status,
        ..http.body()
    }
}

#[async_trait::async_trait]
impl Backend for PageBackend {
    async fn list_profiles(&self) -> Result<Vec<Profile>, ApiError> {
        self.profiles.list().await.map_err(to_api)
    }

    async fn get_profile(&self, id: &str) -> Result<Profile, ApiError> {
        self.profiles.get(id).await.map_err(to_api)
    }
}
