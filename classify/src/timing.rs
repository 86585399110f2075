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
                .filter_map(|(t, lower)| epoch_hint(t, lower, now))
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
    parse_go_duration(v)
        .or_else(|| parse_iso_duration(v))
        .and_then(|s| after_seconds(now, s))
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

/// A wait written as a string in a JSON field: seconds (`"60"`), a Go or
/// Google duration (`"30s"`, `"108h48m20.7s"`) or an ISO 8601 one (`"PT30S"`).
pub(crate) fn parse_wait(s: &str) -> Option<f64> {
    let s = s.trim();
    s.parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .or_else(|| parse_go_duration(s))
        .or_else(|| parse_iso_duration(s))
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

/// "try again in", "retry after", "resets in", "available in", … and a
/// client reporting the provider's own request ("Provider requested
/// 1800000ms wait"): the duration follows. A terminal wraps long messages,
/// so one line break may fall anywhere in the phrase ("Please try\nagain
/// in 5.448s", "try again\n   in 12s", "try again in\n20ms"): the words
/// are one phrase of one message whichever space the wrap took.
static PHRASE_TRIGGER: LazyLock<Led> = LazyLock::new(|| {
    Led::new(
        concat!(
            r"\b(?:(?:try(?:[ \t]+|[ \t]*\n[ \t]*)again|retry|resets?|available(?:[ \t]+|[ \t]*\n[ \t]*)again|please(?:[ \t]+|[ \t]*\n[ \t]*)wait|wait|refresh(?:es)?|come(?:[ \t]+|[ \t]*\n[ \t]*)back)(?:[ \t]+|[ \t]*\n[ \t]*)(?:(?:in|after|for)\b(?:[ \t]*\n)?)?",
            r"|available(?:[ \t]+|[ \t]*\n[ \t]*)(?:in|after)\b(?:[ \t]*\n)?",
            r"|(?:provider|server|upstream|api)[ \t]+(?:requested|asked for)(?:[ \t]+an?)?(?:[ \t]+(?:wait|delay|backoff)[ \t]+of)?",
            r")[ \t]*",
        ),
        &[
            "try",
            "retry",
            "reset",
            "available",
            "please",
            "wait",
            "refresh",
            "come",
            "provider",
            "server",
            "upstream",
            "api",
        ],
    )
});

/// A `Retry-After` header printed as text (`retry-after: 60`, Python's
/// `'retry-after': '60'`, `retry_after=2.5`, `Retry-After-Ms: 500`, an HTTP
/// date): the provider's own header, wherever a client printed it.
static RETRY_AFTER_TEXT: LazyLock<Led> = LazyLock::new(|| {
    Led::new(
        concat!(
            r#"\bretry[-_ ]?after(?P<ms>[-_ ]?ms)?["']?[ \t]*[:=][ \t]*["']?"#,
            r"(?:(?P<n>\d+(?:\.\d+)?)(?:[^\d.:]|$)",
            r"|(?P<date>(?:mon|tue|wed|thu|fri|sat|sun),[ \t]*\d{1,2}[ \t]+[a-z]{3}[ \t]+\d{4}[ \t]+\d{2}:\d{2}:\d{2}[ \t]+gmt))",
        ),
        &["retry"],
    )
});

fn retry_after_text_hint(text: &str, lower: &[u8], now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let bytes = text.as_bytes();
    RETRY_AFTER_TEXT
        .captures(bytes, lower)
        .take(8)
        .filter_map(|(_, c)| {
            let get = |n: &str| {
                c.name(n)
                    .and_then(|m| std::str::from_utf8(m.as_bytes()).ok())
            };
            if let Some(d) = get("date") {
                return httpdate::parse_http_date(d).ok().map(DateTime::<Utc>::from);
            }
            let n: f64 = get("n")?.parse().ok()?;
            let secs = if c.name("ms").is_some() {
                n / 1000.0
            } else {
                n
            };
            after_seconds(now, secs)
        })
        .filter(|t| valid(*t, now))
        .max()
}

/// "请5s后再试", "请 78 秒后重试", "请在1分钟后再次尝试", "1小时30分钟后重置",
/// "請 30 秒後重試": a wait, then 后 (after) and a retry or reset word;
/// "请等待 30 秒": a wait asked for. Chinese providers and relays say it
/// this way. A client's own schedule ("将在 5 秒后重试", it will retry) is
/// not the provider's; a reset announced so ("将在 3 小时后重置") is.
static CJK_PHRASE: LazyLock<Regex> = LazyLock::new(|| {
    RegexBuilder::new(concat!(
        r"(?P<lead>将|將|会|會|正在)?\s*(?:在|于|於)?\s*",
        r"(?P<dur>(?:\d+(?:\.\d+)?\s*(?:个|個)?\s*(?:秒钟|秒鐘|秒|分钟|分鐘|分|小时|小時|钟头|天|s|sec|min|h)\s*){1,3})",
        r"(?:(?:之|以)?[后後]\s*(?:(?P<retry>再试|重试|再次尝试|再请求|再次请求|再來|再来|再試|重試|重新尝试|可再次|可以再次|可重试|可重試|再次重试)|重置|恢复|恢復|解除|可用)",
        r"|(?P<tail>[后後]))",
        r"|(?:请|請)\s*(?:等待|稍候|稍等)\s*(?P<wait>(?:\d+(?:\.\d+)?\s*(?:个|個)?\s*(?:秒钟|秒鐘|秒|分钟|分鐘|分|小时|小時)\s*){1,3})",
    ))
    .build()
    .expect("cjk phrase pattern compiles")
});

/// Seconds in a CJK duration such as "1小时30分钟", "78 秒", "2 个小时".
fn cjk_duration(s: &str) -> Option<f64> {
    let mut total = 0.0;
    let mut any = false;
    let mut rest = s.trim();
    while !rest.is_empty() {
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let n: f64 = rest[..end].parse().ok()?;
        rest = rest[end..].trim_start();
        rest = rest
            .strip_prefix('个')
            .or_else(|| rest.strip_prefix('個'))
            .unwrap_or(rest)
            .trim_start();
        let units: [(&str, f64); 14] = [
            ("秒钟", 1.0),
            ("秒鐘", 1.0),
            ("秒", 1.0),
            ("分钟", 60.0),
            ("分鐘", 60.0),
            ("分", 60.0),
            ("小时", 3600.0),
            ("小時", 3600.0),
            ("钟头", 3600.0),
            ("天", 86_400.0),
            ("sec", 1.0),
            ("min", 60.0),
            ("s", 1.0),
            ("h", 3600.0),
        ];
        let (unit, mult) = units.into_iter().find(|(u, _)| rest.starts_with(u))?;
        rest = rest[unit.len()..].trim_start();
        total += n * mult;
        any = true;
    }
    any.then_some(total)
}

/// The words one of which every [`CJK_PHRASE`] match has (后/後, or 请/請
/// before 等待/稍候/稍等), and `attempt` (a client's own retry count after a
/// wait), `midnight` and `noon` (a clock time without a digit): searchers
/// built once, as building one costs more than most searches.
static CJK_PHRASE_WORDS: LazyLock<[memchr::memmem::Finder<'static>; 4]> =
    LazyLock::new(|| ["后", "後", "请", "請"].map(memchr::memmem::Finder::new));
static ATTEMPT: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("attempt"));
static MIDNIGHT: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("midnight"));
static NOON: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("noon"));

fn cjk_phrase_hint(text: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    // Every such phrase has 后/後 or 等待/稍候/稍等 (请); most texts have none.
    let b = text.as_bytes();
    if !CJK_PHRASE_WORDS.iter().any(|w| w.find(b).is_some()) {
        return None;
    }
    CJK_PHRASE
        .captures_iter(b)
        .take(8)
        .filter_map(|c| {
            let dur = c.name("dur").or_else(|| c.name("wait"))?;
            // "将在 5 秒后重试": the client will retry (a reset it "will"
            // make, 将在 3 小时后重置, is the provider's); a bare "…秒后"
            // with no retry or reset word after it is no wait asked for.
            if c.name("tail").is_some() || (c.name("lead").is_some() && c.name("retry").is_some()) {
                return None;
            }
            let secs = cjk_duration(std::str::from_utf8(dur.as_bytes()).ok()?)?;
            after_seconds(now, secs)
        })
        .filter(|t| valid(*t, now))
        .max()
}

/// The latest valid "try again in …" style hint in `text` (`lower` is it
/// ASCII-lowercased).
fn phrase_hint(text: &str, lower: &[u8], now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let mut best = cjk_phrase_hint(text, now);
    let mut keep = |t: DateTime<Utc>| {
        if valid(t, now) && best.is_none_or(|b| t > b) {
            best = Some(t);
        }
    };
    if let Some(t) = retry_after_text_hint(text, lower, now) {
        keep(t);
    }
    for m in PHRASE_TRIGGER.find(text.as_bytes(), lower).take(16) {
        // A client announcing its own backoff is not the provider's hint:
        // "will retry after 6173ms", "we'll try again in 5s", "wait 2.7s
        // (attempt 2/3)". A reset the provider says "will" happen is its.
        let trigger = &lower[m.clone()];
        let own_schedule_word = ["retry", "try", "wait", "please"]
            .iter()
            .any(|w| trigger.starts_with(w.as_bytes()));
        if own_schedule_word {
            let before = &lower[m.start.saturating_sub(12)..m.start];
            if before.ends_with(b"will ") || before.ends_with(b"'ll ") {
                continue;
            }
        }
        let after = &lower[m.end..lower.len().min(m.end + 40)];
        if ATTEMPT.find(after).is_some() {
            continue;
        }
        if let Some(secs) = parse_prose_duration(skip_approximation(&text[m.end..])) {
            if let Some(t) = after_seconds(now, secs) {
                keep(t);
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

/// Numbers written as words, as providers spell short waits ("try again in
/// one minute", "in thirty seconds").
const NUMBER_WORDS: [(&str, f64); 16] = [
    ("one", 1.0),
    ("two", 2.0),
    ("three", 3.0),
    ("four", 4.0),
    ("five", 5.0),
    ("six", 6.0),
    ("seven", 7.0),
    ("eight", 8.0),
    ("nine", 9.0),
    ("ten", 10.0),
    ("twelve", 12.0),
    ("fifteen", 15.0),
    ("twenty", 20.0),
    ("thirty", 30.0),
    ("forty-five", 45.0),
    ("sixty", 60.0),
];

/// Parses a duration at the start of `s`: "20s", "1.574s", "6m0s",
/// "4 days 23 hours 59 minutes", "2 hours", "an hour", "1h2m", "one
/// minute", "half an hour", "1 hour and 5 minutes", a clock-style "1:05:30"
/// (hours, minutes, seconds) and an ISO 8601 duration ("PT1H30M").
pub(crate) fn parse_prose_duration(s: &str) -> Option<f64> {
    if let Some(secs) = parse_hms(s).or_else(|| parse_iso_duration(s)) {
        return Some(secs);
    }
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
        } else if parts == 0 && word_at(s, i, "half an") {
            i += 7;
            0.5
        } else if parts == 0 && word_at(s, i, "half a") {
            i += 6;
            0.5
        } else if parts == 0 && word_at(s, i, "an") {
            i += 2;
            1.0
        } else if parts == 0 && word_at(s, i, "a") {
            i += 1;
            1.0
        } else if let Some((w, n)) = NUMBER_WORDS.iter().find(|(w, _)| word_at(s, i, w)) {
            i += w.len();
            *n
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
        // "second(s)": the plural in parentheses.
        if b[i..].starts_with(b"(s)") {
            i += 3;
        }
        total += n * mult;
        parts += 1;
        if parts > 8 {
            break;
        }
    }
    (parts > 0).then_some(total)
}

/// "1:05:30" at the start of `s` (hours, minutes, seconds); two parts are
/// not read (minutes and seconds or hours and minutes?).
fn parse_hms(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let digits = |from: usize, max: usize| {
        let n = b[from..]
            .iter()
            .take(max + 1)
            .take_while(|c| c.is_ascii_digit())
            .count();
        (1..=max).contains(&n).then_some(n)
    };
    let h = digits(0, 3)?;
    if b.get(h) != Some(&b':') {
        return None;
    }
    let m = digits(h + 1, 2).filter(|n| *n == 2)?;
    if b.get(h + 1 + m) != Some(&b':') {
        return None;
    }
    let sec = digits(h + m + 2, 2).filter(|n| *n == 2)?;
    let end = h + m + 2 + sec;
    if b.get(end).is_some_and(|c| c.is_ascii_digit() || *c == b':') {
        return None;
    }
    let hours: f64 = s[..h].parse().ok()?;
    let minutes: f64 = s[h + 1..h + 1 + m].parse().ok()?;
    let seconds: f64 = s[h + m + 2..end].parse().ok()?;
    (minutes < 60.0 && seconds < 60.0).then_some(hours * 3600.0 + minutes * 60.0 + seconds)
}

/// An ISO 8601 duration at the start of `s`: `PT30S`, `PT1H30M`, `P1DT2H`,
/// `PT0.5S` (Java's and .NET's rendering of a wait).
pub(crate) fn parse_iso_duration(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    if b.first() != Some(&b'P') {
        return None;
    }
    let mut i = 1;
    let mut total = 0.0;
    let mut any = false;
    let mut in_time = false;
    while i < b.len() {
        if b[i] == b'T' && !in_time {
            in_time = true;
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.') {
            i += 1;
        }
        if start == i {
            break;
        }
        let n: f64 = s[start..i].parse().ok()?;
        let mult = match (b.get(i)?, in_time) {
            (b'W', false) => 604_800.0,
            (b'D', false) => 86_400.0,
            (b'H', true) => 3600.0,
            (b'M', true) => 60.0,
            (b'S', true) => 1.0,
            _ => return None,
        };
        i += 1;
        total += n * mult;
        any = true;
    }
    // A word that merely starts with P ("Please") is not a duration.
    if b.get(i).is_some_and(u8::is_ascii_alphanumeric) {
        return None;
    }
    any.then_some(total)
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

/// A reset field printed as text rather than JSON (Node's `util.inspect`
/// writes `{ resetsAt: 1796068800 }`, logs write `reset_at=…`,
/// `resets_in_seconds: 8464`, a relay's `reset_in=29s`, response headers a
/// relay printed, `x-codex-primary-reset-at: 1773860656`): the key names what
/// the value is. A wait under `reset_in` / `reset_after` must carry its
/// unit (a Go duration): a bare number there says nothing sure.
static RESET_FIELD_TEXT: LazyLock<Led> = LazyLock::new(|| {
    Led::new(
        concat!(
            r#"\b(?P<key>resets?[_-]?at|reset_?time(?:_?stamp)?|next_?reset(?:_?at)?|quota_?reset_?time_?stamp|resets?[_-]?in[_-]?seconds|reset[_-]?after[_-]?seconds|retry_?after_?seconds|resets?_?in|reset_?after)["']?[ \t]*[:=][ \t]*["']?"#,
            r"(?P<v>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})|(?P<dur>(?:\d+(?:\.\d+)?(?:ms|h|m|s))+)|\d+(?:\.\d+)?)(?:[^\d.:-]|$)",
        ),
        &["reset", "next", "quota", "retry"],
    )
});

fn epoch_hint(text: &str, lower: &[u8], now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let bytes = text.as_bytes();
    // Every sentinel has a `|`; most texts have none.
    let sentinels = memchr::memchr(b'|', bytes)
        .is_some()
        .then(|| EPOCH.captures_iter(bytes).take(8))
        .into_iter()
        .flatten()
        .filter_map(|c| parse_absolute(std::str::from_utf8(c.get(1)?.as_bytes()).ok()?));
    let fields = RESET_FIELD_TEXT
        .captures(bytes, lower)
        .take(8)
        .filter_map(|(_, c)| {
            let key = std::str::from_utf8(c.name("key")?.as_bytes()).ok()?;
            let v = std::str::from_utf8(c.name("v")?.as_bytes()).ok()?;
            let key = key.to_ascii_lowercase();
            if key.ends_with("seconds") {
                return after_seconds(now, v.parse().ok()?);
            }
            // `reset_in=29s`: a wait with its unit; an instant's name with
            // a duration, or a wait's name with a bare number, is not read.
            let wait_key = key.ends_with("in") || key.ends_with("after");
            match (wait_key, c.name("dur")) {
                (true, Some(d)) => {
                    return after_seconds(
                        now,
                        parse_go_duration(std::str::from_utf8(d.as_bytes()).ok()?)?,
                    );
                }
                (true, None) | (false, Some(_)) => return None,
                (false, None) => {}
            }
            // An instant: RFC 3339, or epoch seconds or milliseconds; a
            // small number under an instant's name says nothing sure.
            match v.parse::<f64>() {
                Ok(n) if n >= 1e9 => parse_absolute(v),
                Ok(_) => None,
                Err(_) => DateTime::parse_from_rfc3339(&v.replacen(' ', "T", 1))
                    .ok()
                    .map(|t| t.with_timezone(&Utc)),
            }
        });
    sentinels.chain(fields).filter(|t| valid(*t, now)).max()
}

// ---------------------------------------------------------------------------
// Clock times

/// A zoned clock time after "resets", "try again at", "until", …: an
/// optional date (`Dec 18`, `18 Dec 2026` as HTTP dates write it,
/// `2026-12-18`, a weekday, `today`, `tomorrow`), an hour (`5am`, `17:30`,
/// `2:55 PM`, `midnight`, `noon`) and a zone (an IANA name, `UTC±h`, an
/// offset, an unambiguous abbreviation such as `PST` or `CET`, `Pacific
/// time`). A terminal may wrap the line once between "reset" and its "at"
/// ("Your limit will reset \n     at 3pm (America/Santiago).").
static CLOCK: LazyLock<Led> = LazyLock::new(|| {
    Led::new(
        concat!(
            r"\b(?:resets?(?:[\x20\t]+(?:automatically|daily|every[\x20\t]+day|each[\x20\t]+day))?(?:(?:[\x20\t]+|[\x20\t]*\n[\x20\t]*)(?:at|on))?|reset[\x20\t]+time|refresh(?:es)?[\x20\t]+(?:at|on)|renews?[\x20\t]+(?:at|on)|try[\x20\t]+again[\x20\t]+(?:at|after|on)|available[\x20\t]+(?:again[\x20\t]+)?(?:at|after|on)|regain[\x20\t]+access[\x20\t]+(?:on|at)|until|after)[\x20\t]*:?[\x20\t]+",
            r"(?:(?:(?P<wd>mon(?:day)?|tue(?:s(?:day)?)?|wed(?:nesday)?|thu(?:r(?:s(?:day)?)?)?|fri(?:day)?|sat(?:urday)?|sun(?:day)?)\b\.?,?[\x20\t]+)?",
            r"(?:(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?[\x20\t]+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?[\x20\t]*(?:(?P<year>\d{4}),?[\x20\t]*)?",
            r"|(?P<day2>\d{1,2})[\x20\t]+(?P<mon2>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b\.?,?[\x20\t]+(?:(?P<year2>\d{4}),?[\x20\t]+)?",
            r"|(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})[\x20\t]+",
            r"|(?P<rel>today|tonight|tomorrow)[\x20\t]+)?(?:at[\x20\t]+)?)?",
            r"(?:(?P<h>\d{1,2})(?::(?P<min>\d{2})(?::\d{2})?)?[\x20\t]*(?P<ampm>[ap]\.?m\b\.?)?|(?P<word>midnight|noon)\b)[\x20\t]*",
            r"(?P<zone>\([A-Za-z_]+/[A-Za-z_/+-]+\d{0,2}\)|\((?:UTC|GMT)(?:[\x20\t]*[+-]\d{1,2}(?::?\d{2})?)?\)|\([A-Za-z]{2,5}\)|[A-Za-z_]+/[A-Za-z_]+(?:/[A-Za-z_]+)?(?:[+-]\d{1,2}\b)?|(?:UTC|GMT)(?:[\x20\t]*[+-]\d{1,2}(?::?\d{2})?)?|(?:[A-Za-z-]+[\x20\t]+){1,3}(?:standard|daylight|summer|mean|universal)[\x20\t]+time\b|beijing[\x20\t]+time\b|(?:pacific|eastern|central|mountain)(?:[\x20\t]+time)?\b|[A-Za-z]{2,5}\b|Z\b|[+-]\d{2}:?\d{2})?",
        ),
        &[
            "reset",
            "refresh",
            "renew",
            "try",
            "available",
            "regain",
            "until",
            "after",
        ],
    )
});

/// An RFC 3339 time after "resets", "until", "at", …, or Google's
/// `quotaResetTimeStamp` printed as text (a Go map, protobuf text).
static ISO_TIME: LazyLock<Led> = LazyLock::new(|| {
    Led::new(
        concat!(
            r#"\b(?:(?:resets?|reset at|resets at|reset time|until|after|at|try again at)[ \t]*:?[ \t]+|quotareset(?:timestamp|time)["']?[ \t]*[:=][ \t]*["']?)"#,
            r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2}))",
        ),
        &["reset", "until", "after", "at", "try", "quotareset"],
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

/// Which day a clock time names.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Day {
    /// The next such time, today or tomorrow.
    Next,
    /// Month, day and perhaps year (without one, the next such date).
    Date(u32, u32, Option<i32>),
    /// The next such weekday (today when the time is still ahead).
    Weekday(chrono::Weekday),
    /// Today (0) or tomorrow (1), in the zone.
    Relative(u64),
}

/// The latest valid zoned clock time in `text` (`lower` is it
/// ASCII-lowercased).
fn clock_hint(text: &str, lower: &[u8], now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let bytes = text.as_bytes();
    // Both patterns need an hour or a date: no digit and no `midnight` or
    // `noon`, no clock time.
    if !bytes.iter().any(u8::is_ascii_digit)
        && MIDNIGHT.find(lower).is_none()
        && NOON.find(lower).is_none()
    {
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
        let Some(zone) = get("zone") else {
            continue;
        };
        let (mut hour, minute) = match (get("word"), get("h")) {
            (Some(w), _) => (
                if w.eq_ignore_ascii_case("noon") {
                    12
                } else {
                    0
                },
                0,
            ),
            (None, Some(h)) => {
                // A bare number is not a clock time: "after 5 UTC" needs
                // minutes or am/pm.
                if get("min").is_none() && get("ampm").is_none() {
                    continue;
                }
                let Ok(hour) = h.parse::<u32>() else {
                    continue;
                };
                (
                    hour,
                    get("min").and_then(|m| m.parse::<u32>().ok()).unwrap_or(0),
                )
            }
            (None, None) => continue,
        };
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
        let weekday = get("wd").and_then(|w| chrono::Weekday::from_str(w.get(..3)?).ok());
        let date = get("mon")
            .zip(get("day"))
            .map(|(mon, day)| (mon, day, get("year")))
            .or_else(|| {
                get("mon2")
                    .zip(get("day2"))
                    .map(|(m, d)| (m, d, get("year2")))
            })
            .and_then(|(mon, day, year)| {
                Some(Day::Date(
                    month_number(mon)?,
                    day.parse().ok()?,
                    year.and_then(|y| y.parse().ok()),
                ))
            })
            .or_else(|| {
                let year: i32 = get("iy")?.parse().ok()?;
                Some(Day::Date(
                    get("im")?.parse().ok()?,
                    get("id")?.parse().ok()?,
                    Some(year),
                ))
            })
            .or_else(|| {
                get("rel").map(|r| Day::Relative(u64::from(r.eq_ignore_ascii_case("tomorrow"))))
            });
        let day = match (date, weekday) {
            (Some(d), _) => d,
            (None, Some(w)) => Day::Weekday(w),
            (None, None) => Day::Next,
        };
        if let Some(t) = zoned(zone, day, hour, minute, now) {
            // A weekday beside a date must be that date's ("Mon, 07 Dec").
            if let (Some(w), Day::Date(..)) = (weekday, day) {
                let local = match zone_of(zone) {
                    Some(Zone::Fixed(off)) => t.with_timezone(&off).weekday(),
                    Some(Zone::Named(tz)) => t.with_timezone(&tz).weekday(),
                    None => continue,
                };
                if local != w {
                    continue;
                }
            }
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

/// A zone a clock time was given in.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Zone {
    Fixed(chrono::FixedOffset),
    Named(chrono_tz::Tz),
}

/// Abbreviations with one meaning, as programs print them (`Intl`'s
/// `timeZoneName: 'short'` in en-US, strftime's `%Z`), and their offsets in
/// hours. Ambiguous ones are not here and give no timing: CST (US Central
/// or China), CDT, IST (India, Ireland, Israel), BST (British Summer or
/// Bangladesh), AST, GST.
const ZONE_ABBREVIATIONS: [(&str, f64); 27] = [
    ("PST", -8.0),
    ("PDT", -7.0),
    ("MST", -7.0),
    ("MDT", -6.0),
    ("EST", -5.0),
    ("EDT", -4.0),
    ("AKST", -9.0),
    ("AKDT", -8.0),
    ("HST", -10.0),
    ("WET", 0.0),
    ("WEST", 1.0),
    ("CET", 1.0),
    ("CEST", 2.0),
    ("EET", 2.0),
    ("EEST", 3.0),
    ("MSK", 3.0),
    ("HKT", 8.0),
    ("SGT", 8.0),
    ("AWST", 8.0),
    ("JST", 9.0),
    ("KST", 9.0),
    ("ACST", 9.5),
    ("ACDT", 10.5),
    ("AEST", 10.0),
    ("AEDT", 11.0),
    ("NZST", 12.0),
    ("NZDT", 13.0),
];

/// Zones' long names as `Intl`'s `timeZoneName: 'long'` (en-US) and
/// people write them, with their offsets in hours: each names one offset.
const ZONE_LONG_NAMES: [(&str, f64); 33] = [
    ("pacific standard time", -8.0),
    ("pacific daylight time", -7.0),
    ("mountain standard time", -7.0),
    ("mountain daylight time", -6.0),
    ("central standard time", -6.0),
    ("central daylight time", -5.0),
    ("eastern standard time", -5.0),
    ("eastern daylight time", -4.0),
    ("alaska standard time", -9.0),
    ("alaska daylight time", -8.0),
    ("hawaii-aleutian standard time", -10.0),
    ("greenwich mean time", 0.0),
    ("coordinated universal time", 0.0),
    ("british summer time", 1.0),
    ("irish standard time", 1.0),
    ("western european standard time", 0.0),
    ("western european summer time", 1.0),
    ("central european standard time", 1.0),
    ("central european summer time", 2.0),
    ("eastern european standard time", 2.0),
    ("eastern european summer time", 3.0),
    ("moscow standard time", 3.0),
    ("india standard time", 5.5),
    ("china standard time", 8.0),
    ("beijing time", 8.0),
    ("singapore standard time", 8.0),
    ("hong kong standard time", 8.0),
    ("japan standard time", 9.0),
    ("korean standard time", 9.0),
    ("australian eastern standard time", 10.0),
    ("australian eastern daylight time", 11.0),
    ("new zealand standard time", 12.0),
    ("new zealand daylight time", 13.0),
];

/// What `zone` names, if it names one zone: `Z`, `UTC`, `GMT`, `UTC+9`,
/// `+05:30`, an IANA name (`Asia/Seoul`, any case, POSIX `Etc/GMT+5`), an
/// abbreviation of [`ZONE_ABBREVIATIONS`] written in capitals, `PT`, `ET`,
/// `MT`, `Pacific time`, `Eastern Standard Time`.
fn zone_of(zone: &str) -> Option<Zone> {
    let zone = zone
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    let upper = zone.to_ascii_uppercase();
    if upper == "Z" || upper == "UTC" || upper == "GMT" {
        return Some(Zone::Fixed(chrono::FixedOffset::east_opt(0)?));
    }
    if let Some(rest) = upper
        .strip_prefix("UTC")
        .or_else(|| upper.strip_prefix("GMT"))
        .or(Some(upper.as_str()).filter(|z| z.starts_with(['+', '-'])))
    {
        return parse_offset(rest.trim()).map(Zone::Fixed);
    }
    if !zone.contains('/') {
        let hours = |h: f64| chrono::FixedOffset::east_opt((h * 3600.0) as i32).map(Zone::Fixed);
        let long = zone
            .split_ascii_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_ascii_lowercase();
        if let Some((_, h)) = ZONE_LONG_NAMES.iter().find(|(n, _)| *n == long) {
            return hours(*h);
        }
        // Abbreviations only as written in capitals: "5pm est" is not sure.
        if zone.bytes().all(|c| c.is_ascii_uppercase()) {
            if let Some((_, h)) = ZONE_ABBREVIATIONS.iter().find(|(a, _)| *a == zone) {
                return hours(*h);
            }
        }
        let words: Vec<String> = zone
            .split_ascii_whitespace()
            .map(str::to_ascii_lowercase)
            .collect();
        let region = match (words.first().map(String::as_str), zone) {
            (_, "PT") | (Some("pacific"), _) => ("America/Los_Angeles", -8.0),
            (_, "ET") | (Some("eastern"), _) => ("America/New_York", -5.0),
            (_, "MT") | (Some("mountain"), _) => ("America/Denver", -7.0),
            (Some("central"), _) if words.len() > 1 => ("America/Chicago", -6.0),
            _ => return None,
        };
        return match words.get(1).map(String::as_str) {
            Some("standard") => hours(region.1),
            Some("daylight") => hours(region.1 + 1.0),
            _ => chrono_tz::Tz::from_str(region.0).ok().map(Zone::Named),
        };
    }
    // POSIX `Etc/GMT+5` is five hours *behind* UTC (the sign is inverted);
    // the tz database already spells it so, only the case needs mending.
    let etc = upper
        .strip_prefix("ETC/GMT")
        .map(|offset| format!("Etc/GMT{offset}"));
    chrono_tz::Tz::from_str(zone)
        .ok()
        .or_else(|| etc.and_then(|z| chrono_tz::Tz::from_str(&z).ok()))
        .or_else(|| chrono_tz::Tz::from_str(&iana_case(zone)).ok())
        .map(Zone::Named)
}

/// A wall-clock time in an explicit zone, resolved to the next such instant
/// after `now` (or on the given day). Ambiguous local times take the
/// earlier instant; nonexistent ones (DST gaps) are dropped.
fn zoned(
    zone: &str,
    day: Day,
    hour: u32,
    minute: u32,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    match zone_of(zone)? {
        Zone::Fixed(off) => resolve_in(&off, day, hour, minute, now),
        Zone::Named(tz) => resolve_in(&tz, day, hour, minute, now),
    }
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
    day: Day,
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
    let today = local_now.date_naive();
    match day {
        Day::Date(month, day, Some(year)) => at(NaiveDate::from_ymd_opt(year, month, day)?),
        Day::Date(month, day, None) => {
            let y = local_now.year();
            let this = at(NaiveDate::from_ymd_opt(y, month, day)?)?;
            if this > now {
                Some(this)
            } else {
                at(NaiveDate::from_ymd_opt(y + 1, month, day)?)
            }
        }
        Day::Weekday(w) => {
            let ahead = (7 + w.num_days_from_monday() - today.weekday().num_days_from_monday()) % 7;
            let d = today.checked_add_days(chrono::Days::new(u64::from(ahead)))?;
            match at(d) {
                Some(t) if t > now => Some(t),
                _ => at(d.checked_add_days(chrono::Days::new(7))?),
            }
        }
        Day::Relative(n) => at(today.checked_add_days(chrono::Days::new(n))?),
        Day::Next => match at(today) {
            Some(t) if t > now => Some(t),
            _ => at(today.succ_opt()?),
        },
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
    fn cjk_phrases_compound_traditional_and_resets() {
        let t = phrase("kimi-k2.5 账号队列超时: 所有可用账号暂时不可用，请 78 秒后重试").unwrap();
        assert_eq!(t, now() + Duration::seconds(78));
        let t = phrase("请求过于频繁，请1小时30分钟后再试").unwrap();
        assert_eq!(t, now() + Duration::seconds(5400));
        let t = phrase("请 2 个小时后重试").unwrap();
        assert_eq!(t, now() + Duration::hours(2));
        let t = phrase("請 30 秒後重試").unwrap();
        assert_eq!(t, now() + Duration::seconds(30));
        let t = phrase("您的额度将在 3 小时后重置").unwrap_or_else(|| panic!("reset"));
        assert_eq!(t, now() + Duration::hours(3));
        let t = phrase("请等待 45 秒").unwrap();
        assert_eq!(t, now() + Duration::seconds(45));
        // The client's own schedule: it will retry.
        assert!(phrase("请求失败，将在 5 秒后重试 (第 1/3 次)").is_none());
        assert!(phrase("正在 10 秒后重试").is_none());
        assert!(phrase("30秒后自动重试").is_none());
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
        // Abbreviations with more than one meaning give none.
        assert!(clock("resets 10am (CST)").is_none());
        assert!(clock("resets at 10:00 IST").is_none());
        assert!(clock("resets at 10:00 BST").is_none());
        // A terminal wrapped the line once before "at"; two breaks are two
        // messages.
        let t = clock("Your limit will reset \n     at 3pm (America/Santiago).").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T18:00:00+00:00");
        assert!(clock("Your limit will reset\n\nat 3pm (America/Santiago).").is_none());
    }

    #[test]
    fn clocks_read_unambiguous_abbreviations() {
        // Gemini CLI: `Intl.DateTimeFormat('en-US', {timeZoneName: 'short'})`.
        let t =
            clock("Usage limit reached for gemini-2.5-flash-lite. Access resets at 2:55 PM PST.")
                .unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T22:55:00+00:00");
        let t = clock("Access resets at 9:05 AM GMT+5:30.").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T03:35:00+00:00");
        let t = clock("resets 10am (PST)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T18:00:00+00:00");
        let t = clock("quota resets at 17:00 CET").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T16:00:00+00:00");
        let t = clock("try again after 5:30 PM EDT").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T21:30:00+00:00");
        // Only in capitals: "5pm est" is not sure to be a zone.
        assert!(clock("resets 5pm est").is_none());
        // A word after the time is not a zone.
        assert!(clock("resets at 5pm today").is_none());
        assert!(clock("resets at 5pm (later)").is_none());
    }

    #[test]
    fn clocks_read_regional_names_midnight_and_noon() {
        let t = clock("your free usage resets automatically at midnight Pacific.").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T08:00:00+00:00");
        let t = clock("Daily quota resets at midnight UTC").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T00:00:00+00:00");
        let t = clock("Requests per day reset daily at midnight Pacific Time").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T08:00:00+00:00");
        let t = clock("resets at noon ET").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T17:00:00+00:00");
        let t = clock("resets at 3pm Eastern Standard Time").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T20:00:00+00:00");
        let t = clock("Access resets at 9:05 PM India Standard Time.").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T15:35:00+00:00");
        let t = clock("quota resets at 00:00 Beijing Time").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T16:00:00+00:00");
        let t = clock("resets at 17:00 Central European Summer Time").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T15:00:00+00:00");
        let t = clock("resets at 3pm Pacific Standard Time").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T23:00:00+00:00");
        // Words that only look like a zone's name.
        assert!(clock("resets at 5pm during standard time").is_none());
        assert!(clock("resets at 5pm Arabian Standard Time").is_none());
        // Midnight with no zone, and a bare "Central" (US or elsewhere?).
        assert!(clock("resets at midnight.").is_none());
        assert!(clock("resets at midnight Central").is_none());
        assert!(clock("resets at noon local time").is_none());
    }

    #[test]
    fn clocks_read_weekdays_today_tomorrow_and_http_dates() {
        // 2026-11-30 is a Monday.
        let t = clock("Weekly limit reached · resets Thu 9am (Europe/Berlin)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-03T08:00:00+00:00");
        let t = clock("resets Monday at 11am (UTC)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-07T11:00:00+00:00");
        let t = clock("resets Monday at 1pm (UTC)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T13:00:00+00:00");
        let t = clock("You've hit your limit · resets tomorrow at 3pm (Asia/Tokyo)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T06:00:00+00:00");
        let t = clock("resets today at 9pm (UTC)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T21:00:00+00:00");
        assert!(clock("resets today at 9am (UTC)").is_none());
        let t = clock("retry after Tue, 01 Dec 2026 18:00:00 GMT").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T18:00:00+00:00");
        let t = clock("resets on Dec 18 at 5am (Asia/Riyadh)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-18T02:00:00+00:00");
        // A weekday that is not the date's day is a mistake: none.
        assert!(clock("retry after Wed, 01 Dec 2026 18:00:00 GMT").is_none());
        // "monthly" is not Monday.
        assert!(clock("resets monthly at 00:00").is_none());
        // A monthly reset's time of day is not its date.
        assert!(clock("resets monthly at 00:00 UTC").is_none());
        // No zone, no timing, whatever the day.
        assert!(clock("resets tomorrow at 3pm").is_none());
        assert!(clock("resets Thu 9am").is_none());
    }

    #[test]
    fn clocks_read_google_reset_timestamps_in_text() {
        let t = clock(
            "metadata:map[quotaResetDelay:108h48m20s quotaResetTimeStamp:2026-12-04T15:24:12Z]",
        )
        .unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-04T15:24:12+00:00");
        assert!(clock("quotaResetTimeStamp: 2026-12-04 15:24:12").is_none());
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
    fn phrases_read_a_retry_after_header_printed_as_text() {
        let t = phrase("CAPIError: 429 rate limit exceeded\nretry-after: 60").unwrap();
        assert_eq!(t, now() + Duration::seconds(60));
        let t = phrase("headers: {'Retry-After': '17', 'x-request-id': 'r'}").unwrap();
        assert_eq!(t, now() + Duration::seconds(17));
        let t = phrase("RateLimited(retry_after=2.5)").unwrap();
        assert_eq!(t, now() + Duration::milliseconds(2500));
        let t = phrase("retry-after-ms: 1500").unwrap();
        assert_eq!(t, now() + Duration::milliseconds(1500));
        let t = phrase("Retry-After: Tue, 01 Dec 2026 18:00:00 GMT").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T18:00:00+00:00");
        assert!(phrase("retry-after: 0").is_none());
        assert!(phrase("Retry-After: Mon, 30 Nov 2026 11:00:00 GMT").is_none());
        // A version or a time of day after the name is not seconds.
        assert!(phrase("retry_after: 1.2.3").is_none());
        assert!(phrase("retry_after: 12:30").is_none());
    }

    #[test]
    fn phrases_read_the_wait_a_client_says_the_provider_asked_for() {
        let t = phrase("Error: Retry failed after 1 attempts: Provider requested 1800000ms wait, exceeds retry.maxDelayMs (300000ms).").unwrap();
        assert_eq!(t, now() + Duration::minutes(30));
        let t = phrase("server requested a delay of 45 seconds").unwrap();
        assert_eq!(t, now() + Duration::seconds(45));
        // The client's own schedule, however it is worded, is not.
        assert!(phrase("Retrying in 25s (attempt 1/3)").is_none());
        assert!(phrase("Rate limited. Wait 2.7s (attempt 2/3)...").is_none());
        assert!(phrase("We will try again in 5 seconds.").is_none());
        assert!(phrase("Retry 2/3 in 5s").is_none());
        // A reset the provider says will happen is the provider's.
        let t = phrase("Your quota will reset after 20s.").unwrap();
        assert_eq!(t, now() + Duration::seconds(20));
    }

    #[test]
    fn phrases_read_words_clock_style_and_iso_durations() {
        for (s, want) in [
            ("Please try again in one minute.", 60.0),
            ("try again in thirty seconds", 30.0),
            ("try again in half an hour", 1800.0),
            ("Please try again in 1 hour and 5 minutes.", 3900.0),
            ("Try again in 3h 20m.", 12_000.0),
            ("The model will be available in 10 minutes", 600.0),
            ("Limit resets in 1:05:30.", 3930.0),
            ("retry after PT1M30S", 90.0),
            ("Please wait 20.387 second(s)", 20.387),
        ] {
            let t = phrase(s).unwrap_or_else(|| panic!("{s}"));
            assert_eq!(
                t,
                now() + Duration::milliseconds((want * 1000.0) as i64),
                "{s}"
            );
        }
        assert!(phrase("Support is available 24 hours a day").is_none());
        assert!(phrase("available in three regions").is_none());
        assert!(phrase("try again in a few minutes").is_none());
        assert!(phrase("resets in 5:30").is_none());
        assert!(phrase("retry after Please").is_none());
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
            "Access resets at 2:55 PM PST",
            "midnight Pacific",
            "resets tomorrow at noon (UTC)",
            "reset daily at ",
            "Mon, 07 Dec 2026 18:00:00 GMT",
            "Provider requested 1800000ms wait",
            "available in 5 min",
            "quotaResetTimeStamp:2026-12-04T15:24:12Z",
            "renews on Dec 8 at 5pm CET",
            "resets Thu 9am (Europe/Berlin)",
            "monthly",
            "(PST)",
            "reset at 1pm (Etc/GMT+5)",
            "Available After 4 PM GMT",
            "regain access on 2026-12-01 at 00:00 UTC",
            "Regain Access At 2026-12-01 13:30 +02:00",
            "x",
            " ",
            "\t",
            "é",
            "retrying",
            "retry-after: 60",
            "'Retry-After': '17'",
            "retry_after=2.5",
            "resetsAt: 1796068800",
            "reset_at=",
            "resets_in_seconds: 84",
            "Reset time: ",
            "resets: ",
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
        let cases: Vec<(&Led, Regex)> = [
            &*PHRASE_TRIGGER,
            &*CLOCK,
            &*ISO_TIME,
            &*RETRY_AFTER_TEXT,
            &*RESET_FIELD_TEXT,
        ]
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
    fn reset_fields_printed_as_text() {
        let e = |s: &str| epoch_hint(s, s.to_ascii_lowercase().as_bytes(), now());
        // Node's util.inspect: keys without quotes.
        let t = e("{ type: 'rate_limit_error', resetsAt: 1796068800 }").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T20:00:00+00:00");
        let t = e("usage_limit_reached plan_type=plus reset_at=1796068800000").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T20:00:00+00:00");
        let t = e("resets_in_seconds: 8464").unwrap();
        assert_eq!(t, now() + Duration::seconds(8464));
        let t = e("next_reset: '2026-12-01T00:00:00Z'").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T00:00:00+00:00");
        // A small number under an instant's name, a past instant, a date
        // without a zone: nothing sure.
        assert!(e("reset_at: 3600").is_none());
        assert!(e("resetsAt: 1760000400").is_none());
        assert!(e("reset_time: 2026-12-01 00:00:00").is_none());
        assert!(e("reset_at: 1796068800.5.1").is_none());
        // A relay's log: a wait with its unit under reset_in.
        let t = e("status=503 model_rate_limited model=x reset_in=29s").unwrap();
        assert_eq!(t, now() + Duration::seconds(29));
        let t = e("reset_after=1h2m3s").unwrap();
        assert_eq!(t, now() + Duration::seconds(3723));
        // A bare number under a wait's name, a duration under an instant's.
        assert!(e("reset_in=29").is_none());
        assert!(e("reset_at=29s").is_none());
        // Response headers a relay printed as text (Codex's usage window).
        let t = e("x-codex-primary-reset-at: 1796068800").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T20:00:00+00:00");
        let t = e("x-codex-primary-reset-after-seconds: 8464").unwrap();
        assert_eq!(t, now() + Duration::seconds(8464));
        assert!(e("x-codex-secondary-reset-at:").is_none());
    }

    #[test]
    fn phrases_wrapped_by_a_terminal() {
        let t = phrase("Limit 250000, Used 250000. Please try\nagain in 5.448s. Visit").unwrap();
        assert_eq!(t, now() + Duration::milliseconds(5448));
        let t = phrase("Requested 2. Please try again\n         in 12s. Visit").unwrap();
        assert_eq!(t, now() + Duration::seconds(12));
        let t = phrase("Requested 1. Please try again in\n20ms. Visit").unwrap();
        assert_eq!(t, now() + Duration::milliseconds(20));
        let t = phrase("quota exhausted\n  (reset after 140h 21m 10s)").unwrap();
        assert_eq!(t, now() + Duration::seconds(505_270));
        // Two line breaks are two messages; a client's own schedule stays
        // its own across a wrap.
        assert!(phrase("Please try\n\nagain in 5s").is_none());
        assert!(phrase("we will try\nagain in 5s").is_none());
        assert!(phrase("Retrying: will retry\nafter 6173ms").is_none());
    }

    #[test]
    fn clocks_read_a_colon_after_the_word() {
        let t = clock("Limit resets: 5pm (America/New_York)").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T22:00:00+00:00");
        let t = clock("Reset time: 2026-12-01T08:00:00Z").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T08:00:00+00:00");
        let t = clock("Resets at: 2026-12-01 09:30 UTC").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-12-01T09:30:00+00:00");
        assert!(clock("Reset time: 9:30").is_none());
    }

    #[test]
    fn epochs_in_the_past_are_dropped() {
        let e = |s: &str| epoch_hint(s, s.to_ascii_lowercase().as_bytes(), now());
        assert!(e("Claude AI usage limit reached|1760000400").is_none());
        let t = e("Claude AI usage limit reached|1796068800").unwrap();
        assert_eq!(t.to_rfc3339(), "2026-11-30T20:00:00+00:00");
    }
}
