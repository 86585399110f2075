//! The one place a server is assembled: services reconciled after a
//! restart, the timer loop, the relay of other servers' commits (on a
//! shared PostgreSQL database), and HTTP with a graceful shutdown that also
//! ends long polls, event streams, the relay and timers. `serve` (the command), the
//! test server and the benchmarks all start it this way.

use super::{router, AppState, Setup};
use crate::auth::{Permission, Permissions};
use crate::catalogue::Catalogues;
use crate::clock::Clock;
use crate::config::ServeArgs;
use crate::scheduler;
use crate::store;
use anyhow::Context;
use std::future::Future;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// How long in-flight requests may take to finish once shutdown begins
/// (under the 30 s orchestrators usually wait before SIGKILL).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(20);

/// The services with restart reconciliation done and timers running.
pub struct Server {
    pub state: AppState,
    timers: JoinHandle<()>,
    relay: Option<JoinHandle<()>>,
}

impl Server {
    /// Starts hearing other servers' commits (PostgreSQL), reconciles what
    /// a restart left behind (dispatches whose lease ran out stop, schedules
    /// that fell due fire), then starts the timer loop.
    pub async fn start(state: AppState) -> crate::routes::Result<Server> {
        let signals = state.routes.signals().clone();
        // Listening first: a commit made while we reconcile still wakes us.
        let relay = state
            .store
            .commit_listener()
            .await?
            .map(|listener| tokio::spawn(signals.relay(listener)));
        scheduler::reconcile(&state.routes).await?;
        let timers = tokio::spawn(scheduler::run(state.routes.clone(), state.store.clone()));
        tokio::spawn(crate::retention::run(
            state.store.clone(),
            state.clock.clone(),
            state.retention,
            state.routes.signals().shutdown.clone(),
        ));
        // Webhook deliveries: after the timers, off every transition's path.
        tokio::spawn(crate::webhooks::run(
            state.webhooks.clone(),
            state.routes.signals().clone(),
        ));
        tokio::spawn(crate::meters::upkeep(
            state.metrics.clone(),
            state.routes.signals().shutdown.clone(),
        ));
        Ok(Server {
            state,
            timers,
            relay,
        })
    }

    /// Serves HTTP on `listener` until `shutdown` resolves; in-flight
    /// requests finish first. Then the timer loop stops.
    pub async fn serve(
        self,
        listener: TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let signals = self.state.routes.signals().clone();
        let stop = signals.shutdown.clone();
        tokio::spawn(async move {
            shutdown.await;
            // Ends long polls, event streams (with a last `shutdown` event)
            // and the timer loop, so the graceful shutdown does not wait on
            // them; and stops accepting connections.
            stop.cancel();
        });
        let limits = self.state.limits;
        let served = super::conn::serve(
            listener,
            router(self.state),
            limits,
            signals.shutdown.clone(),
        );
        let stopping = signals.shutdown.clone();
        let served = tokio::select! {
            served = served => served,
            // A client that stopped reading must not hold the process
            // forever: after the grace period its connection is dropped.
            _ = async {
                stopping.cancelled().await;
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            } => {
                tracing::warn!(
                    grace_seconds = SHUTDOWN_GRACE.as_secs(),
                    "connections still open after the shutdown grace period; closing them"
                );
                Ok(())
            }
        };
        signals.shutdown.cancel();
        background_stopped(self.timers, self.relay).await;
        served
    }

    /// Stops the timer loop (when nothing is served).
    pub async fn stop(self) {
        self.state.routes.signals().shutdown.cancel();
        background_stopped(self.timers, self.relay).await;
    }
}

/// Waits for the timer loop and the commit relay to see the shutdown,
/// for at most [`SHUTDOWN_GRACE`]: they stop between statements, and one
/// inside a query to a database that stopped answering would otherwise
/// hold the shutdown (and a waiting caller) for as long as the socket
/// lives. Past the grace they are left to end with the process.
async fn background_stopped(timers: JoinHandle<()>, relay: Option<JoinHandle<()>>) {
    let stopped = tokio::time::timeout(SHUTDOWN_GRACE, async move {
        let _ = timers.await;
        if let Some(relay) = relay {
            let _ = relay.await;
        }
    })
    .await;
    if stopped.is_err() {
        tracing::warn!(
            grace_seconds = SHUTDOWN_GRACE.as_secs(),
            "the timer loop had not stopped after the shutdown grace period; leaving it"
        );
    }
}

/// The token the demo's simulated agents use.
const DEMO_TOKEN_NAME: &str = "demo agents";

/// Opens the database, seeds the example on first start, and serves until
/// `shutdown` resolves; in-flight requests finish first.
pub async fn serve(
    args: ServeArgs,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    // Taken before anything is migrated or served, and held until this
    // function returns: one server per SQLite file.
    let _lock = store::server_lock(&args.database_url)?;
    if args.no_auth && !args.listen.ip().is_loopback() {
        anyhow::bail!(
            "--no-auth is for local development only and cannot be used with --listen {}; \
             listen on 127.0.0.1 (or ::1), or use API tokens and sign-in links",
            args.listen
        );
    }
    // Before the database: a catalogue that does not load stops the start
    // with every problem named, and nothing was touched.
    let catalogue =
        Catalogues::open(args.catalogue.as_deref()).map_err(|e| match &args.catalogue {
            Some(dir) => anyhow::anyhow!(
                "the catalogue directory {} does not load: {e}",
                dir.display()
            ),
            None => anyhow::anyhow!("the embedded catalogue does not load: {e}"),
        })?;
    {
        let c = catalogue.current().in_force();
        tracing::info!(
            version = %c.version,
            source = %c.source,
            directory = c.directory.as_deref().unwrap_or(""),
            rules = c.rule_count,
            "catalogue in force"
        );
    }
    let store = store::connect(&args.database_url).await.with_context(|| {
        format!(
            "cannot open the database at {}",
            redact_url(&args.database_url)
        )
    })?;
    if args.no_auth {
        tracing::warn!(
            "--no-auth: every request is allowed without credentials; for local development only"
        );
    }
    if args.test_clock {
        tracing::warn!("the test clock is enabled: POST /api/v1/test/clock can move time forward");
    }
    let state = AppState::new(&Setup {
        site_root: args.site_root.clone(),
        max_body_bytes: args.max_body_bytes,
        test_clock: args.test_clock,
        no_auth: args.no_auth,
        evidence_per_minute: args.evidence_per_minute,
        routes_per_minute: args.routes_per_minute,
        route_settings: crate::routes::service::RouteSettings::from_seconds(
            args.max_hold_wait,
            args.dispatch_timeout,
        ),
        database_dir: sqlite_dir(&args.database_url),
        retention: crate::retention::Retention::from_days(args.retain_days)
            .with_audit_days(args.audit_retain_days),
        allow_private_webhooks: args.allow_private_webhooks,
        limits: super::conn::ConnectionLimits::from_seconds(
            args.header_timeout_seconds,
            args.body_timeout_seconds,
            args.idle_timeout_seconds,
            args.max_connections as usize,
        ),
        catalogue: catalogue.clone(),
        ..Setup::new(store, Clock::system())
    });
    reload_on_hangup(catalogue);
    if let Some(secret) = &args.demo_token {
        // A fresh token per start: the previous run's is revoked first
        // (names are unique among live tokens).
        let permissions = Permissions::of(&[
            Permission::ProfilesManage,
            Permission::ProfilesSelect,
            Permission::OfficeAssign,
            Permission::EvidenceSubmit,
            Permission::RoutesAct,
        ]);
        state
            .access
            .revoke_token(DEMO_TOKEN_NAME)
            .await
            .context("cannot revoke the demo agents' previous token")?;
        state
            .access
            .create_token_with_secret(DEMO_TOKEN_NAME, permissions, secret.clone())
            .await
            .context("cannot store the demo agents' token")?;
    }
    if !args.no_seed {
        if let Some(p) = state
            .profiles
            .seed_example()
            .await
            .context("cannot seed the example profile")?
        {
            tracing::info!(profile = %p.id, "seeded the example dynamic profile");
        }
    }
    let first_sign_in = state
        .access
        .first_start()
        .await
        .context("cannot create the first administrator")?;
    let server = Server::start(state)
        .await
        .context("restart reconciliation failed")?;
    let listener = TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    if let Some(path) = first_sign_in {
        // Printed, not logged: the link is a credential (like Jupyter's),
        // and log lines are kept and shipped where a link should not go.
        let mut address = listener.local_addr()?;
        if address.ip().is_unspecified() {
            address.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        // A closed stdout must not stop the server (println! would panic).
        use std::io::Write;
        let _ = writeln!(
            std::io::stdout(),
            "\nNo users yet: created the administrator `admin`. Sign in (the link works once, for {} hours):\n\n    http://{address}{path}\n\n{}\n",
            crate::auth::access::SIGN_IN_LINK_HOURS,
            first_steps(args.demo, address),
        );
    }
    tracing::info!(
        address = %listener.local_addr()?,
        database = %redact_url(&args.database_url),
        "serving http://{}",
        listener.local_addr()?
    );
    server.serve(listener, shutdown).await?;
    tracing::info!("stopped");
    Ok(())
}

/// What a newcomer does next, printed under the first sign-in link.
fn first_steps(demo: bool, address: std::net::SocketAddr) -> String {
    if demo {
        format!(
            "Then open http://{address}/routes: simulated agents go through each recovery scenario \
             (retries, a reset wait, a switch, stops for you) within a minute."
        )
    } else {
        "New here? `scripts/run --demo` (or `kandev-recovery demo`) serves simulated agents going \
         through each recovery scenario within a minute; the README explains profiles, routes and adapters."
            .to_string()
    }
}

/// The folder of the SQLite file `url` names (`None`: PostgreSQL or an
/// in-memory database), whose free space `/readyz` watches.
fn sqlite_dir(url: &str) -> Option<std::path::PathBuf> {
    // sqlx names an in-memory database after a file of its own making.
    if !url.starts_with("sqlite:") || url.contains(":memory:") || url.contains("mode=memory") {
        return None;
    }
    let options = crate::store::SqliteStore::connect_options(url).ok()?;
    let file = options.get_filename();
    if file.as_os_str().is_empty() || file.as_os_str() == ":memory:" {
        return None;
    }
    Some(match file.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    })
}

/// A database URL without its password, for logs.
pub fn redact_url(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let userinfo = &url[scheme + 3..at];
            let user = userinfo.split(':').next().unwrap_or("");
            format!("{}{}@{}", &url[..scheme + 3], user, &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

/// Reads the catalogue directory again on every SIGHUP (see
/// [`Catalogues::reload`]: it swaps or keeps the old one, and logs which).
fn reload_on_hangup(catalogue: Catalogues) {
    #[cfg(unix)]
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut hangups) = signal(SignalKind::hangup()) else {
            tracing::warn!("cannot watch SIGHUP: reload the catalogue through the API");
            return;
        };
        while hangups.recv().await.is_some() {
            let c = catalogue.clone();
            // The outcome is logged by reload itself.
            let _ = tokio::task::spawn_blocking(move || c.reload()).await;
        }
    });
    #[cfg(not(unix))]
    let _ = catalogue;
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutdown requested; finishing in-flight requests");
}

#[cfg(test)]
mod tests {
    use super::sqlite_dir;
    use std::path::PathBuf;

    #[test]
    fn readyz_watches_the_folder_of_an_sqlite_file_only() {
        assert_eq!(
            sqlite_dir("sqlite:///var/lib/kr/db.sqlite"),
            Some(PathBuf::from("/var/lib/kr"))
        );
        assert_eq!(
            sqlite_dir("sqlite://data/kandev-recovery.db"),
            Some(PathBuf::from("data"))
        );
        assert_eq!(sqlite_dir("sqlite://db.sqlite"), Some(PathBuf::from(".")));
        assert_eq!(sqlite_dir("sqlite::memory:"), None);
        assert_eq!(sqlite_dir("postgres://u@h/db"), None);
    }
}
