//! Stand-ins for the two server modules the classifier's unknown-evidence
//! log names (`crate::clock`, `crate::store`). The fuzz targets classify;
//! they never record, so the store keeps nothing. The row is the server's
//! shape (`server/src/store/rows.rs`): if that changes, the log's code
//! stops compiling here and this copy is updated with it.

pub mod clock {
    use chrono::{DateTime, Utc};

    /// As `server::clock::from_ms`.
    pub fn from_ms(ms: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(ms).unwrap_or_default()
    }
}

pub mod store {
    /// Nothing fails in a store that keeps nothing.
    pub type Result<T> = std::result::Result<T, std::convert::Infallible>;

    /// `server::store::UnknownRow`.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct UnknownRow {
        pub key: String,
        pub safe_excerpt: String,
        pub count: i64,
        pub first_seen: i64,
        pub last_seen: i64,
        pub classifier_rule: String,
        pub provider_id: Option<String>,
        pub model_id: Option<String>,
        pub catalogue_version: String,
    }

    /// A store that keeps nothing.
    pub struct NoStore;

    pub type DynStore = std::sync::Arc<NoStore>;

    impl NoStore {
        pub async fn record_unknown(&self, _: &UnknownRow, _capacity: i64) -> Result<()> {
            Ok(())
        }

        pub async fn unknown_evidence(&self, _capacity: i64) -> Result<(Vec<UnknownRow>, i64)> {
            Ok((Vec::new(), 0))
        }
    }
}
