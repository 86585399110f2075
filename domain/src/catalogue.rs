//! The catalogue in force on the wire: which version a server classifies
//! with, where it came from, and what a reload answers. Shared by the
//! server (which loads catalogues, see its `catalogue` module) and the
//! browser (which shows the version).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

wire_names! {
    /// Where the catalogue in force was loaded from.
    #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
    pub enum CatalogueSource {
        /// The catalogue compiled into the binary (no `serve --catalogue`).
        Embedded,
        /// A catalogue directory (`serve --catalogue DIR`), reloadable.
        Directory,
    }
}

/// The catalogue this server instance classifies with now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogueInForce {
    /// The catalogue's `version`, as every classification records it.
    pub version: String,
    pub source: CatalogueSource,
    /// The directory it was read from (with `directory`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<String>,
    /// When this instance loaded it.
    #[serde(deserialize_with = "crate::wire_time::rfc3339")]
    pub loaded_at: DateTime<Utc>,
    /// How many rules it has.
    pub rule_count: u64,
}

/// What `POST /api/v1/catalogue/reload` answers when the directory loaded:
/// the catalogue now in force and the version it replaced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CatalogueReload {
    pub in_force: CatalogueInForce,
    pub previous_version: String,
}

/// The browser's readers (`crate::wire_json`), field for field as serde's.
#[cfg(any(test, feature = "reader"))]
mod read {
    use super::*;
    use crate::wire_json::{Error, Fields, FromJson};
    use serde_json::Value;

    impl FromJson for CatalogueInForce {
        fn from_json(v: &Value) -> Result<Self, Error> {
            let o = Fields::of(v)?;
            Ok(CatalogueInForce {
                version: o.get("version")?,
                source: o.get("source")?,
                directory: o.get("directory")?,
                loaded_at: o.get("loaded_at")?,
                rule_count: o.get("rule_count")?,
            })
        }
    }
}
