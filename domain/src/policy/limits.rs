//! Backend-owned limits of the policy document. The browser form uses the
//! same constants, so the inline messages quote exactly what the server
//! enforces.

/// The only policy document version this build understands.
pub const POLICY_VERSION: u32 = 1;

/// Enabled retry accepts 1 through 10 additional attempts.
pub const MIN_RETRIES: u32 = 1;
pub const MAX_RETRIES: u32 = 10;

/// The initial retry interval accepts 1 second through 1 hour.
pub const MIN_INITIAL_INTERVAL_SECONDS: u32 = 1;
pub const MAX_INITIAL_INTERVAL_SECONDS: u32 = 3_600;

/// Each computed retry delay is capped at 24 hours.
pub const MAX_RETRY_DELAY_SECONDS: u64 = 86_400;

/// Enabled reset waiting accepts 1 second through 7 days.
pub const MIN_WAIT_SECONDS: u32 = 1;
pub const MAX_WAIT_SECONDS: u32 = 604_800;

/// The delay legacy `retry_same` maps to (one retry after 5 s, then stop).
pub const LEGACY_RETRY_SAME_DELAY_SECONDS: u32 = 5;

/// Profile-level bounds. They keep documents, pages and route cycles small.
pub const MAX_NAME_CHARS: usize = 120;
pub const MAX_LABEL_CHARS: usize = 80;
pub const MAX_IDENT_CHARS: usize = 200;
pub const MIN_CANDIDATES: usize = 1;
pub const MAX_CANDIDATES: usize = 16;
