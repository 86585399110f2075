//! Facts spoken in prose, read from the error haystack once every item is
//! in it: statuses (`API Error: 529`, `last status: 401`), AWS exception
//! names, Google quota ids and retry delays printed as Go maps or protobuf
//! text, and a request larger than the whole limit it was measured against.

use crate::facts::{Facts, Source};
use regex::bytes::Regex;
use std::sync::LazyLock;

static STATUS_IN_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    regex::bytes::RegexBuilder::new(
        r"(?:\b(?:api error|error|status(?: code)?|http(?:/\d(?:\.\d)?)?|unexpected status|last status|failed|request failed with status code)\W{1,3}\(?[45]\d\d\b)|(?:\b[45]\d\d (?:unauthorized|forbidden|too many requests|not found|bad request|payment required|service unavailable|internal server error|bad gateway|gateway time-?out|request timeout|request entity too large|payload too large|unprocessable entity|overloaded)\b)",
    )
    .case_insensitive(true)
    .unicode(false)
    .build()
    .expect("status pattern compiles")
});

/// `Limit 30000, Used 12, Requested 61337` (lower case; `Used` optional).
static LIMIT_REQUESTED: LazyLock<Regex> = LazyLock::new(|| {
    regex::bytes::RegexBuilder::new(
        r"\blimit:?\s+([\d,]{1,12}),?\s+(?:used:?\s+([\d,]{1,12}),?\s+)?requested:?\s+~?([\d,]{1,12})\b",
    )
    .unicode(false)
    .build()
    .expect("limit pattern compiles")
});

static EXCEPTION: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("Exception"));

/// The first words of the Google detail keys read out of text
/// ([`Facts::text_google_details`]), lower case.
static QUOTA_WORD: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("quota"));
static RETRY_WORD: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("retry"));

/// Words whose absence from the lower-cased error text skips a reading
/// ([`Facts::text_google_details`], [`Facts::oversized_request`]); built
/// once, as building a searcher costs more than most searches.
static RESOURCE_EXHAUSTED: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("resource_exhausted"));
static REQUESTED: LazyLock<memchr::memmem::Finder<'static>> =
    LazyLock::new(|| memchr::memmem::Finder::new("requested"));

/// The values written after the key `<word><tail>` and `:` or `=` (optional
/// quotes and spaces around it) in lower-cased text: `quotaid:x`,
/// `"quota_id": "x"`, `retrydelay:59s`. The key is a whole word
/// (`totalretrydelay` is not `retrydelay`); a value is letters, digits, `-`,
/// `_` and `.`, and is kept when `keep` says so; at most 16.
fn text_values(
    lower: &[u8],
    word: &memchr::memmem::Finder<'_>,
    tails: &[&[u8]],
    keep: impl Fn(&[u8]) -> bool,
) -> Vec<String> {
    let mut found = Vec::new();
    for at in word.find_iter(lower) {
        if at > 0 && (lower[at - 1].is_ascii_alphanumeric() || lower[at - 1] == b'_') {
            continue;
        }
        let mut i = at + word.needle().len();
        let Some(tail) = tails.iter().find(|t| lower[i..].starts_with(t)) else {
            continue;
        };
        i += tail.len();
        let skip = |i: &mut usize| {
            while *i < lower.len() && b"\\\"' ".contains(&lower[*i]) {
                *i += 1;
            }
        };
        skip(&mut i);
        if !matches!(lower.get(i), Some(b':' | b'=')) {
            continue;
        }
        i += 1;
        skip(&mut i);
        let start = i;
        while i < lower.len() && (lower[i].is_ascii_alphanumeric() || b"-_.".contains(&lower[i])) {
            i += 1;
        }
        if i > start && found.len() < 16 && keep(&lower[start..i]) {
            found.push(String::from_utf8_lossy(&lower[start..i.min(start + 128)]).into_owned());
        }
    }
    found
}

/// Room before the status digits for the longest status phrase.
const STATUS_PHRASE_LEAD: usize = 64;

/// Where the first `[45]\d\d` in `b` starts.
fn first_status_digits(b: &[u8]) -> Option<usize> {
    memchr::memchr2_iter(b'4', b'5', b).find(|&i| {
        b.get(i + 1).is_some_and(u8::is_ascii_digit) && b.get(i + 2).is_some_and(u8::is_ascii_digit)
    })
}

impl Facts {
    /// Google `QuotaFailure` ids and `RetryInfo` delays in renderings no
    /// JSON reader takes apart: Go's `map[quotaId:…PerMinute… retryDelay:59s]`,
    /// protobuf text (`quota_id: "…"`, `retry_delay { … }` aside), JSON cut
    /// off before it closes. The quota id says which window a
    /// RESOURCE_EXHAUSTED is about, and the delay when it reopens, however
    /// the error was printed. Read only when the JSON readers found none.
    pub(super) fn text_google_details(&mut self) {
        // Both details come only with RESOURCE_EXHAUSTED, which is a 429:
        // without one (from a response, a JSON code or prose) or the
        // status's name there is nothing to look for.
        // A pretty-printed error cut into lines keeps its status only as
        // text (`"code": 429,` on a line of its own), but says
        // RESOURCE_EXHAUSTED as well.
        if !self.statuses.iter().any(|&(s, _)| s == 429)
            && RESOURCE_EXHAUSTED
                .find(&self.lower[Source::Error as usize])
                .is_none()
        {
            return;
        }
        if self.quota_ids.is_empty() {
            self.quota_ids = text_values(
                &self.lower[Source::Error as usize],
                &QUOTA_WORD,
                &[b"id", b"_id"],
                |v| v.len() >= 4,
            );
        }
        if self.timing.retry_info.is_empty() {
            // A protobuf Duration prints as seconds with an `s` (`59s`,
            // `45.837906927s`); other numbers under other keys
            // (`totalRetryDelay: 274`, an SDK's own backoff) are not it.
            self.timing.retry_info = text_values(
                &self.lower[Source::Error as usize],
                &RETRY_WORD,
                &[b"delay", b"_delay"],
                |v| v.len() >= 2 && v[0].is_ascii_digit() && v.ends_with(b"s"),
            );
        }
    }

    /// A request larger than the whole limit it was measured against
    /// ("on tokens per min (TPM): Limit 7000, Used 0, Requested 12903"):
    /// waiting never lets it through. Gives the `request_exceeds_limit`
    /// identifier.
    pub(super) fn oversized_request(&mut self) {
        let lower = &self.lower[Source::Error as usize];
        if REQUESTED.find(lower).is_none() {
            return;
        }
        let over = LIMIT_REQUESTED.captures_iter(lower).take(8).find_map(|c| {
            let n = |g: usize| {
                std::str::from_utf8(c.get(g)?.as_bytes())
                    .ok()?
                    .replace(',', "")
                    .parse::<u64>()
                    .ok()
            };
            let (limit, requested) = (n(1)?, n(3)?);
            let start = c.get(0)?.start();
            (requested > limit).then_some(start)
        });
        if let Some(at) = over {
            let item = self.item_at(Source::Error, at).unwrap_or(0);
            self.token("request_exceeds_limit", item);
        }
    }

    /// Statuses spoken in prose: `API Error: 529`, `last status: 401`, `HTTP 429:`.
    pub(super) fn text_statuses(&mut self) {
        let hay = &self.hay[Source::Error as usize];
        if hay.is_empty() {
            return;
        }
        let bytes = hay.as_bytes();
        // Every status phrase holds a `[45]\d\d` and starts at most 35 bytes
        // before it ("request failed with status code (429"): without one
        // there is nothing to find, and the search may start just before the
        // first. `find_at` keeps the context before the start for `\b`, so
        // the matches are exactly those of a search from the beginning.
        let Some(first) = first_status_digits(bytes) else {
            return;
        };
        let mut at = first.saturating_sub(STATUS_PHRASE_LEAD);
        let matches = std::iter::from_fn(|| {
            let m = STATUS_IN_TEXT.find_at(bytes, at)?;
            // Matches are never empty (they hold three digits).
            at = m.end();
            Some(m)
        });
        let mut found = Vec::new();
        for m in matches.take(32) {
            // The match holds exactly one 4xx/5xx number bounded by non-digits.
            let bytes = m.as_bytes();
            let code = bytes.windows(3).enumerate().find_map(|(k, w)| {
                let bounded = (k == 0 || !bytes[k - 1].is_ascii_digit())
                    && bytes.get(k + 3).is_none_or(|c| !c.is_ascii_digit());
                (bounded && matches!(w[0], b'4' | b'5') && w[1..].iter().all(u8::is_ascii_digit))
                    .then(|| {
                        u16::from(w[0] - b'0') * 100
                            + u16::from(w[1] - b'0') * 10
                            + u16::from(w[2] - b'0')
                    })
            });
            if let Some(code) = code {
                let item = self.item_at(Source::Error, m.start()).unwrap_or(0);
                found.push((code, item));
            }
        }
        for (c, i) in found {
            if !self.statuses.iter().any(|(s, _)| *s == c) {
                self.statuses.push((c, i));
            }
        }
    }

    /// AWS-style exception names in prose (`ThrottlingException`).
    pub(super) fn exception_names(&mut self) {
        let mut names = Vec::new();
        {
            let hay = &self.hay[Source::Error as usize];
            let bytes = hay.as_bytes();
            let mut from = 0;
            while let Some(off) = EXCEPTION.find(&bytes[from..]) {
                let end = from + off;
                let mut start = end;
                while start > 0 && bytes[start - 1].is_ascii_alphabetic() {
                    start -= 1;
                }
                if end - start >= 3 && bytes[start].is_ascii_uppercase() {
                    let item = self.item_at(Source::Error, start).unwrap_or(0);
                    names.push((hay[start..end + "Exception".len()].to_owned(), item));
                }
                from = end + "Exception".len();
                if names.len() >= 8 {
                    break;
                }
            }
        }
        for (n, i) in names {
            self.token(&n, i);
        }
    }
}
