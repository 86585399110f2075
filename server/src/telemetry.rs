//! Structured logs with `tracing`. `RUST_LOG` filters (default `info`);
//! `KANDEV_LOG_FORMAT=json` switches to one JSON object per line.

use tracing_subscriber::{fmt, EnvFilter};

pub fn init() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let json = std::env::var("KANDEV_LOG_FORMAT").is_ok_and(|f| f.eq_ignore_ascii_case("json"));
    let builder = fmt().with_env_filter(filter).with_target(false);
    // A second init (tests starting several servers) is harmless: ignore it.
    let _ = if json {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
