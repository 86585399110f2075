//! Wording for people, made from the typed values in one place: what the
//! route panels (and the runner's terminal lines) say — state, cause, retry
//! ordinal, countdown, next outcome, history rows, stop reasons and the
//! actions a state allows. Plain functions of the wire types; nothing here
//! reads a clock or touches the DOM, so the server renderer and the browser
//! word things identically and the wording is unit-tested. Nothing here is
//! parsed back.
//!
//! Causes are written from the stable code ([`safe_cause`]), never from
//! provider text.

use crate::circuit::{CircuitHold, CircuitScope, CircuitStatus, CircuitView};
use crate::policy::{describe, ClassPolicy, ErrorClass, OnExhausted};
use crate::profile::{Prefer, Profile};
use crate::route::{
    Action, Attempt, CallerKind, DecisionKind, PendingKind, RouteOutcome, RouteSnapshot,
    RouteState, StopReason, UnsafeReason,
};

/// An action's button text.
pub fn action_label(action: Action) -> &'static str {
    match action {
        Action::RetryNow => "Retry now",
        Action::SkipNow => "Skip now",
        Action::Cancel => "Cancel wait",
        Action::Stop => "Stop",
    }
}

/// What the answer means, once the server accepted the action.
pub fn action_done(action: Action, route: &RouteSnapshot) -> String {
    match (action, route.state) {
        (Action::RetryNow, _) => format!("Retry of {} requested.", route.candidate.label),
        (Action::SkipNow, RouteState::Switching) => {
            format!("Skipped to {}.", route.candidate.label)
        }
        (Action::SkipNow, _) => {
            "No other candidate is left to skip to; the route waits for you.".into()
        }
        (Action::Cancel, _) => "Wait cancelled; the route waits for you.".into(),
        (Action::Stop, _) => "Stopped; the route waits for you.".into(),
    }
}

/// The state in words.
pub fn state_words(state: RouteState) -> &'static str {
    match state {
        RouteState::Active => "Working",
        RouteState::RetryWait => "Waiting to retry",
        RouteState::WaitingForReset => "Waiting for the provider's reset",
        RouteState::Retrying => "Retrying",
        RouteState::Switching => "Switching to the next candidate",
        RouteState::ActionRequired => "Stopped: needs you",
        RouteState::Completed => "Completed",
        RouteState::Cancelled => "Cancelled",
    }
}

pub fn caller_words(kind: CallerKind) -> &'static str {
    match kind {
        CallerKind::Kanban => "Kanban",
        CallerKind::Workflow => "Workflow",
        CallerKind::Utility => "Utility call",
        CallerKind::Office => "Office",
    }
}

/// A route's title: who drives it and their reference.
pub fn route_title(route: &RouteSnapshot) -> String {
    let kind = caller_words(route.caller.kind);
    if route.caller.reference.trim().is_empty() {
        kind.to_string()
    } else {
        format!("{kind} · {}", route.caller.reference)
    }
}

pub fn class_words(class: ErrorClass) -> &'static str {
    match class {
        ErrorClass::Transient => "Transient error",
        ErrorClass::Hard => "Hard error",
        ErrorClass::NotProvider => "Not the provider's",
        ErrorClass::Unclassified => "Unclassified",
    }
}

/// The cause of the route's last failure, written from its code, with the
/// provider's HTTP status when there was one: "Provider overloaded (529)".
pub fn cause(route: &RouteSnapshot) -> Option<String> {
    let failure = route.last_failure.as_ref()?;
    let text = safe_cause(&failure.code);
    Some(match failure.http_status {
        Some(s) => format!("{text} ({s})"),
        None => text,
    })
}

/// "Retry 2 of 3" for a pending retry; the reset wait's single attempt
/// otherwise.
pub fn pending_words(route: &RouteSnapshot) -> Option<String> {
    let p = route.pending.as_ref()?;
    Some(match p.kind {
        PendingKind::Retry => format!("Retry {} of {}", p.retry_ordinal, p.max_retries),
        PendingKind::ResetWait => "One more try after the provider's reset".to_string(),
        PendingKind::Switch => format!("The switch to {} once it is free", route.candidate.label),
    })
}

/// The retry the route is on: the pending one while waiting; while
/// retrying, the one the newest attempt of this cycle scheduled ("Retry 2
/// of 3 in progress"). A manual retry names no ordinal.
pub fn retry_words(route: &RouteSnapshot, newest: Option<&Attempt>) -> Option<String> {
    if route.pending.is_some() {
        return pending_words(route);
    }
    let a = newest.filter(|a| {
        route.state == RouteState::Retrying
            && a.cycle == route.cycle
            && a.candidate.id == route.candidate.id
    })?;
    match a.decision {
        DecisionKind::Retry => Some(format!("{} in progress", decision_words(a))),
        DecisionKind::WaitForReset => {
            Some("The try after the provider's reset is in progress".into())
        }
        _ => None,
    }
}

/// What happens next, in words: for a waiting route, what follows once its
/// recovery runs out ("then skip to Codex", "then stop for you").
pub fn next_outcome(route: &RouteSnapshot, profile: Option<&Profile>) -> String {
    match (route.state, &route.pending) {
        (RouteState::RetryWait | RouteState::WaitingForReset, Some(p)) => match p.outcome_after {
            OnExhausted::Stop => "then stop for you".to_string(),
            OnExhausted::Skip => match profile {
                Some(profile) => {
                    match profile.next_eligible(&route.candidate.id, &route.excluded) {
                        Some((_, c)) => format!("then skip to {}", c.label),
                        None => "then stop for you (no other candidate is left)".to_string(),
                    }
                }
                None => "then skip to the next candidate".to_string(),
            },
        },
        (RouteState::Retrying, _) => format!(
            "Waiting for the retry's result; if it fails, {}'s policy decides",
            route.candidate.label
        ),
        (RouteState::Switching, Some(_)) => format!(
            "Every other candidate is paused too: {} is tried as soon as its pause ends",
            route.candidate.label
        ),
        (RouteState::Switching, _) => {
            format!("Waiting for the caller to start {}", route.candidate.label)
        }
        (RouteState::ActionRequired, _) => "Nothing happens until you act".to_string(),
        (RouteState::Active, _) => "Nothing to recover".to_string(),
        _ => "Nothing more happens on this route".to_string(),
    }
}

/// Why the route stopped, with what its last failure adds: why the
/// failure was unsafe, or the shared hold that decided.
pub fn stop_words(route: &RouteSnapshot) -> Option<String> {
    let reason = reason_words(route.reason.as_ref()?);
    let failure = route.last_failure.as_ref();
    let detail = match (
        failure.and_then(|f| f.unsafe_reason),
        failure.and_then(|f| f.held_by.as_ref()),
    ) {
        (Some(r), _) => format!(" Here {}.", unsafe_words(r)),
        (None, Some(h)) if route.reason == Some(StopReason::AllCandidatesHeld) => format!(
            " The first to be free again is {}.",
            circuit_label(h.scope, &h.resource)
        ),
        (None, Some(h)) => format!(" {}.", held_by_words(h)),
        (None, None) => String::new(),
    };
    Some(format!("{reason}{detail}"))
}

/// Why a route stopped for a person.
pub fn reason_words(reason: &StopReason) -> String {
    match reason {
        StopReason::Unclassified => {
            "The error was not recognised, so automatic recovery stopped.".into()
        }
        StopReason::NotProvider => {
            "The error is not the provider's (the task, a tool or the request); its owner handles it."
                .into()
        }
        StopReason::EffectUnsafe => {
            "The failure may have come after the agent started working, so repeating the prompt could repeat its effects."
                .into()
        }
        StopReason::EffectAfterFailure => {
            "Output or tool activity of the failed attempt arrived after its recovery was decided; its next attempt was withdrawn so the work is not repeated."
                .into()
        }
        StopReason::DispatchNotClaimed => {
            "Nobody picked up the route's next attempt in time; check that its caller is running."
                .into()
        }
        StopReason::AllCandidatesHeld => {
            "Every remaining candidate is paused by a shared circuit for longer than this server waits.".into()
        }
        StopReason::Stale => "The report did not match the current attempt.".into(),
        StopReason::StoppedByPolicy => "The candidate's policy says stop for this error.".into(),
        StopReason::NoEligibleCandidate => "No other candidate is left in this cycle.".into(),
        StopReason::ProfileChanged => "The profile no longer has this candidate.".into(),
        StopReason::ProfileMisconfigured => {
            "The profile's stored policy cannot be read; edit the profile and save it to repair it."
                .into()
        }
        StopReason::CancelledByUser => "The wait was cancelled.".into(),
        StopReason::StoppedByUser => "Someone stopped the route.".into(),
        StopReason::AmbiguousDispatch => {
            "A retry may or may not have reached the agent, so it is not repeated automatically."
                .into()
        }
        StopReason::Other(other) => {
            format!("Automatic recovery stopped ({}).", other.replace('_', " "))
        }
    }
}

/// Whether `next` is at least as recent as `current` (generations only
/// grow; a switch acknowledgement keeps the generation and moves time).
pub fn is_newer(next: &RouteSnapshot, current: &RouteSnapshot) -> bool {
    (next.generation, next.updated_at) >= (current.generation, current.updated_at)
}

/// Time left, ticking down: "in 5 s", "in 9 min 05 s", "in 2 h 03 min".
/// Rounded up, so a fresh 5 s wait reads "in 5 s". At zero the server acts;
/// the page only says so.
pub fn countdown(remaining_ms: i64) -> String {
    if remaining_ms <= 0 {
        return "due now".to_string();
    }
    let total = (remaining_ms + 999) / 1000;
    let (d, h, m, s) = (
        total / 86_400,
        total / 3600 % 24,
        total / 60 % 60,
        total % 60,
    );
    if total < 60 {
        format!("in {s} s")
    } else if total < 3600 {
        format!("in {m} min {s:02} s")
    } else if total < 86_400 {
        format!("in {h} h {m:02} min")
    } else {
        format!("in {d} d {h} h")
    }
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A calendar time as the panels show it: "30 Nov 2026, 14:38:51 (UTC+5:30)".
pub struct WallTime {
    pub year: i32,
    /// 1–12.
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// East of UTC.
    pub offset_minutes: i32,
}

impl WallTime {
    pub fn format(&self) -> String {
        let zone = match self.offset_minutes {
            0 => "UTC".to_string(),
            o => {
                let sign = if o < 0 { '-' } else { '+' };
                let (h, m) = (o.abs() / 60, o.abs() % 60);
                if m == 0 {
                    format!("UTC{sign}{h}")
                } else {
                    format!("UTC{sign}{h}:{m:02}")
                }
            }
        };
        format!(
            "{} {} {}, {:02}:{:02}:{:02} ({zone})",
            self.day,
            MONTHS[(self.month.clamp(1, 12) - 1) as usize],
            self.year,
            self.hour,
            self.minute,
            self.second
        )
    }

    pub fn utc(t: chrono::DateTime<chrono::Utc>) -> WallTime {
        use chrono::{Datelike, Timelike};
        WallTime {
            year: t.year(),
            month: t.month(),
            day: t.day(),
            hour: t.hour(),
            minute: t.minute(),
            second: t.second(),
            offset_minutes: 0,
        }
    }
}

/// The decision of one attempt, in words.
pub fn decision_words(a: &Attempt) -> String {
    let max = policy_of(a).map(|p| p.retry.max_retries).unwrap_or(0);
    match a.decision {
        DecisionKind::Retry if max > 0 => format!("Retry {} of {max}", a.retry_ordinal),
        DecisionKind::Retry => "Retry".into(),
        DecisionKind::WaitForReset => "Wait for the reset".into(),
        DecisionKind::Skip | DecisionKind::Stop if a.held_by.is_some() => format!(
            "{}: {}",
            if a.decision == DecisionKind::Skip {
                "Skip"
            } else {
                "Stop"
            },
            a.held_by.as_ref().map(held_by_words).unwrap_or_default()
        ),
        DecisionKind::Skip => "Skip".into(),
        DecisionKind::Stop => "Stop".into(),
        DecisionKind::Unclassified => "Stop: not recognised".into(),
        DecisionKind::NotProvider => "Stop: not the provider's".into(),
        DecisionKind::EffectUnsafe => match a.unsafe_reason {
            Some(r) => format!("Stop: unsafe to repeat ({})", unsafe_words(r)),
            None => "Stop: unsafe to repeat".into(),
        },
        DecisionKind::Stale => "Ignored: stale report".into(),
        DecisionKind::Returned => returned_words(a),
        DecisionKind::LateEffect => format!(
            "Late output from this attempt ({}): its work may have run twice",
            a.late_effect
                .as_deref()
                .unwrap_or("effect")
                .replace('_', " ")
        ),
    }
}

/// Why a failure was unsafe to recover from, in a phrase an adapter
/// author acts on.
pub fn unsafe_words(reason: UnsafeReason) -> &'static str {
    match reason {
        UnsafeReason::EffectsReported => "output or tool activity was reported before the failure",
        UnsafeReason::EffectsInEvidence => "the report shows output or tool activity before the error",
        UnsafeReason::BoundaryUnknown => {
            "the report did not say in which phase the failure happened, so it may have been after work began"
        }
        UnsafeReason::OutputStarted => "output had started (phase stream)",
        UnsafeReason::AtTeardown => "the prompt may have completed (phase teardown)",
        UnsafeReason::ResumeNeedsSameCandidate => {
            "only the same candidate can resume its session; another would repeat the prompt"
        }
    }
}

/// Why the policy's exhausted outcome came at once: a shared hold.
pub fn held_by_words(hold: &CircuitHold) -> String {
    format!(
        "{} is paused for longer than this policy waits, so its outcome applied at once",
        circuit_label(hold.scope, &hold.resource)
    )
}

/// Where an attempt's decision led.
pub fn outcome_words(outcome: &RouteOutcome) -> String {
    match outcome {
        RouteOutcome::Switching { to } => format!("Switched to {to}"),
        RouteOutcome::Unchanged { .. } => "Unchanged".into(),
        RouteOutcome::Stopped { .. }
        | RouteOutcome::In {
            state: RouteState::ActionRequired,
        }
        | RouteOutcome::Waiting {
            state: RouteState::ActionRequired,
            ..
        } => "Stopped for a person".into(),
        RouteOutcome::In { state } | RouteOutcome::Waiting { state, .. } => {
            state_words(*state).to_string()
        }
    }
}

/// The class policy recorded with an attempt (`null` for errors no policy
/// governs).
pub fn policy_of(a: &Attempt) -> Option<ClassPolicy> {
    // In the browser, by the policy's own reader (`crate::wire_json`).
    #[cfg(feature = "browser")]
    return crate::wire_json::FromJson::from_json(&a.policy).ok();
    // Through its text, with the string deserializer every answer
    // already uses: `from_value` would compile serde_json's whole
    // `Value` deserializer in for this one read.
    #[cfg(not(feature = "browser"))]
    crate::wire_json::from_str(&a.policy.to_string()).ok()
}

/// The policy in force for an attempt, in the settings page's words.
pub fn policy_words(a: &Attempt) -> String {
    match (policy_of(a), a.class) {
        (Some(p), class) => format!(
            "{}: {}",
            match class {
                ErrorClass::Hard => "Hard",
                _ => "Transient",
            },
            describe(&p)
        ),
        (None, _) => "None: no policy applies to this class".into(),
    }
}

// The runner's terminal lines: lower-case phrases that continue a sentence.

/// Where a decision sends the route, for the runner's line about a failure
/// answer: "retry 2 of 3", "skip to Codex", "stop: not the provider's error".
pub fn decision_next(
    kind: DecisionKind,
    retry_ordinal: Option<u32>,
    max_retries: Option<u32>,
    route: &RouteSnapshot,
) -> String {
    match kind {
        DecisionKind::Retry => format!(
            "retry {} of {}",
            retry_ordinal.unwrap_or(0),
            max_retries.unwrap_or(0)
        ),
        DecisionKind::WaitForReset => "wait for the provider's reset, then try once more".into(),
        DecisionKind::Skip => match route.state {
            RouteState::Switching => format!("skip to {}", route.candidate.label),
            _ => "skip, but no other candidate is left".into(),
        },
        DecisionKind::Stop => "stop for a person (the candidate's policy)".into(),
        DecisionKind::Stale => "ignored: the report was about an earlier attempt".into(),
        DecisionKind::Unclassified => "stop: the error was not recognised".into(),
        DecisionKind::NotProvider => "stop: not the provider's error".into(),
        DecisionKind::EffectUnsafe => {
            "stop: it may have come after the agent started working".into()
        }
        DecisionKind::LateEffect => "late output of an earlier attempt recorded".into(),
        DecisionKind::Returned => format!("back to {}", route.candidate.label),
    }
}

/// A return to a preferred candidate, for its history line: "Back to
/// Claude Code from Codex: Usage limit reached ended at 15:00 UTC".
pub fn returned_words(a: &Attempt) -> String {
    let to = &a.candidate.label;
    let Some(r) = &a.returned else {
        return format!("Back to {to}");
    };
    let from = &r.from.label;
    match (&r.code, r.since) {
        (Some(code), Some(since)) => format!(
            "Back to {to} from {from}: {} ended at {} UTC",
            safe_cause(code),
            since.format("%H:%M")
        ),
        _ => format!("Back to {to} from {from}: first in the profile's order and eligible"),
    }
}

/// The candidate a route on a fallback returns to: the profile's first,
/// when the profile prefers the first eligible (`None` for `stay`).
pub fn returns_to(profile: &Profile) -> Option<&str> {
    if profile.prefer != Prefer::FirstEligible {
        return None;
    }
    profile.candidates.first().map(|c| c.label.as_str())
}

/// A live route on a fallback — on a candidate below the first of a
/// profile that prefers the first eligible ([`returns_to`]): "On fallback
/// Codex; returns to Claude Code when eligible". `None` otherwise.
pub fn fallback_words(route: &RouteSnapshot, returns_to: Option<&str>) -> Option<String> {
    let first = returns_to?;
    (route.candidate.index > 0 && !route.state.is_terminal()).then(|| {
        format!(
            "On fallback {}; returns to {first} when eligible",
            route.candidate.label
        )
    })
}

/// What a waiting route waits for: "retry 2 of 3 of Claude Code (Sonnet)
/// after Provider overloaded (529)".
pub fn awaited(route: &RouteSnapshot) -> String {
    let after = cause(route)
        .map(|c| format!(" after {c}"))
        .unwrap_or_default();
    let who = &route.candidate.label;
    // A shared circuit moved the deadline: say so, not only the policy.
    let held = route
        .pending
        .as_ref()
        .and_then(|p| p.circuit.as_ref())
        .map(|h| {
            let label = circuit_label(h.scope, &h.resource);
            if h.awaiting_probe {
                format!(", while another route probes {label}")
            } else {
                format!(", while {label} is paused for everyone")
            }
        })
        .unwrap_or_default();
    match (route.state, &route.pending) {
        (RouteState::RetryWait, Some(p)) if p.kind == PendingKind::Retry => format!(
            "retry {} of {} of {who}{after}{held}",
            p.retry_ordinal, p.max_retries
        ),
        (RouteState::WaitingForReset, _) | (_, Some(_)) => {
            format!("{who}'s provider reset{after}, then one more try{held}")
        }
        (RouteState::Switching, _) => format!("the switch to {who}{after}"),
        (RouteState::Retrying, _) => format!("the retry of {who} to be handed out"),
        _ => who.to_string(),
    }
}

/// Why the route stopped, and what a person can do.
pub fn stopped_words(route: &RouteSnapshot, page: &str) -> Vec<String> {
    let reason = route
        .reason
        .as_ref()
        .map(reason_words)
        .unwrap_or_else(|| "Automatic recovery stopped.".into());
    let mut lines = vec![format!(
        "stopped for a person on {}: {reason}",
        route.candidate.label
    )];
    if let Some(c) = cause(route) {
        lines.push(format!("last error: {c}"));
    }
    lines.push(format!(
        "open {page} to retry the same candidate, skip to the next one, or leave it stopped"
    ));
    lines
}

/// A plain cause written from the code: what the UI and events show
/// instead of provider text.
pub fn safe_cause(code: &str) -> String {
    let text = match code {
        "network_unavailable" => "Network unavailable",
        "provider_unavailable" => "Provider unavailable",
        "provider_overloaded" => "Provider overloaded",
        "model_capacity" => "Model at capacity",
        "rate_limited" => "Rate limited (short)",
        "agent_transport_lost" => "Agent connection lost before any output",
        "quota_limited" => "Usage limit reached",
        "subscription_required" => "Subscription or credits required",
        "auth_required" => "Login required",
        "missing_credentials" => "Credentials missing",
        "provider_not_configured" => "Provider not configured",
        "model_unavailable" => "Model unavailable",
        "context_window_exceeded" => "Context window exceeded",
        "request_invalid" => "Invalid request",
        "content_policy" => "Blocked by content policy",
        "cancelled" => "Cancelled",
        "tool_failure" => "Tool failure",
        "local_runtime" => "Local runtime error",
        "permission_denied" => "Permission denied",
        "unknown" => "Unrecognised error",
        other => return format!("Error ({})", other.replace('_', " ")),
    };
    text.to_string()
}

/// How the classifier judged an attempt's evidence, from the
/// classification kept with it: "High confidence · provider scope · rule
/// anthropic.overloaded · retry after 12 s". `None` for attempts recorded
/// before the whole classification was kept.
pub fn classification_words(a: &Attempt) -> Option<String> {
    let c = a.classification.as_ref()?;
    let text = |k: &str| c.get(k).and_then(|v| v.as_str()).filter(|s| !s.is_empty());
    let mut parts = Vec::new();
    if let Some(confidence) = text("confidence") {
        parts.push(format!("{} confidence", capitalised(confidence)));
    }
    if let Some(scope) = text("scope") {
        parts.push(format!("{scope} scope"));
    }
    if let Some(rule) = text("classifier_rule") {
        parts.push(format!("rule {rule}"));
    }
    if let Some(phase) = text("phase") {
        parts.push(format!("during {}", phase.replace('_', " ")));
    }
    if let Some(secs) = c.get("retry_after_seconds").and_then(|v| v.as_f64()) {
        let secs = secs.round().max(0.0) as u64;
        parts.push(format!(
            "retry after {}",
            crate::policy::schedule::format_duration(secs)
        ));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// Why the classifier answered as it did, in one line, from the attempt's
/// recorded explain trace (absent on attempts recorded before it was kept).
pub fn explain_words(a: &Attempt) -> Option<String> {
    let v = a.classification.as_ref()?.get("explain")?;
    #[cfg(any(test, feature = "reader"))]
    let e: crate::explain::Explain = crate::wire_json::FromJson::from_json(v).ok()?;
    #[cfg(not(any(test, feature = "reader")))]
    let e: crate::explain::Explain = serde_json::from_value(v.clone()).ok()?;
    Some(format!("Why: {}", e.summary()))
}

/// A provider id as people write it (`anthropic` → "Anthropic").
fn provider_words(id: &str) -> String {
    capitalised(id)
}

/// `s` with an upper-case first letter. Names written here (provider ids,
/// the classifier's confidences) are ASCII; a first letter outside ASCII
/// is left as written, which keeps Unicode's case tables (24 KB) out of the
/// browser bundle.
fn capitalised(s: &str) -> String {
    let mut s = s.to_string();
    if let Some(first) = s.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    s
}

/// A circuit's resource for people: "Anthropic", "Anthropic account
/// team-a", "Anthropic model claude-sonnet-4-5", "Agent profile claude".
pub fn circuit_label(scope: CircuitScope, resource: &str) -> String {
    let (provider, rest) = resource.split_once('/').unwrap_or((resource, ""));
    match scope {
        CircuitScope::Provider => provider_words(resource),
        CircuitScope::Account => format!("{} account {rest}", provider_words(provider)),
        CircuitScope::Model => format!("{} model {rest}", provider_words(provider)),
        CircuitScope::Profile => format!("Agent profile {resource}"),
    }
}

/// A circuit's state in a word.
pub fn circuit_status_words(status: CircuitStatus) -> &'static str {
    match status {
        CircuitStatus::Closed => "Working",
        CircuitStatus::Open => "Paused",
        CircuitStatus::Probing => "Probing",
    }
}

fn routes_waiting(n: i64) -> String {
    match n {
        1 => "1 route waiting".to_string(),
        n => format!("{n} routes waiting"),
    }
}

/// Why a route waits, when a circuit holds it: "Anthropic account team-a
/// paused until 15:00 — 37 routes waiting, one probe at 15:00". `until` is
/// the hold's deadline as the panel shows times; `circuit` is the circuit
/// as last listed (for the count), when known.
pub fn circuit_hold_words(
    hold: &CircuitHold,
    circuit: Option<&CircuitView>,
    until: &str,
) -> String {
    let label = circuit_label(hold.scope, &hold.resource);
    let waiting = circuit
        .map(|c| format!(" — {}", routes_waiting(c.routes_waiting.max(1))))
        .unwrap_or_default();
    if hold.awaiting_probe {
        format!("{label} is being probed by another route{waiting}; this one goes after its outcome, by {until}")
    } else if waiting.is_empty() {
        format!("{label} paused until {until}, then one probe")
    } else {
        format!("{label} paused until {until}{waiting}, one probe at {until}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::Generation;
    use crate::policy::CandidatePolicy;
    use crate::profile::Candidate;
    use crate::route::{Caller, CandidateRef, LastFailure, Pending};
    use chrono::{DateTime, Utc};

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().to_utc()
    }

    fn route(state: RouteState) -> RouteSnapshot {
        RouteSnapshot {
            id: "r_1".into(),
            profile_id: "p".into(),
            caller: Caller {
                kind: CallerKind::Kanban,
                reference: "task-1".into(),
            },
            state,
            generation: Generation(2),
            cycle: 1,
            candidate: CandidateRef {
                index: 0,
                id: "a".into(),
                label: "Claude".into(),
            },
            invocation_id: "inv".into(),
            prompt_generation: 1,
            pending: None,
            last_failure: None,
            reason: None,
            excluded: vec![],
            updated_at: t("2026-11-30T12:00:00Z"),
            server_time: t("2026-11-30T12:00:00Z"),
        }
    }

    fn waiting(outcome: OnExhausted) -> RouteSnapshot {
        let mut r = route(RouteState::RetryWait);
        r.pending = Some(Pending {
            kind: PendingKind::Retry,
            deadline: t("2026-11-30T12:00:05Z"),
            retry_ordinal: 2,
            max_retries: 3,
            outcome_after: outcome,
            code: "provider_overloaded".into(),
            class: ErrorClass::Transient,
            circuit: None,
            resume: None,
        });
        r.last_failure = Some(LastFailure {
            code: "provider_overloaded".into(),
            class: ErrorClass::Transient,
            safe_cause: "Provider overloaded".into(),
            http_status: None,
            unsafe_reason: None,
            held_by: None,
        });
        r
    }

    fn candidate(id: &str, label: &str) -> Candidate {
        Candidate {
            id: id.into(),
            label: label.into(),
            agent: "x".into(),
            provider_id: String::new(),
            model_id: String::new(),
            profile_ref: String::new(),
            account_ref: None,
            policy: CandidatePolicy {
                version: 1,
                transient: Default::default(),
                hard: Default::default(),
            },
        }
    }

    fn profile(ids: &[(&str, &str)]) -> Profile {
        Profile {
            id: "p".into(),
            name: "P".into(),
            revision: 1,
            prefer: Default::default(),
            candidates: ids.iter().map(|(i, l)| candidate(i, l)).collect(),
            configuration_error: None,
            created_at: t("2026-11-30T12:00:00Z"),
            updated_at: t("2026-11-30T12:00:00Z"),
        }
    }

    fn attempt(excerpt: &str, decision: DecisionKind, policy: serde_json::Value) -> Attempt {
        Attempt {
            seq: 1,
            generation: Generation(1),
            cycle: 1,
            candidate: CandidateRef::default(),
            invocation_id: "inv".into(),
            code: "provider_overloaded".into(),
            class: ErrorClass::Transient,
            catalogue_version: "1".into(),
            classifier_rule: "r".into(),
            safe_excerpt: excerpt.into(),
            http_status: None,
            policy,
            decision,
            retry_ordinal: 2,
            deadline: None,
            outcome: RouteOutcome::Waiting {
                state: RouteState::RetryWait,
                until: t("2026-11-30T12:00:05Z"),
            },
            created_at: t("2026-11-30T12:00:00Z"),
            classification: None,
            unsafe_reason: None,
            held_by: None,
            late_effect: None,
            returned: None,
        }
    }

    #[test]
    fn cause_comes_from_the_code_plus_the_status_number() {
        let mut r = waiting(OnExhausted::Skip);
        assert_eq!(cause(&r), Some("Provider overloaded".into()));
        if let Some(f) = r.last_failure.as_mut() {
            f.http_status = Some(529);
        }
        assert_eq!(cause(&r), Some("Provider overloaded (529)".into()));
        let mut unknown = route(RouteState::ActionRequired);
        unknown.last_failure = Some(LastFailure {
            code: "unknown".into(),
            class: ErrorClass::Unclassified,
            safe_cause: "raw text must not be used".into(),
            http_status: None,
            unsafe_reason: None,
            held_by: None,
        });
        assert_eq!(cause(&unknown), Some("Unrecognised error".into()));
    }

    #[test]
    fn pending_reads_as_an_ordinal() {
        assert_eq!(
            pending_words(&waiting(OnExhausted::Skip)).as_deref(),
            Some("Retry 2 of 3")
        );
        assert_eq!(pending_words(&route(RouteState::Active)), None);
    }

    #[test]
    fn a_scheduled_retry_in_flight_keeps_its_ordinal() {
        let policy = serde_json::json!({
            "retry": {"enabled": true, "max_retries": 3, "initial_interval_seconds": 5},
            "wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "on_exhausted": "skip"
        });
        let mut a = attempt("HTTP 529: Overloaded", DecisionKind::Retry, policy);
        a.candidate.id = "a".into();
        let mut r = route(RouteState::Retrying);
        assert_eq!(
            retry_words(&r, Some(&a)).as_deref(),
            Some("Retry 2 of 3 in progress")
        );
        // A manual retry from manual recovery starts a new cycle.
        r.cycle = 2;
        assert_eq!(retry_words(&r, Some(&a)), None);
        assert_eq!(
            retry_words(&waiting(OnExhausted::Skip), Some(&a)).as_deref(),
            Some("Retry 2 of 3")
        );
        assert_eq!(retry_words(&route(RouteState::Active), Some(&a)), None);
    }

    #[test]
    fn next_outcome_names_the_next_eligible_candidate() {
        let p = profile(&[("a", "Claude"), ("b", "Codex"), ("c", "Gemini")]);
        let mut r = waiting(OnExhausted::Skip);
        assert_eq!(next_outcome(&r, Some(&p)), "then skip to Codex");
        r.excluded = vec!["b".into()];
        assert_eq!(next_outcome(&r, Some(&p)), "then skip to Gemini");
        r.excluded = vec!["b".into(), "c".into()];
        assert_eq!(
            next_outcome(&r, Some(&p)),
            "then stop for you (no other candidate is left)"
        );
        // Wraps around from the last candidate.
        let mut last = waiting(OnExhausted::Skip);
        last.candidate.id = "c".into();
        last.excluded = vec!["c".into()];
        assert_eq!(next_outcome(&last, Some(&p)), "then skip to Claude");
        assert_eq!(
            next_outcome(&waiting(OnExhausted::Stop), Some(&p)),
            "then stop for you"
        );
        assert_eq!(
            next_outcome(&waiting(OnExhausted::Skip), None),
            "then skip to the next candidate"
        );
    }

    #[test]
    fn countdown_rounds_up_and_stops_at_zero() {
        assert_eq!(countdown(5_000), "in 5 s");
        assert_eq!(countdown(4_001), "in 5 s");
        assert_eq!(countdown(1), "in 1 s");
        assert_eq!(countdown(0), "due now");
        assert_eq!(countdown(-3_000), "due now");
        assert_eq!(countdown(65_000), "in 1 min 05 s");
        assert_eq!(countdown(3_000_000), "in 50 min 00 s");
        assert_eq!(countdown(3_600_000 + 180_000), "in 1 h 03 min");
        assert_eq!(countdown(2 * 86_400_000 + 3_600_000), "in 2 d 1 h");
    }

    #[test]
    fn wall_time_names_its_zone() {
        let mut w = WallTime::utc(t("2026-11-30T09:05:07Z"));
        assert_eq!(w.format(), "30 Nov 2026, 09:05:07 (UTC)");
        w.offset_minutes = 330;
        assert_eq!(w.format(), "30 Nov 2026, 09:05:07 (UTC+5:30)");
        w.offset_minutes = -300;
        assert_eq!(w.format(), "30 Nov 2026, 09:05:07 (UTC-5)");
    }

    #[test]
    fn newer_snapshots_win() {
        let a = route(RouteState::Switching);
        let mut b = a.clone();
        b.updated_at = t("2026-11-30T12:00:01Z");
        assert!(is_newer(&b, &a));
        assert!(!is_newer(&a, &b));
        let mut c = a.clone();
        c.generation = Generation(1);
        c.updated_at = t("2026-11-30T13:00:00Z");
        assert!(!is_newer(&c, &a));
    }

    #[test]
    fn history_rows_in_words() {
        let policy = serde_json::json!({
            "retry": {"enabled": true, "max_retries": 3, "initial_interval_seconds": 5},
            "wait_for_reset": {"enabled": false, "max_wait_seconds": 0},
            "on_exhausted": "skip"
        });
        let a = attempt("HTTP 529: Overloaded", DecisionKind::Retry, policy);
        assert_eq!(decision_words(&a), "Retry 2 of 3");
        assert_eq!(
            policy_words(&a),
            "Transient: Retry after 5 s, 10 s, 20 s, then skip to the next candidate."
        );
        assert_eq!(outcome_words(&a.outcome), "Waiting to retry");
        assert_eq!(
            outcome_words(&RouteOutcome::Switching { to: "Codex".into() }),
            "Switched to Codex"
        );
        assert_eq!(
            outcome_words(&RouteOutcome::Stopped {
                reason: StopReason::Unclassified
            }),
            "Stopped for a person"
        );
        let u = attempt("zz", DecisionKind::Unclassified, serde_json::Value::Null);
        assert_eq!(decision_words(&u), "Stop: not recognised");
        assert_eq!(policy_words(&u), "None: no policy applies to this class");
    }

    #[test]
    fn reasons_are_sentences() {
        assert!(reason_words(&StopReason::Unclassified).contains("not recognised"));
        assert_eq!(
            reason_words(&StopReason::Other("something_new".into())),
            "Automatic recovery stopped (something new)."
        );
    }

    #[test]
    fn circuits_say_what_is_paused_how_long_and_for_how_many() {
        assert_eq!(
            circuit_label(CircuitScope::Provider, "anthropic"),
            "Anthropic"
        );
        assert_eq!(
            circuit_label(CircuitScope::Account, "anthropic/team-a"),
            "Anthropic account team-a"
        );
        assert_eq!(
            circuit_label(CircuitScope::Model, "openai/gpt-4o"),
            "Openai model gpt-4o"
        );
        assert_eq!(
            circuit_label(CircuitScope::Profile, "claude"),
            "Agent profile claude"
        );
        let hold = CircuitHold {
            scope: CircuitScope::Account,
            resource: "anthropic/team-a".into(),
            until: t("2026-11-30T15:00:00Z"),
            awaiting_probe: false,
        };
        let view = CircuitView {
            scope: CircuitScope::Account,
            resource: "anthropic/team-a".into(),
            label: "Anthropic account team-a".into(),
            state: CircuitStatus::Open,
            until: Some(t("2026-11-30T15:00:00Z")),
            probe_holder: None,
            probe_until: None,
            routes_waiting: 37,
            code: "quota_limited".into(),
            openings: 1,
            changed_at: t("2026-11-30T12:00:00Z"),
        };
        assert_eq!(
            circuit_hold_words(&hold, Some(&view), "15:00"),
            "Anthropic account team-a paused until 15:00 — 37 routes waiting, one probe at 15:00"
        );
        assert_eq!(
            circuit_hold_words(&hold, None, "15:00"),
            "Anthropic account team-a paused until 15:00, then one probe"
        );
        let probing = CircuitHold {
            awaiting_probe: true,
            ..hold
        };
        assert_eq!(
            circuit_hold_words(&probing, Some(&CircuitView { routes_waiting: 1, ..view }), "15:10"),
            "Anthropic account team-a is being probed by another route — 1 route waiting; this one goes after its outcome, by 15:10"
        );
        assert_eq!(circuit_status_words(CircuitStatus::Open), "Paused");
    }

    #[test]
    fn an_attempt_says_how_its_evidence_was_judged() {
        let mut a = attempt("HTTP 529", DecisionKind::Retry, serde_json::Value::Null);
        assert_eq!(classification_words(&a), None);
        a.classification = Some(serde_json::json!({
            "code": "provider_overloaded", "confidence": "high", "scope": "provider",
            "classifier_rule": "anthropic.overloaded", "phase": "session_init",
            "retry_after_seconds": 12.0, "reset_at": "2026-11-30T12:00:12Z"
        }));
        assert_eq!(
            classification_words(&a).as_deref(),
            Some("High confidence · provider scope · rule anthropic.overloaded · during session init · retry after 12 s")
        );
    }

    #[test]
    fn a_route_below_the_first_candidate_is_on_a_fallback_when_it_returns() {
        let mut p = profile(&[("a", "Claude"), ("b", "Codex")]);
        assert_eq!(returns_to(&p), Some("Claude"));
        let mut r = route(RouteState::Active);
        assert_eq!(fallback_words(&r, returns_to(&p)), None, "on the first");
        r.candidate = CandidateRef {
            index: 1,
            id: "b".into(),
            label: "Codex".into(),
        };
        assert_eq!(
            fallback_words(&r, returns_to(&p)).as_deref(),
            Some("On fallback Codex; returns to Claude when eligible")
        );
        r.state = RouteState::Completed;
        assert_eq!(fallback_words(&r, returns_to(&p)), None, "ended");
        p.prefer = Prefer::Stay;
        assert_eq!(returns_to(&p), None, "stay never returns");
    }

    #[test]
    fn a_held_wait_says_the_circuit_holds_it() {
        let mut r = waiting(OnExhausted::Skip);
        let plain = awaited(&r);
        r.pending.as_mut().unwrap().circuit = Some(CircuitHold {
            scope: CircuitScope::Provider,
            resource: "anthropic".into(),
            until: t("2026-11-30T12:10:00Z"),
            awaiting_probe: false,
        });
        assert_eq!(
            awaited(&r),
            format!("{plain}, while Anthropic is paused for everyone")
        );
        r.pending
            .as_mut()
            .unwrap()
            .circuit
            .as_mut()
            .unwrap()
            .awaiting_probe = true;
        assert_eq!(
            awaited(&r),
            format!("{plain}, while another route probes Anthropic")
        );
    }
}
