//! The classifier itself: `fn(&Catalogue, &Evidence) -> Classification`.
//!
//! Pure and deterministic: the same envelope, catalogue and reference time
//! give the same bytes out. The reference time is the envelope's
//! `occurred_at`; only when that is absent does the caller's `now` stand in
//! (see [`classify_at`]), so timing hints are validated against when the
//! failure happened, not when it was reported.

use super::catalogue::verdict::Verdict;
use super::catalogue::{Catalogue, Confidence};
use super::evidence::{Evidence, EvidenceError, Item};
use super::facts::{Facts, Segment, Source};
use super::mask::Mask;
use super::matcher::Evaluation;
use super::{explain, sanitize, timing};
use aho_corasick::AhoCorasick;
use chrono::{DateTime, Utc};
use domain::policy::ErrorClass;
use std::sync::LazyLock;

/// Rule id reported when no catalogue rule matched.
pub const RULE_UNMATCHED: &str = "fallback.unmatched";
/// Rule id reported when the best tier's rules disagreed.
pub const RULE_CONFLICT: &str = "fallback.conflict";

pub use domain::classification::Classification;

/// Classifies with the system clock standing in for a missing `occurred_at`.
pub fn classify(catalogue: &Catalogue, evidence: &Evidence) -> Classification {
    classify_at(catalogue, evidence, Utc::now())
}

/// Classifies one envelope. `now` is used only when the envelope has no
/// `occurred_at`.
pub fn classify_at(
    catalogue: &Catalogue,
    evidence: &Evidence,
    now: DateTime<Utc>,
) -> Classification {
    classify_with(catalogue, evidence, now, false)
}

/// [`classify_at`] with, when `explain` is set, the explain trace (why: the
/// rules per tier, the deciding one, provenance, timing source). The trace
/// evaluates every tier once more; without it nothing extra is done.
pub fn classify_with(
    catalogue: &Catalogue,
    evidence: &Evidence,
    now: DateTime<Utc>,
    explain: bool,
) -> Classification {
    let reference = evidence.occurred_at.unwrap_or(now);
    catalogue.analyse(evidence, |facts, evaluation, verdict, mask| {
        let ask = explain.then_some(mask);
        decide(
            catalogue, evidence, reference, facts, evaluation, verdict, ask,
        )
    })
}

/// The classification the deciding rules and verdict give; with `explain`
/// (the provenance mask in force, if any), its trace too.
fn decide(
    catalogue: &Catalogue,
    evidence: &Evidence,
    reference: DateTime<Utc>,
    facts: &Facts,
    evaluation: &Evaluation<'_>,
    verdict: &Verdict,
    explain: Option<Option<&Mask>>,
) -> Classification {
    let unknown = catalogue.unknown;
    // Where the deciding rule found its evidence, for the trace.
    let mut found: (
        Option<(Source, usize)>,
        Option<usize>,
        &[timing::TimingSource],
    ) = (None, None, &[]);
    let (code, rule_id, confidence, scope, hint, excerpt) = match verdict {
        Verdict::Rule(i) => {
            let i = *i;
            let r = &catalogue.rules[i];
            let mut code = r.code;
            let recovering = matches!(
                catalogue.codes[code].class,
                ErrorClass::Transient | ErrorClass::Hard
            );
            // Where the rule found its evidence: the last segment where its
            // pattern matched, else the item carrying its structured fact.
            // Timing prose is read from that item only.
            let place = evaluation.text_place(i);
            let item = match place {
                Some((src, pos)) => facts.item_at(src, pos),
                None => catalogue.matcher.conditions(i).decisive_item(facts),
            };
            let hint = if recovering && !r.timing.is_empty() {
                timing::resolve(
                    &r.timing,
                    facts,
                    r.text_mask | Source::Error.bit(),
                    item,
                    reference,
                )
            } else {
                None
            };
            if let (Some(h), Some((secs, target))) = (hint, catalogue.codes[code].long_wait) {
                if h.seconds_after(reference) >= secs {
                    code = target;
                }
            }
            let scope = r.scope.or(catalogue.codes[code].scope);
            found = (place, item, &r.timing);
            let excerpt = match (place, item) {
                (Some((src, pos)), _) => {
                    place_excerpt(facts, src, pos, || evaluation.text_focus(i))
                }
                (None, Some(item)) => item_excerpt(
                    facts,
                    evidence,
                    item,
                    catalogue.matcher.conditions(i).error_types(),
                ),
                (None, None) => fallback_excerpt(facts, evidence),
            };
            (code, r.id.clone(), r.confidence, scope, hint, excerpt)
        }
        Verdict::Conflict(_) => (
            unknown,
            RULE_CONFLICT.to_owned(),
            Confidence::Low,
            None,
            None,
            fallback_excerpt(facts, evidence),
        ),
        Verdict::None => (
            unknown,
            RULE_UNMATCHED.to_owned(),
            Confidence::Low,
            None,
            None,
            fallback_excerpt(facts, evidence),
        ),
    };
    let c = &catalogue.codes[code];
    let hint = hint.filter(|_| matches!(c.class, ErrorClass::Transient | ErrorClass::Hard));
    let explain = explain.map(|mask| {
        let (text, item, trusted) = found;
        let decided = explain::Decided {
            verdict,
            text,
            item,
            trusted,
            source: hint.map(|h| h.source),
        };
        explain::trace(catalogue, evidence, facts, mask, decided)
    });
    Classification {
        code: c.name.clone(),
        class: c.class,
        catalogue_version: catalogue.version().to_owned(),
        confidence,
        scope,
        classifier_rule: rule_id,
        provider_id: evidence
            .provider_id
            .as_deref()
            .map(sanitize::identifier)
            .filter(|s| !s.is_empty()),
        model_id: evidence
            .model_id
            .as_deref()
            .map(sanitize::identifier)
            .filter(|s| !s.is_empty()),
        phase: evidence.phase,
        occurred_at: reference,
        retry_after_seconds: hint.map(|h| h.seconds_after(reference)),
        reset_at: hint.map(|h| h.reset_at),
        safe_excerpt: excerpt,
        explain,
    }
}

/// Classifies a JSON input (an envelope or `{"evidence": envelope}`), with
/// the system clock standing in for a missing `occurred_at`.
pub fn classify_json(
    catalogue: &Catalogue,
    value: &serde_json::Value,
) -> Result<Classification, EvidenceError> {
    classify_json_at(catalogue, value, Utc::now())
}

/// [`classify_json`] with an injected clock (used only when the envelope has
/// no `occurred_at`).
pub fn classify_json_at(
    catalogue: &Catalogue,
    value: &serde_json::Value,
    now: DateTime<Utc>,
) -> Result<Classification, EvidenceError> {
    let ev = Evidence::from_json_value(value)?;
    Ok(classify_at(catalogue, &ev, now))
}

/// Classifies one JSONL input line at reference time `now`.
pub fn classify_line(
    catalogue: &Catalogue,
    line: &str,
    now: DateTime<Utc>,
) -> Result<Classification, EvidenceError> {
    classify_line_with(catalogue, line, now, false)
}

/// [`classify_line`], with the explain trace when `explain` is set.
pub fn classify_line_with(
    catalogue: &Catalogue,
    line: &str,
    now: DateTime<Utc>,
    explain: bool,
) -> Result<Classification, EvidenceError> {
    let ev = Evidence::from_json_str(line)?;
    Ok(classify_with(catalogue, &ev, now, explain))
}

/// The excerpt of the segment at `pos`, centred on `focus` (a haystack
/// position), which is only computed when the segment is too long to show
/// whole.
fn place_excerpt(
    f: &Facts,
    src: Source,
    pos: usize,
    focus: impl FnOnce() -> Option<usize>,
) -> String {
    match f.segment_at(src, pos) {
        Some(seg) => sanitize::excerpt_around(f.segment_text(seg), || {
            focus().map_or(0, |at| at.saturating_sub(seg.start))
        }),
        None => String::new(),
    }
}

/// The excerpt of the item that carries a rule's structured fact: the line
/// naming one of the rule's `error_types`, else the item's longest.
fn item_excerpt(f: &Facts, ev: &Evidence, item: usize, error_types: &[String]) -> String {
    let segs: Vec<_> = f
        .segments
        .iter()
        .filter(|s| s.item == item && s.source != Source::Agent)
        .collect();
    // Identifiers are normalised to lower case: searching the lower-cased
    // text is an ASCII-case-insensitive search.
    let lower_has = |s: &Segment, needle: &str| {
        !needle.is_empty() && memchr::memmem::find(f.segment_lower(s), needle.as_bytes()).is_some()
    };
    let tokens: Vec<&String> = f
        .tokens
        .iter()
        .filter(|(t, i)| *i == item && error_types.contains(t))
        .map(|(t, _)| t)
        .collect();
    // The line that names the identifier, else the most informative (longest).
    let seg = segs
        .iter()
        .find(|s| tokens.iter().any(|tok| lower_has(s, tok)))
        .or_else(|| {
            segs.iter()
                .max_by_key(|s| (s.end - s.start, usize::MAX - s.start))
        });
    let prefix = match ev.items.get(item) {
        Some(Item::Http(h)) => h.status.map(|s| format!("HTTP {s}: ")),
        Some(Item::AcpError(e)) => e.code.map(|c| format!("ACP error {c}: ")),
        _ => None,
    };
    if let Some(s) = seg {
        let text = f.segment_text(s);
        return match prefix {
            Some(p) => sanitize::excerpt(&format!("{p}{}", excerpt_head(text)), 0),
            None => sanitize::excerpt(text, 0),
        };
    }
    // An item without text of its own (an exit, a stop): describe it and add
    // the last error line, which usually says why.
    let head = ev.items.get(item).map(describe_item).unwrap_or_default();
    let tail = last_error_line(f);
    match (head.is_empty(), tail) {
        (false, Some(t)) => {
            sanitize::excerpt(&format!("{head}: {}", excerpt_head(f.segment_text(t))), 0)
        }
        (false, None) => head,
        (true, Some(t)) => sanitize::excerpt(f.segment_text(t), 0),
        (true, None) => fallback_excerpt(f, ev),
    }
}

/// The start of a text an excerpt at its beginning is taken from: an excerpt
/// with focus 0 reads at most the first ~284 bytes, and only asks whether
/// the text is longer than 320, so a prefix of at least 321 bytes gives the
/// same excerpt without copying a long body.
fn excerpt_head(text: &str) -> &str {
    super::evidence::cut(text, 400).0
}

/// Words that make a line read like an error (ASCII case-insensitive).
static ERRORISH: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::new([
        "error",
        "fail",
        "denied",
        "exceeded",
        "invalid",
        "unable",
        "not found",
        "killed",
    ])
    .expect("errorish words")
});

/// The last error-haystack line that reads like an error, else the last one.
fn last_error_line(f: &Facts) -> Option<&Segment> {
    // The words are lower case: matching the lower-cased line is matching
    // the line ASCII-case-insensitively.
    let errorish = |s: &Segment| ERRORISH.is_match(f.segment_lower(s));
    let mut last = None;
    for s in f.segments.iter().filter(|s| s.source == Source::Error) {
        last = Some(s);
    }
    f.segments
        .iter()
        .rev()
        .filter(|s| s.source == Source::Error)
        .find(|s| errorish(s))
        .or(last)
}

/// For unknown or conflicting evidence: the last line that looks like an
/// error, else the last text, else a description of the last item.
fn fallback_excerpt(f: &Facts, ev: &Evidence) -> String {
    if let Some(s) = last_error_line(f) {
        return sanitize::excerpt(f.segment_text(s), 0);
    }
    if let Some(s) = f.segments.iter().rev().find(|s| s.source == Source::Tool) {
        return sanitize::excerpt(f.segment_text(s), 0);
    }
    ev.items
        .iter()
        .rev()
        .map(describe_item)
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "no failure text in the evidence".to_owned())
}

/// A neutral description of an item without text of its own.
fn describe_item(item: &Item) -> String {
    match item {
        Item::ProcessExit(p) => match (p.exit_code, &p.signal) {
            (Some(c), Some(s)) => format!("process exited with code {c} ({s})"),
            (Some(c), None) => format!("process exited with code {c}"),
            (None, Some(s)) => format!("process killed by {s}"),
            (None, None) => "process exited".to_owned(),
        },
        Item::AcpStop(s) => format!(
            "stop reason: {}",
            sanitize::identifier(s.stop_reason.as_deref().unwrap_or("none"))
        ),
        Item::Http(h) => match h.status {
            Some(s) => format!("HTTP {s}"),
            None => "HTTP request without a response".to_owned(),
        },
        Item::AcpError(e) => match e.code {
            Some(c) => format!("ACP error {c}"),
            None => "ACP error".to_owned(),
        },
        Item::AcpUpdate(u) if u.status.as_deref() == Some("failed") => {
            "a tool call failed".to_owned()
        }
        _ => String::new(),
    }
}
