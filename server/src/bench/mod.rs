//! `kandev-recovery bench`: the figures of this machine, in one run, one
//! measurement per file:
//! - [`ceiling`]: the engine's raw single-row durable commit ceiling;
//! - [`classifier`]: envelopes per second and latency on one core;
//! - [`decisions`]: committed decisions through the HTTP API at 1, 8 and
//!   64 clients;
//! - [`sse`]: event fan-out latency to many subscribers;
//! - [`timers`]: pending schedules in bulk, restart reconciliation and
//!   timer lateness;
//! - [`web`]: the WASM bundle, a profile page's render time, peak memory;
//! - [`retention`]: a long run with pruning on — database size and
//!   decisions a second, day after simulated day.
//!
//! Each group runs on a fresh scratch database ([`scratch`]), so one
//! group's rows never skew another's figures. The server is the real one,
//! assembled by [`crate::http::Server`] and listening on 127.0.0.1.
//! [`fixtures`] is shared with the `cargo bench` benchmarks.

pub mod ceiling;
pub mod classifier;
pub mod decisions;
pub mod fixtures;
mod raw;
pub mod retention;
pub mod scratch;
pub mod sse;
pub mod stats;
pub mod timers;
pub mod web;

use crate::clock::Clock;
use crate::config::{BenchArgs, BenchPart};
use crate::http::{AppState, Server, Setup};
use anyhow::Context;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// What one run measures: `--quick` keeps the command exercised in CI in
/// well under a minute; the full sizes are the issue's.
struct Sizes {
    /// Client counts, and decisions made at each.
    clients: &'static [(usize, usize)],
    ceiling_each: Duration,
    classifier_rounds: usize,
    /// Pending schedule counts, smallest first; lateness at each.
    pending: &'static [usize],
    /// Reconciliation is reported at these of `pending`.
    reconcile_at: &'static [usize],
    /// Peak memory is read after this level.
    memory_at: usize,
    due: usize,
    due_window: Duration,
    subscribers: usize,
    events: usize,
    renders: usize,
    /// The long run: simulated days, and routes opened, decided and
    /// ended each day.
    days: usize,
    routes_per_day: usize,
}

const QUICK: Sizes = Sizes {
    clients: &[(1, 50), (8, 200), (64, 256)],
    ceiling_each: Duration::from_millis(500),
    classifier_rounds: 10,
    pending: &[1_000, 10_000],
    reconcile_at: &[1_000, 10_000],
    memory_at: 10_000,
    due: 100,
    due_window: Duration::from_secs(2),
    subscribers: 100,
    events: 10,
    renders: 10,
    days: 3,
    routes_per_day: 100,
};

const FULL: Sizes = Sizes {
    clients: &[(1, 1_000), (8, 8_000), (64, 12_800)],
    ceiling_each: Duration::from_secs(3),
    classifier_rounds: 400,
    pending: &[1_000, 100_000, 1_000_000],
    reconcile_at: &[100_000, 1_000_000],
    memory_at: 100_000,
    due: 1_000,
    due_window: Duration::from_secs(10),
    subscribers: 1_000,
    events: 20,
    renders: 200,
    days: 30,
    routes_per_day: 2_000,
};

/// A progress line on stderr (stdout carries only the figures).
pub(crate) fn progress(line: std::fmt::Arguments<'_>) {
    eprintln!("{line}");
}

/// The command: exit 0 with the figures on stdout, 2 for a bad
/// `--database-url`, 1 when a measurement failed.
pub fn run(args: BenchArgs) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut scratch = match runtime.block_on(scratch::Scratch::new(
        args.database_url.as_deref(),
        args.sqlite_synchronous,
    )) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let started = Instant::now();
    let outcome = runtime.block_on(measure(&args, &mut scratch));
    let removed = runtime.block_on(scratch.remove());
    if let Err(e) = &removed {
        eprintln!("warning: {e:#}");
    }
    match outcome {
        Ok(report) => {
            progress(format_args!(
                "done in {:.1} s",
                started.elapsed().as_secs_f64()
            ));
            if args.json {
                println!("{}", Value::Object(report));
            } else {
                print_table(&report);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// A figure keyed by a count, as JSON (`{"1": …, "8": …}`).
fn keyed(m: &BTreeMap<usize, f64>) -> Value {
    Value::Object(
        m.iter()
            .map(|(k, v)| (k.to_string(), json!(round(*v))))
            .collect(),
    )
}

/// Three significant decimals are more than these figures can tell.
fn round(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

async fn measure(
    args: &BenchArgs,
    scratch: &mut scratch::Scratch,
) -> anyhow::Result<Map<String, Value>> {
    let sizes = if args.quick { &QUICK } else { &FULL };
    let mut r = Map::new();
    r.insert("engine".into(), json!(scratch.engine.name()));
    r.insert("quick".into(), json!(args.quick));
    r.insert(
        "cores".into(),
        json!(std::thread::available_parallelism().map_or(0, |n| n.get())),
    );
    let clients: Vec<usize> = sizes.clients.iter().map(|c| c.0).collect();

    // 1. The engine's ceiling, on the database the decisions will use.
    let api_db = scratch.database("api").await?;
    let mut ceiling = BTreeMap::new();
    if args.measures(BenchPart::Ceiling) {
        progress(format_args!(
            "ceiling: single-row durable commits ({} engine)",
            scratch.engine.name()
        ));
        let durability;
        (ceiling, durability) = ceiling::measure(&api_db, &clients, sizes.ceiling_each)
            .await
            .context("measuring the commit ceiling")?;
        r.insert("durability".into(), json!(durability));
        r.insert("ceiling_commits_per_s".into(), keyed(&ceiling));
    }

    // 2. The classifier, on one thread (one core), off the runtime.
    if args.measures(BenchPart::Classifier) {
        progress(format_args!(
            "classifier: {} rounds over the envelopes",
            sizes.classifier_rounds
        ));
        let rounds = sizes.classifier_rounds;
        let c =
            tokio::task::spawn_blocking(move || classifier::measure(rounds.clamp(1, 50), rounds))
                .await?;
        progress(format_args!(
            "  {:.0} envelopes/s, p50 {:.1} µs, p99 {:.1} µs ({} envelopes, {})",
            c.per_s, c.latency_us.p50, c.latency_us.p99, c.envelopes, c.source
        ));
        r.insert("classifier_envelopes_per_s".into(), json!(round(c.per_s)));
        r.insert("classifier_p50_us".into(), json!(round(c.latency_us.p50)));
        r.insert("classifier_p99_us".into(), json!(round(c.latency_us.p99)));
        r.insert("classifier_source".into(), json!(c.source));
    }

    // 3. Through HTTP: decisions, event fan-out, page render.
    let store = crate::store::connect(&api_db).await?;
    let server = Server::start(AppState::new(&Setup {
        site_root: args.site_root.clone(),
        // The decision path is measured, not the per-token limiter (which
        // would cap one token at its default 1,200 reports a minute).
        evidence_per_minute: 0,
        routes_per_minute: 0,
        // The fan-out holds a thousand event streams at once.
        limits: crate::http::conn::ConnectionLimits {
            max_connections: 100_000,
            ..crate::http::conn::ConnectionLimits::default()
        },
        ..Setup::new(store, Clock::system())
    }))
    .await
    .map_err(|e| anyhow::anyhow!("the server did not start: {e}"))?;
    let state = server.state.clone();
    // The clients act as an adapter would, with a token: every request pays
    // the access check a real deployment pays.
    let token = state
        .access
        .create_token("bench", crate::auth::Permissions::admin())
        .await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(listener, async {
        let _ = stopped.await;
    }));
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::AUTHORIZATION,
        format!("Bearer {}", token.secret).parse()?,
    );
    let http = reqwest::Client::builder()
        .default_headers(headers)
        .no_proxy()
        .pool_max_idle_per_host(256)
        .build()?;
    let api = async {
        if args.measures(BenchPart::Decisions) {
            let mut per_s = BTreeMap::new();
            let (mut p50, mut p99, mut share) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
            for &(c, n) in sizes.clients {
                progress(format_args!("decisions over HTTP: {n} from {c} client(s)"));
                let d = decisions::measure(&state, &http, &base, c, n).await?;
                let ceil = ceiling.get(&c).copied().unwrap_or(f64::NAN);
                progress(format_args!(
                    "  {:.0} decisions/s ({:.0} % of the ceiling), p50 {:.1} ms, p99 {:.1} ms",
                    d.per_s,
                    d.per_s / ceil * 100.0,
                    d.latency_ms.p50,
                    d.latency_ms.p99
                ));
                per_s.insert(c, d.per_s);
                p50.insert(c, d.latency_ms.p50);
                p99.insert(c, d.latency_ms.p99);
                share.insert(c, d.per_s / ceil);
            }
            r.insert("decisions_per_s".into(), keyed(&per_s));
            r.insert("decision_p50_ms".into(), keyed(&p50));
            r.insert("decision_p99_ms".into(), keyed(&p99));
            r.insert("decisions_to_ceiling".into(), keyed(&share));
        }

        if args.measures(BenchPart::Sse) {
            progress(format_args!(
                "event fan-out: {} subscribers, {} events",
                sizes.subscribers, sizes.events
            ));
            let f = sse::measure(&state, &http, &base, sizes.subscribers, sizes.events).await?;
            progress(format_args!("  p50 {:.1} ms, p99 {:.1} ms", f.p50, f.p99));
            r.insert("sse_subscribers".into(), json!(sizes.subscribers));
            r.insert("sse_p50_ms".into(), json!(round(f.p50)));
            r.insert("sse_p99_ms".into(), json!(round(f.p99)));
        }

        if args.measures(BenchPart::Web) {
            progress(format_args!(
                "web app: profile page render, {} times",
                sizes.renders
            ));
            let profile = fixtures::profile(&state, 60).await?;
            let page = web::render(&http, &base, profile.as_str(), sizes.renders).await?;
            progress(format_args!(
                "  p50 {:.1} ms, p99 {:.1} ms",
                page.p50, page.p99
            ));
            r.insert("render_profile_p50_ms".into(), json!(round(page.p50)));
            r.insert("render_profile_p99_ms".into(), json!(round(page.p99)));
        }
        anyhow::Ok(())
    }
    .await;
    let _ = stop.send(());
    serving.await??;
    api?;

    if args.measures(BenchPart::Web) {
        match web::wasm(&args.site_root)? {
            Some(w) => {
                progress(format_args!(
                    "  WASM {}: {} bytes, {} gzip",
                    w.file, w.raw, w.gzip
                ));
                r.insert("wasm_bytes".into(), json!(w.raw));
                r.insert("wasm_gzip_bytes".into(), json!(w.gzip));
            }
            None => {
                progress(format_args!(
                    "  WASM: not built (no {}/pkg/*.wasm)",
                    args.site_root
                ));
                r.insert("wasm_bytes".into(), json!("not built"));
                r.insert("wasm_gzip_bytes".into(), json!("not built"));
            }
        }
    }
    // 4. The long run with pruning on, on a database of its own.
    if args.measures(BenchPart::Retention) {
        let days = args.days.unwrap_or(sizes.days).max(2);
        progress(format_args!(
            "long run: {days} days of {} routes, ended routes kept a day",
            sizes.routes_per_day
        ));
        let db = scratch.database("retention").await?;
        let t = Instant::now();
        let run = retention::measure(&db, days, sizes.routes_per_day)
            .await
            .context("the long run with pruning")?;
        progress(format_args!(
            "  {} decisions in {:.0} s",
            days * sizes.routes_per_day,
            t.elapsed().as_secs_f64()
        ));
        let per_day = |f: &dyn Fn(&retention::Day) -> f64| {
            keyed(&run.iter().map(|d| (d.day, f(d))).collect())
        };
        r.insert("retention_days".into(), json!(days));
        r.insert(
            "retention_routes_per_day".into(),
            json!(sizes.routes_per_day),
        );
        r.insert(
            "retention_decisions_per_s".into(),
            per_day(&|d| d.decisions_per_s),
        );
        r.insert(
            "retention_db_mb".into(),
            per_day(&|d| d.db_bytes as f64 / 1e6),
        );
        r.insert(
            "retention_routes_kept".into(),
            per_day(&|d| d.routes as f64),
        );
    }

    if !args.measures(BenchPart::Timers) {
        return Ok(r);
    }

    // 5. Timers and restarts, on a database of their own.
    let timer_db = scratch.database("timers").await?;
    let raw = raw::Raw::open(&timer_db).await?;
    let template = {
        let store = crate::store::connect(&timer_db).await?;
        timers::template(&AppState::new(&Setup::new(store, Clock::system()))).await?
    };
    let (mut late50, mut late99, mut late_max, mut reconcile) = (
        BTreeMap::new(),
        BTreeMap::new(),
        BTreeMap::new(),
        BTreeMap::new(),
    );
    let mut filled = 1; // the template
    for &pending in sizes.pending {
        let t = Instant::now();
        timers::fill(
            &raw,
            &template,
            &format!("p{pending}-"),
            pending.saturating_sub(filled),
        )
        .await
        .with_context(|| format!("filling {pending} pending schedules"))?;
        filled = filled.max(pending);
        progress(format_args!(
            "timers: {pending} pending (filled in {:.1} s)",
            t.elapsed().as_secs_f64()
        ));
        let memory = pending == sizes.memory_at && web::reset_peak_rss();
        let (server, took) = timers::restart(&timer_db).await?;
        let ms = took.as_secs_f64() * 1e3;
        progress(format_args!("  restart reconciliation: {ms:.0} ms"));
        if sizes.reconcile_at.contains(&pending) {
            reconcile.insert(pending, ms);
        }
        let l = timers::lateness(
            &server.state,
            &raw,
            &pending.to_string(),
            sizes.due,
            sizes.due_window,
        )
        .await;
        server.stop().await;
        let l = l?;
        progress(format_args!(
            "  lateness of {} timers: p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
            l.count, l.p50, l.p99, l.max
        ));
        late50.insert(pending, l.p50);
        late99.insert(pending, l.p99);
        late_max.insert(pending, l.max);
        if pending == sizes.memory_at {
            let rss = web::peak_rss_mb().unwrap_or(f64::NAN);
            progress(format_args!(
                "  peak resident memory with {pending} routes and {pending} pending schedules: {rss:.0} MB{}",
                if memory { "" } else { " (since start: the peak could not be reset)" }
            ));
            r.insert("rss_mb".into(), json!(round(rss)));
            r.insert("rss_pending".into(), json!(pending));
        }
    }
    raw.close().await;
    r.insert("timer_lateness_p50_ms".into(), keyed(&late50));
    r.insert("timer_lateness_p99_ms".into(), keyed(&late99));
    r.insert("timer_lateness_max_ms".into(), keyed(&late_max));
    r.insert("reconcile_ms".into(), keyed(&reconcile));
    Ok(r)
}

/// The figures for a person: one `name  value` line each.
fn print_table(r: &Map<String, Value>) {
    for (k, v) in r {
        let shown = match v {
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join(", "),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        println!("{k:<28} {shown}");
    }
}
