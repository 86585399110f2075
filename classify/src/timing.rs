//! Timing hints: when a provider says the request may be tried again.
//!
//! Only hints a rule trusts are read (its timing profile names the sources),
//! and every hint is validated against the reference time (`occurred_at`):
//! a hint at or before it, beyond [`MAX_HORIZON_DAYS`], unparseable, or a
//! clock time without an explicit zone is dropped, never guessed. A client's
//! own backoff ("Retrying in 6 seconds…", "will retry after 6173ms") is not a
//! hint: the phrase extractor only reads what the *provider* asks for.
//!
//! Precedence, highest first: `retry-after-ms`, `retry-after`, provider reset
//! headers, then the body (Google RetryInfo, JSON reset fields, phrases such
//! as "try again in 20s", `…|<epoch>` sentinels, zoned clock times). The first
//! source that yields a valid hint wins.

use super::facts::{BodyHint, Facts, Source};
use super::matcher::scan::Led;
use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDate, TimeZone, Utc};
use regex::bytes::{Regex, RegexBuilder};
use std::str::FromStr;
use std::sync::LazyLock;

/// Hints further out than this are not believed.
pub const MAX_HORIZON_DAYS: i64 = 400;

/// Where a hint may come from; rules name the ones they trust.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimingSource {
    /// `retry-after-ms` header.
    RetryAfterMs,
    /// `retry-after` header: seconds or an HTTP date.
    RetryAfter,
    /// `x-ratelimit-reset-*`, `anthropic-ratelimit-*-reset` and friends,
    /// paired with their `remaining` headers.
    ResetHeaders,
    /// `anthropic-ratelimit-unified-*-reset`: subscription usage windows.
    UnifiedReset,
    /// Google `RetryInfo.retryDelay`.
    RetryInfo,
    /// JSON fields: `resets_at`, `resets_in_seconds`, `retry_after`, …
    BodyFields,
    /// Prose: "try again in 20s", "resets in 4 days 23 hours".
    Phrase,
    /// `…limit reached|1796068800`.
    Epoch,
    /// "resets 10am (Asia/Seoul)", "at 3:00 PM UTC", ISO timestamps with a zone.
    Clock,
}

impl TimingSource {
    pub const ALL: [TimingSource; 9] = [
        TimingSource::RetryAfterMs,
        TimingSource::RetryAfter,
        TimingSource::ResetHeaders,
        TimingSource::UnifiedReset,
        TimingSource::RetryInfo,
        TimingSource::BodyFields,
        TimingSource::Phrase,
        TimingSource::Epoch,
        TimingSource::Clock,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TimingSource::RetryAfterMs => "retry_after_ms",
            TimingSource::RetryAfter => "retry_after",
            TimingSource::ResetHeaders => "reset_headers",
            TimingSource::UnifiedReset => "unified_reset",
            TimingSource::RetryInfo => "retry_info",
            TimingSource::BodyFields => "body_fields",
            TimingSource::Phrase => "phrase",
            TimingSource::Epoch => "epoch",
            TimingSource::Clock => "clock",
        }
    }

    pub fn parse(s: &str) -> Option<TimingSource> {
        TimingSource::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// A validated hint: an absolute instant after the reference time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hint {
    pub reset_at: DateTime<Utc>,
    pub source: TimingSource,
}

impl Hint {
    /// Seconds from `now` to the hint, millisecond precision.
    pub fn seconds_after(&self, now: DateTime<Utc>) -> f64 {
        (self.reset_at - now).num_milliseconds() as f64 / 1000.0
    }
}

/// Sorts timing sources into precedence order, once, when a rule is compiled.
pub(crate) fn precedence(sources: &[TimingSource]) -> Vec<TimingSource> {
    let mut ordered = sources.to_vec();
    ordered.sort();
    ordered.dedup();
    ordered
}

/// The first valid hint among `sources` (in precedence order, see
/// [`precedence`]).
/// `item`, when given, limits prose hints to that item's text: a hint must
/// come from the same message as the failure it explains.
pub(crate) fn resolve(
    sources: &[TimingSource],
    facts: &Facts,
    text_sources: u8,
    item: Option<usize>,
    now: DateTime<Utc>,
) -> Option<Hint> {
    debug_assert!(sources.windows(2).all(|w| w[0] < w[1]));
    for &src in sources {
        let found = match src {
            TimingSource::RetryAfterMs => facts
                .timing
                .retry_after_ms
                .as_deref()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .and_then(|ms| after_seconds(now, ms / 1000.0)),
            TimingSource::RetryAfter => facts
                .timing
                .retry_after
                .as_deref()
                .and_then(|v| parse_retry_after(v, now)),
            TimingSource::ResetHeaders => reset_headers(facts, now),
            TimingSource::UnifiedReset => facts
                .timing
                .unified_resets
                .iter()
                .filter_map(|v| parse_reset_value(v, now))
                .filter(|t| valid(*t, now))
                .max(),
            TimingSource::RetryInfo => facts
                .timing
                .retry_info
                .iter()
                .filter_map(|v| parse_go_duration(v.trim()))
                .filter_map(|s| after_seconds(now, s))
                .max(),
            TimingSource::BodyFields => facts.timing.body.iter().find_map(|h| {
                let t = match h {
                    BodyHint::Absolute(v) => parse_absolute(v),
                    BodyHint::Seconds(s) => after_seconds(now, *s),
                }?;
                valid(t, now).then_some(t)
            }),
            TimingSource::Phrase => texts(facts, text_sources, item)
                .filter_map(|(t, lower)| phrase_hint(t, lower, now))
                .max(),
            TimingSource::Epoch => texts(facts, text_sources, item)
                .filter_map(|(t, _)| epoch_hint(t, now))
                .max(),
            TimingSource::Clock => texts(facts, text_sources, item)
                .filter_map(|(t, lower)| clock_hint(t, lower, now))
                .max(),
        };
        if let Some(t) = found.filter(|t| valid(*t, now)) {
            return Some(Hint {
                reset_at: t,
                source: src,
            });
        }
    }
    None
}

/// The texts timing prose is read from, each with its ASCII-lowercased copy.
fn texts(facts: &Facts, mask: u8, item: Option<usize>) -> impl Iterator<Item = (&str, &[u8])> {
    Source::ALL
        .into_iter()
        .filter(move |s| mask & s.bit() != 0)
        .filter_map(move |s| {
            let slot = s as usize;
            let (start, end) = match item {
                // An item's segments are contiguous in each haystack.
                Some(i) => {
                    let mut segs = facts
                        .segments
                        .iter()
                        .filter(|g| g.source == s && g.item == i);
                    let first = segs.next()?;
                    (first.start, segs.next_back().map_or(first.end, |g| g.end))
                }
                None => (0, facts.hay[slot].len()),
            };
            (end > start).then(|| (&facts.hay[slot][start..end], &facts.lower[slot][start..end]))
        })
}

fn valid(t: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    t > now && t <= now + Duration::days(MAX_HORIZON_DAYS)
}

fn after_seconds(now: DateTime<Utc>, secs: f64) -> Option<DateTime<Utc>> {
    if !secs.is_finite() || secs <= 0.0 || secs > (MAX_HORIZON_DAYS * 86_400) as f64 {
        return None;
    }
    let ms = (secs * 1000.0).round() as i64;
    if ms <= 0 {
        return None;
    }
    now.checked_add_signed(Duration::milliseconds(ms))
}

/// `retry-after`: delay seconds (integer or decimal) or an HTTP date.
fn parse_retry_after(v: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let v = v.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return after_seconds(now, secs);
    }
    httpdate::parse_http_date(v).ok().map(DateTime::<Utc>::from)
}

/// A reset header value: RFC 3339, epoch seconds/milliseconds, a Go-style
/// duration (`6m0s`, `17ms`), or plain seconds.
fn parse_reset_value(v: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let v = v.trim();
    if let Ok(n) = v.parse::<f64>() {
        if n >= 1e12 {
            return Utc.timestamp_millis_opt(n as i64).single();
        }
        if n >= 1e9 {
            return Utc.timestamp_opt(n as i64, 0).single();
        }
        return after_seconds(now, n);
    }
    if let Ok(t) = DateTime::parse_from_rfc3339(v) {
        return Some(t.with_timezone(&Utc));
    }
    parse_go_duration(v).and_then(|s| after_seconds(now, s))
}

/// Absolute time in a JSON field: epoch seconds or milliseconds, or RFC 3339.
fn parse_absolute(v: &str) -> Option<DateTime<Utc>> {
    let v = v.trim();
    if let Ok(n) = v.parse::<f64>() {
        if !n.is_finite() {
            return None;
        }
        if n >= 1e12 {
            return Utc.timestamp_millis_opt(n as i64).single();
        }
        return Utc.timestamp_opt(n as i64, 0).single();
    }
    DateTime::parse_from_rfc3339(v)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Reset headers that describe the exhausted limit: those whose `remaining`
/// partner is 0, else those without a partner; the latest of them.
fn reset_headers(facts: &Facts, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let headers = &facts.timing.reset_headers;
    let exhausted: Vec<_> = headers
        .iter()
        .filter(|h| {
            h.remaining
                .as_deref()
                .is_some_and(|r| r.trim().parse::<f64>().is_ok_and(|n| n <= 0.0))
        })
        .collect();
    let pick: Vec<_> = if exhausted.is_empty() {
        headers.iter().filter(|h| h.remaining.is_none()).collect()
    } else {
        exhausted
    };
    pick.into_iter()
        .filter_map(|h| parse_reset_value(&h.value, now))
        .filter(|t| valid(*t, now))
        .max()
}

/// Go / Google durations: `6m0s`, `1.984999999s`, `17ms`, `1h2m3s`, `47s`.
pub(crate) fn parse_go_duration(s: &str) -> Option<f64> {
    let s = s.trim();
    if s.is_empty() {
        return None;
    }
    let b = s.as_bytes();
    let mut i = 0;
    let mut total = 0.0;
    let mut any = false;
    while i < b.len() {
        let start = i;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        if start == i {
            return None;
        }
        let n: f64 = s[start..i].parse().ok()?;
        let ustart = i;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        let mult = match &s[ustart..i] {
            "ms" => 0.001,
            "us" | "µs" => 0.000_001,
            "ns" => 0.000_000_001,
            "s" | "" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86_400.0,
            _ => return None,
        };
        total += n * mult;
        any = true;
    }
    any.then_some(total)
}

// ---------------------------------------------------------------------------
// Phrases

/// "try again in", "retry after", "resets in", … (the duration follows).
static PHRASE_TRIGGER: LazyLock<Led> = LazyLock::new(|| {
    Led::new(
        r"\b(?:try again|retry|resets?|available again|please wait|wait|refresh(?:es)?|come back)[ \t]+(?:in|after|for)?[ \t]*",
        &[
            "try again",
            "retry",
            "reset",
            "available again",
            "please wait",
            "wait",
            "refresh",
            "come back",
        ],
    )
});

/// "请5s后再试", "请30秒后重试", "请在1分钟后再次尝试": a wait, then 后 (after)
/// and a retry word. Chinese providers and relays say it this way.
static CJK_PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(
        r"(\d+(?:\.\d+)?)\s*(秒钟|秒|分钟|分|小时|s|sec|min|h)\s*(?:之)?后(?:再试|重试|再次尝试|再请求)",
    )
    .build()
    .expect("cjk phrase pattern compiles")
});

fn cjk_phrase_hint(text: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    // Every such phrase has 后; most texts have none.
    memchr::memmem::find(text.as_bytes(), "后".as_bytes())?;
    CJK_PHRASE
        .captures_iter(text.as_bytes())
        .take(8)
        .filter_map(|c| {
            let n: f64 = std::str::from_utf8(c.get(1)?.as_bytes())
                .ok()?
                .parse()
                .ok()?;
            let unit = std::str::from_utf8(c.get(2)?.as_bytes()).ok()?;
            let mult = match unit {
                "秒钟" | "秒" | "s" | "sec" => 1.0,
                "分钟" | "分" | "min" => 60.0,
                _ => 3600.0,
            };
            after_seconds(now, n * mult)
        })
        .filter(|t| valid(*t, now))
        .max()
}

/// The latest valid "try again in …" style hint in `text` (`lower` is it
/// ASCII-lowercased).
fn phrase_hint(text: &str, lower: &[u8], now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let mut best = cjk_phrase_hint(text, now);
    for m in PHRASE_TRIGGER.find(text.as_bytes(), lower).take(16) {
        // A client announcing its own backoff is not the provider's hint.
        let trigger = &text[m.clone()];
        let retry_word = trigger
            .get(..5)
            .is_some_and(|w| w.eq_ignore_ascii_case("retry"));
        if retry_word {
            let before = &text[..m.start];
            let tail: String = before
                .chars()
                .rev()
                .take(12)
                .collect::<String>()
                .chars()
                .rev()
                .collect::<String>()
                .to_ascii_lowercase();
            if tail.ends_with("will ") || tail.ends_with("'ll ") {
                continue;
            }
        }
        if let Some(secs) = parse_prose_duration(skip_approximation(&text[m.end..])) {
            if let Some(t) = after_seconds(now, secs) {
                if valid(t, now) && best.is_none_or(|b| t > b) {
                    best = Some(t);
                }
            }
        }
    }
    best
}

/// `s` without a leading approximation ("~144 min", "about 2 hours"): an
/// approximate wait the provider names is still its wait.
fn skip_approximation(s: &str) -> &str {
    let s = s.strip_prefix('~').unwrap_or(s);
    for word in [
        "about ",
        "approximately ",
        "approx. ",
        "around ",
        "roughly ",
    ] {
        let b = s.as_bytes();
        // Bytes, not `str`: the prefix is ASCII, so the cut is a boundary.
        if b.len() > word.len() && b[..word.len()].eq_ignore_ascii_case(word.as_bytes()) {
            return &s[word.len()..];
        }
    }
    s
}

/// Parses a duration at the start of `s`: "20s", "1.574s", "6m0s",
/// "4 days 23 hours 59 minutes", "2 hours", "an hour", "1h2m".
pub(crate) fn parse_prose_duration(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut total = 0.0;
    let mut parts = 0;
    loop {
        // separators between parts
        if parts > 0 {
            while i < b.len() && (b[i] == b' ' || b[i] == b',' || b[i] == b'\t') {
                i += 1;
            }
            // Bytes, not `str`: `i + 4` may fall inside a character.
            if b[i..].len() >= 4 && b[i..i + 4].eq_ignore_ascii_case(b"and ") {
                i += 4;
            }
        }
        // number
        let nstart = i;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        let n: f64 = if i > nstart {
            match s[nstart..i].trim_end_matches('.').parse() {
                Ok(n) => n,
                Err(_) => break,
            }
        } else if parts == 0 && word_at(s, i, "an") {
            i += 2;
            1.0
        } else if parts == 0 && word_at(s, i, "a") {
            i += 1;
            1.0
        } else {
            break;
        };
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        let ustart = i;
        while i < b.len() && b[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit = s[ustart..i].to_ascii_lowercase();
        let mult = match unit.as_str() {
            "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => 0.001,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hr" | "hrs" | "hour" | "hours" => 3600.0,
            "d" | "day" | "days" => 86_400.0,
            "w" | "wk" | "wks" | "week" | "weeks" => 604_800.0,
            _ => break,
        };
        total += n * mult;
        parts += 1;
        if parts > 8 {
            break;
        }
    }
    (parts > 0).then_some(total)
}

fn word_at(s: &str, i: usize, w: &str) -> bool {
    let end = i + w.len();
    end < s.len()
        && s.as_bytes()[i..end].eq_ignore_ascii_case(w.as_bytes())
        && s.as_bytes()[end] == b' '
        && (end + 1 >= s.len() || s.as_bytes()[end + 1].is_ascii_alphabetic())
}

// ---------------------------------------------------------------------------
// Epoch sentinels

static EPOCH: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(r"\|\s*(\d{13}|\d{10})\b")
        .unicode(false)
        .build()
        .expect("epoch pattern compiles")
});

fn epoch_hint(text: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    // Every sentinel has a `|`; most texts have none.
    memchr::memchr(b'|', text.as_bytes())?;
    EPOCH
        .captures_iter(text.as_bytes())
        .take(8)
        .filter_map(|c| {
            let d = std::str::from_utf8(c.get(1)?.as_bytes()).ok()?;
            parse_absolute(d)
        })
        .filter(|t| valid(*t, now))
        .max()
}

// ---------------------------------------------------------------------------
// Clock times

/// A zoned clock time after "resets", "try again at", "until", …
static CLOCK: LazyLock<Led> = LazyLock::new(|| {
    Led::new(
        concat!(
            r"\b(?:resets?(?:[\x20\t]+at)?|try[\x20\t]+again[\x20\t]+(?:at|after)|available[\x20\t]+(?:again[\x20\t]+)?(?:at|after)|regain[\x20\t]+access[\x20\t]+(?:on|at)|until|after)[\x20\t]+",
            r"(?:(?P<mon>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?[\x20\t]+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?[\x20\t]*(?:(?P<year>\d{4}),?[\x20\t]*)?(?:at[\x20\t]+)?|(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})[\x20\t]+(?:at[\x20\t]+)?)?",
            r"(?P<h>\d{1,2})(?::(?P<min>\d{2}))?[\x20\t]*(?P<ampm>[ap]\.?m\b\.?)?[\x20\t]*",
            r"(?P<zone>\([A-Za-z_]+/[A-Za-z_/+-]+\d{0,2}\)|\((?:UTC|GMT)\)|[A-Za-z_]+/[A-Za-z_]+(?:/[A-Za-z_]+)?(?:[+-]\d{1,2}\b)?|(?:UTC|GMT)(?:[\x20\t]*[+-]\d{1,2}(?::?\d{2})?)?|Z\b|[+-]\d{2}:?\d{2})?",
        ),
        &["reset", "try", "available", "regain", "until", "after"],
    )
});

/// An RFC 3339 time after "resets", "until", "at", …
static ISO_TIME: LazyLock<Led> = LazyLock::new(|| {
    Led::new(
        r"\b(?:resets?|reset at|until|after|at|try again at)[ \t]+(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}))",
        &["reset", "until", "after", "at", "try"],
    )
});

/// Whether `b` holds `\d{4}-\d{2}-\d{2}`, which every [`ISO_TIME`] match does.
fn has_iso_date(b: &[u8]) -> bool {
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    memchr::memchr_iter(b'-', b).any(|i| {
        i >= 4
            && digits(i - 4..i)
            && b.get(i + 3) == Some(&b'-')
            && digits(i + 1..i + 3)
            && digits(i + 4..i + 6)
    })
}

/// The latest valid zoned clock time in `text` (`lower` is it
/// ASCII-lowercased).
fn clock_hint(text: &str, lower: &[u8], now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let bytes = text.as_bytes();
    // Both patterns need an hour or a date: no digit, no clock time.
    if !bytes.iter().any(u8::is_ascii_digit) {
        return None;
    }
    let mut best: Option<DateTime<Utc>> = None;
    let mut keep = |t: DateTime<Utc>| {
        if valid(t, now) && best.is_none_or(|b| t > b) {
            best = Some(t);
        }
    };
    let iso = has_iso_date(bytes).then(|| ISO_TIME.captures(bytes, lower));
    for (_, c) in iso.into_iter().flatten().take(8) {
        if let Some(t) = c
            .get(1)
            .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
            .and_then(|s| DateTime::parse_from_rfc3339(&s.replacen(' ', "T", 1)).ok())
        {
            keep(t.with_timezone(&Utc));
        }
    }
    for (_, c) in CLOCK.captures(bytes, lower).take(8) {
        let get = |n: &str| {
            c.name(n)
                .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
        };
        let (Some(zone), Some(h)) = (get("zone"), get("h")) else {
            continue;
        };
        // A bare number is not a clock time: "after 5 UTC" needs minutes or am/pm.
        if get("min").is_none() && get("ampm").is_none() {
            continue;
        }
        let Ok(mut hour) = h.parse::<u32>() else {
            continue;
        };
        let minute = get("min").and_then(|m| m.parse::<u32>().ok()).unwrap_or(0);
        if let Some(ap) = get("ampm") {
            if hour == 0 || hour > 12 {
                continue;
            }
            let pm = ap.to_ascii_lowercase().starts_with('p');
            hour = match (hour, pm) {
                (12, false) => 0,
                (12, true) => 12,
                (h, true) => h + 12,
                (h, false) => h,
            };
        }
        if hour > 23 || minute > 59 {
            continue;
        }
        let date = get("mon")
            .and_then(|mon| {
                let month = month_number(mon)?;
                let day: u32 = get("day")?.parse().ok()?;
                let year: Option<i32> = get("year").and_then(|y| y.parse().ok());
                Some((month, day, year))
            })
            .or_else(|| {
                let year: i32 = get("iy")?.parse().ok()?;
                Some((
                    get("im")?.parse().ok()?,
                    get("id")?.parse().ok()?,
                    Some(year),
                ))
            });
        if let Some(t) = zoned(zone, date, hour, minute, now) {
            keep(t);
        }
    }
    best
}

fn month_number(m: &str) -> Option<u32> {
    let m = m.get(..3)?.to_ascii_lowercase();
    Some(match m.as_str() {
        "jan" => 1,
        "feb" => 2,
        "mar" => 3,
        "apr" => 4,
        "may" => 5,
        "jun" => 6,
        "jul" => 7,
        "aug" => 8,
        "sep" => 9,
        "oct" => 10,
        "nov" => 11,
        "dec" => 12,
        _ => return None,
    })
}

/// A wall-clock time in an explicit zone, resolved to the next such instant
/// after `now` (or the given date). Ambiguous local times take the earlier
/// instant; nonexistent ones (DST gaps) are dropped.
fn zoned(
    zone: &str,
    date: Option<(u32, u32, Option<i32>)>,
    hour: u32,
    minute: u32,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let zone = zone
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    let upper = zone.to_ascii_uppercase();
    if upper == "Z" || upper == "UTC" || upper == "GMT" {
        return resolve_in(&Utc, date, hour, minute, now);
    }
    if let Some(rest) = upper
        .strip_prefix("UTC")
        .or_else(|| upper.strip_prefix("GMT"))
        .or(Some(upper.as_str()).filter(|z| z.starts_with(['+', '-'])))
    {
        let off = parse_offset(rest.trim())?;
        return resolve_in(&off, date, hour, minute, now);
    }
    // POSIX `Etc/GMT+5` is five hours *behind* UTC (the sign is inverted);
    // the tz database already spells it so, only the case needs mending.
    let etc = upper
        .strip_prefix("ETC/GMT")
        .map(|offset| format!("Etc/GMT{offset}"));
    let tz = chrono_tz::Tz::from_str(zone)
        .ok()
        .or_else(|| etc.and_then(|z| chrono_tz::Tz::from_str(&z).ok()))
        .or_else(|| chrono_tz::Tz::from_str(&iana_case(zone)).ok())?;
    resolve_in(&tz, date, hour, minute, now)
}

/// `asia/seoul` → `Asia/Seoul`, `america/new_york` → `America/New_York`.
fn iana_case(zone: &str) -> String {
    let mut out = String::with_capacity(zone.len());
    let mut upper = true;
    for c in zone.chars() {
        if upper {
            out.extend(c.to_uppercase());
        } else {
            out.extend(c.to_lowercase());
        }
        upper = matches!(c, '/' | '_' | '-');
    }
    out
}

fn parse_offset(s: &str) -> Option<chrono::FixedOffset> {
    let (sign, rest) = match s.as_bytes().first()? {
        b'+' => (1, &s[1..]),
        b'-' => (-1, &s[1..]),
        _ => return None,
    };
    let (h, m) = if let Some((h, m)) = rest.split_once(':') {
        (h.parse::<i32>().ok()?, m.parse::<i32>().ok()?)
    } else if rest.len() == 4 {
        (rest[..2].parse().ok()?, rest[2..].parse().ok()?)
    } else {
        (rest.parse().ok()?, 0)
    };
    if h > 14 || m > 59 {
        return None;
    }
    chrono::FixedOffset::east_opt(sign * (h * 3600 + m * 60))
}

fn resolve_in<Z: TimeZone>(
    tz: &Z,
    date: Option<(u32, u32, Option<i32>)>,
    hour: u32,
    minute: u32,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    let local_now = now.with_timezone(tz);
    let at = |d: NaiveDate| -> Option<DateTime<Utc>> {
        let naive = d.and_hms_opt(hour, minute, 0)?;
        match tz.from_local_datetime(&naive) {
            LocalResult::Single(t) => Some(t.with_timezone(&Utc)),
            LocalResult::Ambiguous(a, _) => Some(a.with_timezone(&Utc)),
            LocalResult::None => None,
        }
    };
    match date {
        Some((month, day, Some(year))) => at(NaiveDate::from_ymd_opt(year, month, day)?),
        Some((month, day, None)) => {
            let y = local_now.year();
            let this = at(NaiveDate::from_ymd_opt(y, month, day)?)?;
            if this > now {
                Some(this)
            } else {
                at(NaiveDate::from_ymd_opt(y + 1, month, day)?)
            }
        }
        None => {
            let today = local_now.date_naive();
            match at(today) {
                Some(t) if t > now => Some(t),
                _ => at(today.succ_opt()?),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-30T12:00:00Z".parse().unwrap()
    }

    fn phrase(text: &str) -> Option<DateTime<Utc>> {
        phrase_hint(text, text.to_ascii_lowercase().as_bytes(), now())
    }

    fn clock(text: &str) -> Option<DateTime<Utc>> {
        clock_hint(text, text.to_ascii_lowercase().as_bytes(), now())
    }

    #[test]
    fn go_durations() {
        assert_eq!(parse_go_duration("6m0s"), Some(360.0));
        assert_eq!(parse_go_duration("17ms"), Some(0.017));
        assert_eq!(parse_go_duration("1h2m3s"), Some(3723.0));
        assert_eq!(parse_go_duration("47s"), Some(47.0));
        assert!(parse_go_duration("soon").is_none());
    }

    #[test]
    fn prose_durations() {
        for (s, want) in [
            ("20s.", 20.0),
            ("1.574s. Visit", 1.574),
            ("6m0s. Visit", 360.0),
            ("23m58.56s. Need", 1438.56),
            ("2 hours. Please", 7200.0),
            ("4 days 23 hours 59 minutes.", 431_940.0),
            ("an hour", 3600.0),
            ("6ms. Contact", 0.006),
        ] {
            let got = parse_prose_duration(s).unwrap();
            assert!((got - want).abs() < 1e-6, "{s}: {got}");
        }
        assert!(parse_prose_duration("a moment").is_none());
        assert!(parse_prose_duration("a brief wait").is_none());
        assert!(parse_prose_duration("later").is_none());
    }

    #[test]
    fn durations_next_to_non_ascii_text() {
        // Slicing `str` here once cut through a character.
        assert_eq!(parse_prose_duration("20s aé"), Some(20.0));
        assert_eq!(parse_prose_duration("20s\n(Ué"), Some(20.0));
        assert_eq!(parse_prose_duration("aé"), None);
        assert_eq!(parse_prose_duration("2 hours andé"), Some(7200.0));
        // A separator then a multi-byte character where "and " would be.
        assert_eq!(parse_prose_duration("1h2m3s ⎿ done"), Some(3723.0));
    }

    #[test]
    fn cjk_phrases() {
        assert_eq!(
            phrase("请求过于频繁，请5s后再试。"),
            Some(now() + Duration::seconds(5))
        );
        assert_eq!(phrase("请30秒后重试"), Some(now() + Duration::seconds(30)));
        assert_eq!(
            phrase("请在2分钟后再次尝试"),
            Some(now() + Duration::seconds(120))
        );
        assert!(phrase("5s后").is_none());
    }

    #[test]
    fn phrases_skip_client_backoff() {
        assert!(phrase("Retrying in 39 seconds… (attempt 8/10)").is_none());
        assert!(phrase("will retry after 6173ms").is_none());
        let t = phrase("Please try again in 20s. Contact us").unwrap();
        assert_eq!(t, now() + Duration::seconds(20));
    }

    #[test]
    fn phrases_read_an_approximate_wait() {
        let t = phrase("Usage limit (team plan). Try again in ~144 min.").unwrap();
        assert_eq!(t, now() + Duration::minutes(144));
        let t = phrase("Please try again in about 2 hours.").unwrap();
        assert_eq!(t, now() + Duration::hours(2));
        // Still a client's own backoff, approximate or not.
        assert!(phrase("Retrying in ~5 seconds (attempt 2/5)").is_none());
        assert!(phrase("Try again in ~ a while").is_none());
    }

    #[test]
    fn clocks_need_a_zone() {
        assert!(clock("5-hour limit reached ∙ resets 9pm").is_none());
        assert!(clock("Limits will reset at 9:30 AM.").is_none());
        let t = clock("Your limit will reset at 1 PM (Asia/Dubai).").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T09:00:00+00:00");
        let t = clock("Weekly limit reached · resets 10am (Asia/Seoul)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T01:00:00+00:00");
        let t = clock("resets Dec 2, 9am (Asia/Saigon)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-02T02:00:00+00:00");
        let t = clock("try again at 3:15 PM UTC").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T15:15:00+00:00");
        assert!(clock("try again at Jun 30, 2026, 4:15 AM.").is_none());
        let t = clock("You will regain access on 2026-12-01 at 00:00 UTC.").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T00:00:00+00:00");
        assert!(clock("regain access on 2026-11-01 at 00:00 UTC").is_none());
        assert!(clock("您的限额将在 2026-11-30 16:41:44 重置").is_none());
        assert!(clock("resets 10am (PST)").is_none());
    }

    #[test]
    fn clocks_read_posix_etc_zones() {
        // Etc/GMT+5 is UTC-5: POSIX inverts the sign.
        let t = clock("Your limit will reset at 1pm (Etc/GMT+5).").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T18:00:00+00:00");
        let t = clock("resets 9am (etc/gmt-9)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T00:00:00+00:00");
        // Etc/GMT+15 does not exist.
        assert!(clock("resets 9am (Etc/GMT+15)").is_none());
    }

    #[test]
    fn phrases_read_come_back_in() {
        let t = phrase("You have used all of today's free usage. Come back in 3h 47m.").unwrap();
        assert_eq!(t, now() + Duration::minutes(227));
        assert!(phrase("Come back later.").is_none());
    }

    /// Led patterns find exactly what the plain patterns find, for texts
    /// made of the patterns' own words.
    #[test]
    fn leads_find_what_the_pattern_finds() {
        let pieces = [
            "Try again in 20s",
            "retry after 5s",
            "resets at 3pm (America/New_York)",
            "until 2026-12-01T00:00:00Z",
            "available again at 10:00 UTC",
            "please wait 5 minutes",
            "RESETS Dec 2, 9am (Asia/Saigon)",
            "reset at 2026-12-01 10:00:00+01:00",
            "after",
            "AT",
            "try",
            "again",
            "wait",
            "Refreshes in 1h",
            "Come back in 3h 47m",
            "reset at 1pm (Etc/GMT+5)",
            "Available After 4 PM GMT",
            "regain access on 2026-12-01 at 00:00 UTC",
            "Regain Access At 2026-12-01 13:30 +02:00",
            "x",
            " ",
            "\t",
            "é",
            "retrying",
            "2026-12-01",
            "1-22-333",
            ". ",
            "will ",
            "until 9:30 UTC",
            "_",
            "re",
            "5",
            "Ä",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let cases: Vec<(&Led, Regex)> = [&*PHRASE_TRIGGER, &*CLOCK, &*ISO_TIME]
            .into_iter()
            .map(|led| (led, led.plain()))
            .collect();
        for _ in 0..4000 {
            let n = 1 + next(6);
            let text: String = (0..n).map(|_| pieces[next(pieces.len())]).collect();
            let (hay, lower) = (text.as_bytes(), text.to_ascii_lowercase());
            for (led, plain) in &cases {
                let want: Vec<_> = plain.find_iter(hay).map(|m| m.range()).collect();
                let got: Vec<_> = led.find(hay, lower.as_bytes()).collect();
                assert_eq!(got, want, "{text:?} / {}", plain.as_str());
                let want: Vec<_> = plain
                    .captures_iter(hay)
                    .map(|c| c.iter().map(|g| g.map(|g| g.range())).collect::<Vec<_>>())
                    .collect();
                let got: Vec<_> = led
                    .captures(hay, lower.as_bytes())
                    .map(|(at, c)| {
                        c.iter()
                            .map(|g| g.map(|g| at + g.start()..at + g.end()))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                assert_eq!(got, want, "{text:?} / {}", plain.as_str());
            }
            if cases[2].1.is_match(hay) {
                assert!(has_iso_date(hay), "{text:?}");
            }
        }
    }
    #[test]
    fn epochs_in_the_past_are_dropped() {
        assert!(epoch_hint("Claude AI usage limit reached|1760000400", now()).is_none());
        let t = epoch_hint("Claude AI usage limit reached|1796068800", now()).unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T20:00:00+00:00");
    }
}
