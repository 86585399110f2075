//! Prometheus metrics, served at `GET /metrics` (names in docs/api.md's
//! "Metrics" section). Two kinds, on purpose:
//!
//! - Counters and histograms are this instance's own, since it started:
//!   what it served, armed, fired, handed out and committed. With several
//!   instances on one database, sum them across instances.
//! - Gauges that are facts about shared state (routes and circuits by
//!   state, armed schedules, open dispatches) are read from the database at
//!   scrape time by [`render`], so every instance answers the same.
//!
//! The recorder is `metrics` with `metrics-exporter-prometheus` (without
//! its HTTP listener: the service's own router serves the text). It is
//! process-wide, so it is installed once; services count through the
//! `metrics` macros with the names below and never hold a handle.

use crate::circuits::ChangeKind;
use crate::store::{Commit, DynStore, StateCounts};
use domain::catalogue::CatalogueInForce;
use domain::circuit::CircuitStatus;
use domain::route::{DispatchState, EventKind, RouteState};
use metrics::{counter, describe_counter, describe_histogram, Unit};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::fmt::Write;
use std::sync::OnceLock;

pub const HTTP_REQUESTS: &str = "kandev_http_requests_total";
pub const HTTP_DURATION: &str = "kandev_http_request_duration_seconds";
pub const ROUTE_TRANSITIONS: &str = "kandev_route_transitions_total";
pub const FAILURES: &str = "kandev_failures_total";
pub const FAILURES_BY_CODE: &str = "kandev_failures_by_code_total";
pub const DECISIONS: &str = "kandev_decisions_total";
pub const SCHEDULES_ARMED: &str = "kandev_schedules_armed_total";
pub const SCHEDULES_FIRED: &str = "kandev_schedules_fired_total";
pub const TIMER_LATENESS: &str = "kandev_timer_lateness_seconds";
pub const DISPATCHES_CREATED: &str = "kandev_dispatches_created_total";
pub const DISPATCHES_CLAIMED: &str = "kandev_dispatches_claimed_total";
pub const DISPATCHES_ACKNOWLEDGED: &str = "kandev_dispatches_acknowledged_total";
pub const DISPATCHES_AMBIGUOUS: &str = "kandev_dispatches_ambiguous_total";
pub const CIRCUIT_OPENINGS: &str = "kandev_circuit_openings_total";
pub const CIRCUIT_PROBES: &str = "kandev_circuit_probes_total";
pub const CIRCUIT_PROBE_OUTCOMES: &str = "kandev_circuit_probe_outcomes_total";
pub const ROUTES_PRUNED: &str = "kandev_routes_pruned_total";
pub const WEBHOOK_ATTEMPTS: &str = "kandev_webhook_attempts_total";
pub const CATALOGUE_RELOADS: &str = "kandev_catalogue_reloads_total";

/// HTTP latency buckets, in seconds: most answers take milliseconds; long
/// polls and event streams are timed to their first byte.
const HTTP_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
];

/// Timer lateness buckets, in seconds: a schedule armed here fires within
/// milliseconds; one armed by another instance waits for the next poll (a
/// second); beyond a minute something is wrong.
const LATENESS_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 15.0, 60.0,
];

/// The process-wide recorder's handle, installing the recorder on first use.
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Full(HTTP_DURATION.into()), HTTP_BUCKETS)
                .and_then(|b| {
                    b.set_buckets_for_metric(Matcher::Full(TIMER_LATENESS.into()), LATENESS_BUCKETS)
                })
                .expect("the bucket lists are not empty")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder (a test harness) may own the global slot;
            // then this handle renders only the database's gauges.
            if metrics::set_global_recorder(recorder).is_ok() {
                describe();
            }
            handle
        })
        .clone()
}

fn describe() {
    describe_counter!(
        HTTP_REQUESTS,
        "HTTP requests answered, by method, matched route template and status"
    );
    describe_histogram!(
        HTTP_DURATION,
        Unit::Seconds,
        "HTTP request latency to the response head, by method, route template and status"
    );
    describe_counter!(
        ROUTE_TRANSITIONS,
        "Route transitions committed, by event kind"
    );
    describe_counter!(FAILURES, "Failures reported, by class");
    describe_counter!(
        FAILURES_BY_CODE,
        "Failures reported, by catalogue code and provider (bounded: an unknown code or provider is `other`)"
    );
    describe_counter!(DECISIONS, "Failure decisions committed, by kind");
    describe_counter!(SCHEDULES_ARMED, "Schedules armed, by kind");
    describe_counter!(
        WEBHOOK_ATTEMPTS,
        "Webhook delivery attempts, by outcome (delivered, retry, failed for good)"
    );
    describe_counter!(
        SCHEDULES_FIRED,
        "Schedules fired (their transition committed)"
    );
    describe_histogram!(
        TIMER_LATENESS,
        Unit::Seconds,
        "Schedule fire time minus its deadline"
    );
    describe_counter!(DISPATCHES_CREATED, "Dispatches created, by reason");
    describe_counter!(DISPATCHES_CLAIMED, "Dispatches handed out with a lease");
    describe_counter!(DISPATCHES_ACKNOWLEDGED, "Claimed dispatches acknowledged");
    describe_counter!(
        DISPATCHES_AMBIGUOUS,
        "Claimed dispatches never acknowledged: their routes stopped for a person"
    );
    describe_counter!(
        CIRCUIT_OPENINGS,
        "Circuits opened (including re-opened by a failed probe), by scope"
    );
    describe_counter!(
        CIRCUIT_PROBES,
        "Probe leases taken on expired circuits, by scope"
    );
    describe_counter!(
        ROUTES_PRUNED,
        "Ended routes deleted with their history after the retention time"
    );
    describe_counter!(
        CATALOGUE_RELOADS,
        "Catalogue reloads, by outcome: loaded (swapped in) or rejected (the old one kept)"
    );
    describe_counter!(
        CIRCUIT_PROBE_OUTCOMES,
        "Probe outcomes, by scope: success closed the circuit, failure re-opened it"
    );
}

/// Providers a failure's `provider` label names as themselves: the ones
/// agents report most. Any other provider id (the caller sends it, so it
/// is unbounded) is `other`, so the series stay few whatever arrives.
pub const PROVIDERS: &[&str] = &[
    "anthropic",
    "openai",
    "google",
    "google-gemini",
    "google-vertex",
    "aws-bedrock",
    "bedrock",
    "azure-openai",
    "openrouter",
    "github-copilot",
    "ollama",
    "groq",
    "mistral",
    "deepseek",
    "moonshot",
    "zhipu",
    "zai",
    "dashscope",
    "litellm",
    "xai",
];

/// The `provider` label of a failure: a known provider, `other`, or
/// `none` when the evidence named none.
pub fn provider_label(provider: Option<&str>) -> &'static str {
    match provider.map(str::trim).filter(|p| !p.is_empty()) {
        None => "none",
        Some(p) => PROVIDERS
            .iter()
            .find(|known| known.eq_ignore_ascii_case(p))
            .copied()
            .unwrap_or("other"),
    }
}

/// The `code` label of a failure: a code of the catalogue (or `unknown`,
/// the unclassified one), else `other`.
pub fn code_label(catalogue: &classify::Catalogue, code: &str) -> String {
    if code == "unknown" || catalogue.class_of(code).is_some() {
        code.to_string()
    } else {
        "other".to_string()
    }
}

/// Counts a reported failure: by class, and by code and provider.
pub fn failure(catalogue: &classify::Catalogue, c: &domain::classification::Classification) {
    counter!(FAILURES, "class" => c.class.as_str()).increment(1);
    counter!(
        FAILURES_BY_CODE,
        "code" => code_label(catalogue, &c.code),
        "provider" => provider_label(c.provider_id.as_deref())
    )
    .increment(1);
}

/// Counts what one committed route transition did. Called once per commit,
/// after it succeeded, so nothing is counted for a transaction that lost.
pub fn committed(commit: &Commit) {
    if let Some(s) = &commit.schedule {
        counter!(SCHEDULES_ARMED, "kind" => s.kind.clone()).increment(1);
    }
    if commit.fire_schedule.is_some() {
        counter!(SCHEDULES_FIRED).increment(1);
    }
    if let Some(d) = &commit.dispatch {
        counter!(DISPATCHES_CREATED, "reason" => d.reason.clone()).increment(1);
    }
    if commit.ack_dispatch.is_some() {
        counter!(DISPATCHES_ACKNOWLEDGED).increment(1);
    }
    if commit.event_kind == EventKind::Ambiguous.as_str() {
        counter!(DISPATCHES_AMBIGUOUS).increment(1);
    }
    for w in &commit.circuits {
        let kind = w
            .event_kind
            .strip_prefix("circuit.")
            .unwrap_or(&w.event_kind);
        let is = |k: ChangeKind| kind == <&'static str>::from(k);
        let scope = w.row.scope.clone();
        if is(ChangeKind::Opened) {
            counter!(CIRCUIT_OPENINGS, "scope" => scope).increment(1);
        } else if is(ChangeKind::Reopened) {
            counter!(CIRCUIT_OPENINGS, "scope" => scope.clone()).increment(1);
            counter!(CIRCUIT_PROBE_OUTCOMES, "scope" => scope, "outcome" => "failure").increment(1);
        } else if is(ChangeKind::ProbeClaimed) {
            counter!(CIRCUIT_PROBES, "scope" => scope).increment(1);
        } else if is(ChangeKind::Closed) {
            counter!(CIRCUIT_PROBE_OUTCOMES, "scope" => scope, "outcome" => "success").increment(1);
        }
    }
}

/// The Prometheus text: this instance's counters and histograms, then the
/// gauges read from the database now. When the database does not answer,
/// the counters are still served and `kandev_database_up` says why the
/// gauges are missing.
pub async fn render(
    handle: &PrometheusHandle,
    store: &DynStore,
    at_ms: Option<i64>,
    catalogue: &CatalogueInForce,
) -> String {
    let mut out = handle.render();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    catalogue_info(&mut out, catalogue);
    let counts = match store.state_counts(at_ms).await {
        Ok(counts) => store.webhook_gauges().await.map(|w| (counts, w)),
        Err(e) => Err(e),
    };
    match counts {
        Ok((counts, hooks)) => {
            gauges(&mut out, &counts);
            webhook_gauges(&mut out, &hooks, at_ms);
            gauge(
                &mut out,
                "kandev_database_up",
                DATABASE_UP_HELP,
                None,
                [("", 1)],
            );
        }
        Err(e) => {
            tracing::warn!(error = %e, "metrics: the database did not answer; gauges left out");
            gauge(
                &mut out,
                "kandev_database_up",
                DATABASE_UP_HELP,
                None,
                [("", 0)],
            );
        }
    }
    out
}

/// Which catalogue this instance classifies with: a scrape of every
/// instance of a deployment shows which version each one runs.
fn catalogue_info(out: &mut String, c: &CatalogueInForce) {
    let _ = writeln!(
        out,
        "# HELP kandev_catalogue_info The catalogue this instance classifies with now (always 1), by version and source\n\
         # TYPE kandev_catalogue_info gauge\n\
         kandev_catalogue_info{{version=\"{}\",source=\"{}\"}} 1\n\
         # HELP kandev_catalogue_loaded_timestamp_seconds When this instance loaded the catalogue in force\n\
         # TYPE kandev_catalogue_loaded_timestamp_seconds gauge\n\
         kandev_catalogue_loaded_timestamp_seconds {}\n",
        label_value(&c.version),
        c.source.as_str(),
        c.loaded_at.timestamp()
    );
}

/// A Prometheus label value: backslash, double quote and line feed escaped
/// (a directory's version is whatever its file says).
fn label_value(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

const DATABASE_UP_HELP: &str =
    "1 when the database answered this scrape (the gauges above are its)";

/// The shared-state gauges, every known state present (zero when none).
fn gauges(out: &mut String, c: &StateCounts) {
    let of = |rows: &[(String, i64)], state: &str| {
        rows.iter().find(|(s, _)| s == state).map_or(0, |(_, n)| *n)
    };
    gauge(
        out,
        "kandev_routes",
        "Routes by state (from the database: the same on every instance)",
        Some("state"),
        RouteState::ALL
            .iter()
            .map(|s| (s.as_str(), of(&c.routes, s.as_str()))),
    );
    gauge(
        out,
        "kandev_circuits",
        "Circuits by state (from the database)",
        Some("state"),
        <CircuitStatus as strum::VariantArray>::VARIANTS
            .iter()
            .map(|s| {
                let name: &'static str = s.into();
                (name, of(&c.circuits, name))
            }),
    );
    gauge(
        out,
        "kandev_schedules_pending",
        "Armed schedules waiting for their deadline (from the database)",
        None,
        [("", of(&c.schedules, "armed"))],
    );
    gauge(
        out,
        "kandev_dispatches_open",
        "Dispatches not yet acknowledged, by state (from the database)",
        Some("state"),
        [DispatchState::Pending, DispatchState::Claimed]
            .into_iter()
            .map(|s| (s.as_str(), of(&c.dispatches, s.as_str()))),
    );
    // Ages in whole seconds, 0 when there is none: what an alert on a
    // stuck route looks at (nobody claiming its work; a caller that
    // acknowledged a prompt and never reported how it went).
    let seconds = |ms: Option<i64>| ms.unwrap_or(0) / 1000;
    gauge(
        out,
        "kandev_dispatch_oldest_unclaimed_seconds",
        "Age of the oldest dispatch nobody has claimed (0: none; from the database)",
        None,
        [("", seconds(c.oldest_unclaimed_ms))],
    );
    gauge(
        out,
        "kandev_attempt_oldest_unreported_seconds",
        "Age of the oldest acknowledged attempt with no failure or success reported yet (0: none; from the database)",
        None,
        [("", seconds(c.oldest_unreported_ms))],
    );
}

/// What an alert on webhooks looks at: deliveries failing now (pending,
/// their last attempt failed), those that failed for good, and how long
/// the oldest pending one has waited.
fn webhook_gauges(out: &mut String, w: &crate::store::WebhookGauges, at_ms: Option<i64>) {
    let now = at_ms.unwrap_or_else(|| chrono::Utc::now().timestamp_millis());
    gauge(
        out,
        "kandev_webhook_deliveries_failing",
        "Webhook deliveries whose last attempt failed and that are still retried (from the database)",
        None,
        [("", w.failing)],
    );
    gauge(
        out,
        "kandev_webhook_deliveries_failed",
        "Webhook deliveries that failed for good after their retry window (from the database)",
        None,
        [("", w.failed)],
    );
    gauge(
        out,
        "kandev_webhook_oldest_pending_seconds",
        "Age of the oldest webhook delivery not delivered yet (0: none; from the database)",
        None,
        [(
            "",
            w.oldest_pending_ms.map_or(0, |t| (now - t).max(0) / 1000),
        )],
    );
}

/// One gauge family in the text format. Label values are this crate's own
/// state names, which need no escaping.
fn gauge<'a>(
    out: &mut String,
    name: &str,
    help: &str,
    label: Option<&str>,
    values: impl IntoIterator<Item = (&'a str, i64)>,
) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
    for (value, n) in values {
        match label {
            Some(label) => {
                let _ = writeln!(out, "{name}{{{label}=\"{value}\"}} {n}");
            }
            None => {
                let _ = writeln!(out, "{name} {n}");
            }
        }
    }
    out.push('\n');
}

/// Drains histogram samples into their buckets now and then, so memory
/// stays bounded when nobody scrapes (rendering drains them too).
pub async fn upkeep(handle: PrometheusHandle, shutdown: tokio_util::sync::CancellationToken) {
    let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = every.tick() => handle.run_upkeep(),
            _ = shutdown.cancelled() => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_labels_are_bounded() {
        assert_eq!(provider_label(Some("anthropic")), "anthropic");
        assert_eq!(provider_label(Some("OpenAI")), "openai");
        assert_eq!(provider_label(Some("my-own-proxy-4711")), "other");
        assert_eq!(provider_label(Some(" ")), "none");
        assert_eq!(provider_label(None), "none");
        let catalogue = classify::Catalogue::builtin();
        let (code, _) = catalogue.codes().next().expect("a code");
        assert_eq!(code_label(catalogue, code), code);
        assert_eq!(code_label(catalogue, "unknown"), "unknown");
        assert_eq!(code_label(catalogue, "made_up_by_a_caller"), "other");
    }

    #[test]
    fn gauges_list_every_state_with_zeroes() {
        let mut out = String::new();
        gauges(
            &mut out,
            &StateCounts {
                routes: vec![("active".into(), 3), ("retry_wait".into(), 1)],
                circuits: vec![("open".into(), 2)],
                schedules: vec![("armed".into(), 4)],
                dispatches: vec![("claimed".into(), 1)],
                oldest_unclaimed_ms: Some(65_400),
                oldest_unreported_ms: None,
            },
        );
        for line in [
            "# TYPE kandev_routes gauge",
            "kandev_routes{state=\"active\"} 3",
            "kandev_routes{state=\"retry_wait\"} 1",
            "kandev_routes{state=\"cancelled\"} 0",
            "kandev_circuits{state=\"open\"} 2",
            "kandev_circuits{state=\"closed\"} 0",
            "kandev_circuits{state=\"probing\"} 0",
            "kandev_schedules_pending 4",
            "kandev_dispatches_open{state=\"pending\"} 0",
            "kandev_dispatches_open{state=\"claimed\"} 1",
            "kandev_dispatch_oldest_unclaimed_seconds 65",
            "kandev_attempt_oldest_unreported_seconds 0",
        ] {
            assert!(out.lines().any(|l| l == line), "{line} missing from\n{out}");
        }
        assert_eq!(
            out.lines()
                .filter(|l| l.starts_with("kandev_routes{"))
                .count(),
            RouteState::ALL.len()
        );
    }
}
