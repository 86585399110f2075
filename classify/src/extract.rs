//! Extractors: turn raw evidence items into normalised facts.
//!
//! Every item kind has one extractor. Together they produce:
//! - structured facts: HTTP statuses (from responses, JSON error objects and
//!   phrases like `API Error: 529` or `last status: 401`), error identifiers
//!   (`error.type`, `error.code`, Google `status` and `details[].reason`,
//!   Bedrock exception names, codex-acp `codex_error_info`), Google quota ids,
//!   ACP error codes, stop reasons, exit codes and signals;
//! - three text haystacks the catalogue's patterns run over: `error` (bodies,
//!   error messages, stderr, stdout), `agent` (agent message chunks, which may
//!   hold a CLI's banner but also the model's own prose) and `tool` (text of
//!   failed tool calls);
//! - timing inputs (headers, RetryInfo, JSON reset fields) for [`super::timing`].
//!
//! JSON is found wherever it hides: whole bodies, SSE `data:` lines inside an
//! HTTP 200 stream, JSON embedded in a stderr line (`API Error: 400 {…}`),
//! JSON spread over several lines, JSON serialised into a `message` string,
//! and relay wrappers whose `metadata.raw` carries the upstream's words.
//! Identifiers are normalised to snake_case (`rateLimitExceeded`,
//! `RATE_LIMIT_EXCEEDED` and `rate_limit_exceeded` are the same fact).

use super::evidence::{cut, Evidence, Item};
use super::facts::{BodyHint, Facts, ResetHeader, Segment, Source, NO_LINE};
use super::json::Json;
use super::mask::{LineUse, Mask};
use regex::bytes::Regex;
use serde_json::Value;
use std::sync::LazyLock;

/// How the lines of a text map to a stream item's lines.
#[derive(Clone, Copy)]
enum LineMap<'a> {
    /// Not a stream item's text.
    None,
    /// Every line of the item, in order.
    Identity,
    /// The kept lines: the k-th line of the text is the item's `l[k]`.
    Kept(&'a [u32]),
}

/// Most JSON nodes read per item, so a hostile body cannot make extraction slow.
const NODE_BUDGET: usize = 4096;
/// Most attempts to parse embedded JSON in one text.
const EMBEDDED_ATTEMPTS: usize = 8;
/// Deepest JSON-inside-a-string-inside-JSON followed.
const MAX_NESTED_JSON: usize = 3;

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
    /// Extracts every item's facts; with a `mask`, only what it keeps (see
    /// `provenance`): items and stream lines it drops are not read at all.
    pub(crate) fn extract(ev: &Evidence, mask: Option<&Mask>) -> Facts {
        let mut f = Facts {
            line: NO_LINE,
            ..Facts::default()
        };
        // Room for the error haystack up front (growing it by doubling would
        // copy it several times); JSON bodies give less text than their size.
        f.hay[Source::Error as usize].reserve(ev.items.iter().map(text_size).sum());
        // A segment per stream line, and a few per other item.
        f.segments.reserve(
            ev.items
                .iter()
                .map(|i| match i {
                    Item::Stderr(s) | Item::Stdout(s) => s.lines.len(),
                    _ => 2,
                })
                .sum(),
        );
        for (idx, item) in ev.items.iter().enumerate() {
            if mask.is_some_and(|m| m.drops_item(idx)) {
                continue;
            }
            f.line = NO_LINE;
            match item {
                Item::Http(h) => {
                    if let Some(s) = h.status {
                        if (400..=599).contains(&s) {
                            f.statuses.push((s, idx));
                        }
                    }
                    f.headers(&h.headers, idx);
                    if let Some(body) = &h.body {
                        f.body(body, &h.headers, idx);
                    }
                    if let Some(err) = &h.error {
                        f.text(Source::Error, idx, err);
                        if h.status.is_none() {
                            f.no_response = Some(idx);
                        }
                    }
                }
                Item::AcpError(e) => {
                    if let Some(c) = e.code {
                        f.acp_codes.push((c, idx));
                    }
                    if let Some(m) = &e.message {
                        f.text(Source::Error, idx, m);
                        f.embedded_json(m, idx, 0);
                    }
                    match &e.data {
                        Some(Value::String(s)) => {
                            f.text(Source::Error, idx, s);
                            f.embedded_json(s, idx, 0);
                        }
                        Some(v) => {
                            let mut budget = NODE_BUDGET;
                            f.walk(&Json::from_value(v), idx, 0, 0, &mut budget);
                        }
                        None => {}
                    }
                }
                Item::AcpUpdate(u) => match u.update.as_str() {
                    "agent_message_chunk" => {
                        if let Some(t) = &u.text {
                            f.text(Source::Agent, idx, t);
                        }
                    }
                    "tool_call" | "tool_call_update" if u.status.as_deref() == Some("failed") => {
                        f.tool_failed = Some(idx);
                        if let Some(t) = &u.text {
                            f.text(Source::Tool, idx, t);
                        }
                    }
                    // An update without a status may be a failure the
                    // adapter did not mark: its text is read as tool text
                    // (only rules naming the tool haystack look at it).
                    "tool_call_update" if u.status.is_none() => {
                        if let Some(t) = &u.text {
                            f.text(Source::Tool, idx, t);
                        }
                    }
                    _ => {}
                },
                Item::AcpStop(s) => {
                    if let Some(r) = &s.stop_reason {
                        if let Some(t) = norm_token(r) {
                            f.stop_reasons.push((t, idx));
                        }
                    }
                }
                Item::Stderr(s) | Item::Stdout(s) => {
                    let lines = mask.and_then(|m| m.lines(idx));
                    let read = |n: usize| {
                        lines.map_or(LineUse::Read, |l| {
                            l.get(n).copied().unwrap_or(LineUse::Read)
                        })
                    };
                    let keep = |n: usize| read(n) == LineUse::Read;
                    let mut any_brace = false;
                    let mut all = true;
                    for (n, line) in s.lines.iter().enumerate() {
                        f.line = n as u32;
                        match read(n) {
                            LineUse::Read => {
                                any_brace |= line.contains('{');
                                f.text(Source::Error, idx, line);
                            }
                            LineUse::Tool => {
                                all = false;
                                f.text(Source::Tool, idx, line);
                            }
                            LineUse::Drop => all = false,
                        }
                    }
                    if any_brace {
                        // JSON may spread over lines; its text is tied to
                        // the line it starts on.
                        if all {
                            f.json_objects(&s.lines.join("\n"), idx, 0, LineMap::Identity);
                        } else {
                            let kept: Vec<u32> = (0..s.lines.len())
                                .filter(|&n| keep(n))
                                .map(|n| n as u32)
                                .collect();
                            let joined = kept
                                .iter()
                                .map(|&n| s.lines[n as usize].as_str())
                                .collect::<Vec<_>>()
                                .join("\n");
                            f.json_objects(&joined, idx, 0, LineMap::Kept(&kept));
                        }
                    }
                    f.line = NO_LINE;
                }
                Item::ProcessExit(p) => {
                    if let Some(c) = p.exit_code {
                        f.exit_codes.push((c, idx));
                    }
                    if let Some(sig) = &p.signal {
                        f.signals.push((sig.clone(), idx));
                    }
                }
                Item::Other(_) => {}
            }
        }
        f.text_statuses();
        f.exception_names();
        for (lower, hay) in f.lower.iter_mut().zip(&f.hay) {
            *lower = hay.as_bytes().to_ascii_lowercase();
        }
        f.text_google_details();
        f.oversized_request();
        f
    }

    /// Google `QuotaFailure` ids and `RetryInfo` delays in renderings no
    /// JSON reader takes apart: Go's `map[quotaId:…PerMinute… retryDelay:59s]`,
    /// protobuf text (`quota_id: "…"`, `retry_delay { … }` aside), JSON cut
    /// off before it closes. The quota id says which window a
    /// RESOURCE_EXHAUSTED is about, and the delay when it reopens, however
    /// the error was printed. Read only when the JSON readers found none.
    fn text_google_details(&mut self) {
        // Both details come only with RESOURCE_EXHAUSTED, which is a 429:
        // without one (from a response, a JSON code or prose) there is
        // nothing to look for.
        if !self.statuses.iter().any(|&(s, _)| s == 429) {
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
    fn oversized_request(&mut self) {
        let lower = &self.lower[Source::Error as usize];
        if memchr::memmem::find(lower, b"requested").is_none() {
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

    /// Appends `text` to a haystack as one segment: ANSI escapes removed,
    /// typographic quotes folded to ASCII, other control characters blanked.
    fn text(&mut self, source: Source, item: usize, text: &str) {
        let text = text.trim();
        if text.is_empty() {
            return;
        }
        let hay = &mut self.hay[source as usize];
        if !hay.is_empty() {
            hay.push('\n');
        }
        let start = hay.len();
        normalise_into(text, hay);
        let end = hay.len();
        if end > start {
            self.segments.push(Segment {
                source,
                start,
                end,
                item,
                line: self.line,
            });
        }
    }

    fn headers(&mut self, headers: &std::collections::BTreeMap<String, String>, idx: usize) {
        for (name, value) in headers {
            let n = name.as_str();
            match n {
                "retry-after-ms" => self.timing.retry_after_ms = Some(value.clone()),
                "retry-after" => self.timing.retry_after = Some(value.clone()),
                "x-amzn-errortype" | "x-amz-errortype" => {
                    let head = value.split(':').next().unwrap_or("");
                    if let Some(t) = norm_token(head) {
                        self.tokens.push((t, idx));
                    }
                }
                _ => {
                    let is_reset = n.ends_with("-reset") || n.contains("-reset-");
                    let is_ratelimit = n.starts_with("x-ratelimit")
                        || n.starts_with("anthropic-ratelimit")
                        || n.starts_with("x-rate-limit")
                        || n.starts_with("ratelimit")
                        || n.starts_with("x-ai-ratelimit");
                    // Kong's AI rate limiting says retry-after in its own header.
                    if n == "x-ai-ratelimit-retry-after" && !headers.contains_key("retry-after") {
                        self.timing.retry_after = Some(value.clone());
                    }
                    if is_reset && is_ratelimit {
                        if n.contains("unified") {
                            self.timing.unified_resets.push(value.clone());
                        } else {
                            let remaining_name = n.replacen("reset", "remaining", 1);
                            self.timing.reset_headers.push(ResetHeader {
                                value: value.clone(),
                                remaining: headers.get(&remaining_name).cloned(),
                            });
                        }
                    }
                }
            }
        }
    }

    fn body(
        &mut self,
        body: &str,
        headers: &std::collections::BTreeMap<String, String>,
        idx: usize,
    ) {
        let trimmed = body.trim_start();
        if trimmed.starts_with(['{', '[', '"']) {
            if let Some(v) = Json::parse(trimmed) {
                let mut budget = NODE_BUDGET;
                self.walk(&v, idx, 0, 0, &mut budget);
                return;
            }
        }
        // SSE streams and text that carries JSON somewhere inside.
        if self.embedded_json(body, idx, 0) > 0 {
            return;
        }
        let html = trimmed.starts_with('<')
            || headers
                .get("content-type")
                .is_some_and(|c| c.contains("html"));
        if html {
            let stripped = strip_tags(body);
            self.text(Source::Error, idx, &stripped);
        } else {
            for line in body.lines().take(64) {
                self.text(Source::Error, idx, line);
            }
        }
    }

    /// Parses JSON objects embedded in `text`; returns how many were read.
    /// `nest` counts how many JSON-in-text levels deep this text already is.
    fn embedded_json(&mut self, text: &str, idx: usize, nest: usize) -> usize {
        self.json_objects(text, idx, nest, LineMap::None)
    }

    /// [`Self::embedded_json`]; for a stream item's lines joined by
    /// newlines, `lines` maps the joined text's lines to the item's, and
    /// each object's text is tied to the line it starts on.
    fn json_objects(&mut self, text: &str, idx: usize, nest: usize, lines: LineMap) -> usize {
        if nest > MAX_NESTED_JSON || !text.contains('{') {
            return 0;
        }
        let mut found = 0;
        let mut pos = 0;
        let mut attempts = 0;
        while let Some(off) = text[pos..].find('{') {
            if attempts == EMBEDDED_ATTEMPTS {
                break;
            }
            attempts += 1;
            let start = pos + off;
            let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Json>();
            match stream.next() {
                Some(Ok(v)) => {
                    let consumed = stream.byte_offset().max(1);
                    let mut budget = NODE_BUDGET;
                    if !matches!(lines, LineMap::None) {
                        let k = memchr::memchr_iter(b'\n', &text.as_bytes()[..start]).count();
                        self.line = match lines {
                            LineMap::Kept(l) => l.get(k).copied().unwrap_or(NO_LINE),
                            _ => k as u32,
                        };
                    }
                    self.walk(&v, idx, 0, nest + 1, &mut budget);
                    found += 1;
                    pos = start + consumed;
                }
                _ => match python_literal_as_json(&text[start..]) {
                    // Python SDKs print errors as dict literals
                    // (`Error code: 429 - {'error': {'type': …, 'param': None}}`).
                    Some((json, consumed)) => {
                        if let Some(v) = Json::parse(&json) {
                            let mut budget = NODE_BUDGET;
                            self.walk(&v, idx, 0, nest + 1, &mut budget);
                            found += 1;
                            pos = start + consumed;
                        } else {
                            pos = start + 1;
                        }
                    }
                    None => pos = start + 1,
                },
            }
            if pos >= text.len() {
                break;
            }
        }
        found
    }

    /// Reads one JSON value: identifiers, statuses, messages and timing.
    /// Scalars of an object are read before its children so a top-level
    /// `resets_at` outranks a nested one.
    fn walk(&mut self, v: &Json, idx: usize, depth: usize, nest: usize, budget: &mut usize) {
        if *budget == 0 || depth > 24 {
            return;
        }
        *budget -= 1;
        match v {
            Json::String(s) => self.message(s, idx, nest),
            Json::Array(a) => {
                for x in a {
                    self.walk(x, idx, depth + 1, nest, budget);
                }
            }
            Json::Object(m) => {
                // Relay wrappers (OpenRouter and friends): the upstream's own
                // words are in metadata.raw; the wrapper's message is noise.
                let has_raw = v
                    .get("metadata")
                    .and_then(|md| md.get("raw"))
                    .is_some_and(|r| r.as_str().is_some_and(|s| !s.trim().is_empty()));
                // Claude Code's rate_limit_info is only a failure when rejected.
                for (k, val) in m {
                    let k: &str = k;
                    match k {
                        "type" | "code" | "status" | "reason" | "__type" | "error_type"
                        | "errorType" | "error_code" | "errorCode" | "name" | "status_code"
                        | "statusCode" | "http_status_code" | "httpStatusCode" | "http_status" => {
                            self.identifier(k, val, idx, nest);
                        }
                        "message" | "msg" | "detail" | "details" | "error"
                        | "error_description" | "errorMessage" | "error_message" | "result"
                        | "raw" | "stderr" | "additional_details" | "additionalDetails" => {
                            if let Json::String(s) = val {
                                if !(has_raw && k == "message") {
                                    self.message(s, idx, nest);
                                }
                            }
                        }
                        "codex_error_info" | "codexErrorInfo" => match val {
                            Json::String(s) => self.token(s, idx),
                            Json::Object(inner) => {
                                for (name, detail) in inner {
                                    self.token(name, idx);
                                    if let Json::Object(d) = detail {
                                        for (dk, dv) in d {
                                            self.identifier(dk, dv, idx, nest);
                                            self.timing_field(dk, dv);
                                        }
                                    }
                                }
                            }
                            _ => {}
                        },
                        "quotaId" | "quota_id" => {
                            if let Json::String(s) = val {
                                if self.quota_ids.len() < 16 {
                                    self.quota_ids.push(cut(s, 128).0.to_ascii_lowercase());
                                }
                            }
                        }
                        "retryDelay" | "retry_delay" => match val {
                            Json::String(s) => self.timing.retry_info.push(s.to_string()),
                            Json::Object(_) => {
                                let secs = val.get("seconds").and_then(num).unwrap_or(0.0)
                                    + val.get("nanos").and_then(num).unwrap_or(0.0) / 1e9;
                                self.timing.retry_info.push(format!("{secs}s"));
                            }
                            _ => {}
                        },
                        // Why a completion stopped, in a response that may
                        // look like a success (`finish_reason: content_filter`,
                        // Gemini `finishReason: SAFETY`, Bedrock
                        // `stopReason: guardrail_intervened`).
                        "finish_reason" | "finishReason" | "blockReason" | "block_reason"
                        | "stopReason" => {
                            if let Json::String(r) = val {
                                let kind = match k {
                                    "blockReason" | "block_reason" => "block_reason",
                                    "stopReason" => "stop_reason",
                                    _ => "finish_reason",
                                };
                                self.token(&format!("{kind}_{r}"), idx);
                            }
                        }
                        _ => self.timing_field(k, val),
                    }
                }
                for (k, val) in m {
                    if matches!(val, Json::Object(_) | Json::Array(_)) {
                        if k == "rate_limit_info" || k == "rateLimitInfo" {
                            self.rate_limit_info(val, idx);
                            continue;
                        }
                        if k == "codex_error_info" || k == "codexErrorInfo" {
                            continue;
                        }
                        self.walk(val, idx, depth + 1, nest, budget);
                    }
                }
            }
            _ => {}
        }
    }

    fn identifier(&mut self, key: &str, val: &Json, idx: usize, nest: usize) {
        match val {
            Json::Number(_) => {
                if let Some(n) = num(val) {
                    self.status_number(key, n, idx);
                }
            }
            Json::String(s) => {
                let t = s.trim();
                if let Ok(n) = t.parse::<f64>() {
                    self.status_number(key, n, idx);
                } else if t.len() > 40 && t.contains(' ') {
                    // A sentence under an identifier key is a message.
                    self.message(t, idx, nest);
                } else if t != "error" {
                    self.token(t, idx);
                }
            }
            _ => {}
        }
    }

    fn status_number(&mut self, key: &str, n: f64, idx: usize) {
        let status_key = !matches!(key, "type" | "reason" | "name" | "__type");
        if status_key && n.fract() == 0.0 && (400.0..=599.0).contains(&n) {
            self.statuses.push((n as u16, idx));
        }
    }

    fn token(&mut self, s: &str, idx: usize) {
        if self.tokens.len() >= 64 {
            return;
        }
        if let Some(t) = norm_token(s) {
            if !self.tokens.iter().any(|(x, _)| *x == t) {
                self.tokens.push((t, idx));
            }
        }
    }

    /// A message string: prose for the haystack, or JSON serialised into a
    /// string (Gemini CLI wraps the API's error that way), which is read.
    fn message(&mut self, s: &str, idx: usize, nest: usize) {
        let t = s.trim_start();
        if nest < MAX_NESTED_JSON && (t.starts_with('{') || t.starts_with('[')) {
            if let Some(v) = Json::parse(t) {
                let mut budget = NODE_BUDGET / 2;
                self.walk(&v, idx, 0, nest + 1, &mut budget);
                return;
            }
        }
        self.text(Source::Error, idx, s);
        self.embedded_json(s, idx, nest + 1);
    }

    fn timing_field(&mut self, key: &str, val: &Json) {
        if self.timing.body.len() >= 16 {
            return;
        }
        match key {
            "resets_at" | "resetsAt" | "reset_at" | "resetAt" | "reset_time" | "resetTime"
            | "X-RateLimit-Reset" | "x-ratelimit-reset" => {
                let s = match val {
                    Json::Number(n) => n.to_string(),
                    Json::String(s) => s.to_string(),
                    _ => return,
                };
                self.timing.body.push(BodyHint::Absolute(s));
            }
            "resets_in_seconds"
            | "reset_after_seconds"
            | "reset_in_seconds"
            | "retry_after"
            | "retryAfter"
            | "retry_after_seconds"
            | "retryAfterSeconds"
            | "resetsInSeconds"
            | "estimated_time" => {
                if let Some(n) = num(val) {
                    self.timing.body.push(BodyHint::Seconds(n));
                }
            }
            "retry_after_ms" | "retryAfterMs" => {
                if let Some(n) = num(val) {
                    self.timing.body.push(BodyHint::Seconds(n / 1000.0));
                }
            }
            _ => {}
        }
    }

    fn rate_limit_info(&mut self, v: &Json, idx: usize) {
        let Json::Object(_) = v else { return };
        if v.get("status").and_then(Json::as_str) != Some("rejected") {
            return;
        }
        self.token("rate_limit_rejected", idx);
        let kind = v.get("rateLimitType").and_then(Json::as_str);
        if let Some(t) = kind {
            self.token(t, idx);
        }
        let reset = match (kind, v.get("overageResetsAt")) {
            (Some("overage"), Some(r)) => Some(r),
            _ => v.get("resetsAt"),
        };
        if let Some(r) = reset {
            self.timing_field("resetsAt", r);
        }
    }

    /// Statuses spoken in prose: `API Error: 529`, `last status: 401`, `HTTP 429:`.
    fn text_statuses(&mut self) {
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
    fn exception_names(&mut self) {
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

/// An upper bound of the error text an item usually gives.
fn text_size(item: &Item) -> usize {
    let len = |s: &Option<String>| s.as_ref().map_or(0, |s| s.len() + 1);
    match item {
        Item::Http(h) => len(&h.body) + len(&h.error),
        Item::AcpError(e) => {
            len(&e.message)
                + match &e.data {
                    Some(Value::String(s)) => s.len() + 1,
                    _ => 0,
                }
        }
        Item::Stderr(s) | Item::Stdout(s) => s.lines.iter().map(|l| l.len() + 1).sum(),
        _ => 0,
    }
}

fn num(v: &Json) -> Option<f64> {
    match v {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `rateLimitExceeded`, `RATE_LIMIT_EXCEEDED`, `rate-limit exceeded` → `rate_limit_exceeded`.
pub(crate) fn norm_token(s: &str) -> Option<String> {
    let s = s.trim();
    if s.is_empty() || s.len() > 64 {
        return None;
    }
    let mut out = String::with_capacity(s.len() + 4);
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_ascii_uppercase() {
            if prev_lower {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
            prev_lower = false;
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
            prev_lower = true;
        } else {
            if !out.is_empty() && !out.ends_with('_') {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    (!out.is_empty()).then_some(out)
}

/// Copies `text` into `out`, dropping ANSI escapes, folding typographic
/// quotes to ASCII and blanking other control characters.
fn normalise_into(text: &str, out: &mut String) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // Copy the run of plain ASCII in one go.
        let start = i;
        i = super::matcher::scan::plain_run_end(b, i);
        out.push_str(&text[start..i]);
        if i >= b.len() {
            break;
        }
        if b[i] == 0x1b {
            // CSI: ESC [ params final-byte
            i += 1;
            if b.get(i) == Some(&b'[') {
                i += 1;
                while i < b.len() && !(0x40..=0x7e).contains(&b[i]) {
                    i += 1;
                }
                i += 1;
            }
            continue;
        }
        if b[i] < 0x80 {
            out.push(' ');
            i += 1;
            continue;
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201B}' | '\u{2032}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201F}' => out.push('"'),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
        i += c.len_utf8();
    }
}

/// A Python literal at the start of `s` (`{'error': {'code': None}}`, as
/// Python SDKs print errors), rewritten as JSON, with the length of `s` it
/// covers: single-quoted and `b'…'` strings become JSON strings, `None`,
/// `True` and `False` become `null`, `true` and `false`. `None` when `s`
/// does not start with such a literal, the literal is not closed, or it
/// needed no rewriting (then it is not valid JSON for another reason).
fn python_literal_as_json(s: &str) -> Option<(String, usize)> {
    let b = s.as_bytes();
    // `{'…` or `{"…`: a dict with a string key, perhaps after spaces.
    let first = b.iter().skip(1).find(|c| !c.is_ascii_whitespace())?;
    if b.first() != Some(&b'{') || !matches!(first, b'\'' | b'"') {
        return None;
    }
    let mut out = String::with_capacity(s.len().min(4096));
    let mut depth = 0usize;
    let mut rewrote = false;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c @ (b'{' | b'[') => {
                depth += 1;
                out.push(c as char);
                i += 1;
            }
            c @ (b'}' | b']') => {
                depth = depth.checked_sub(1)?;
                out.push(c as char);
                i += 1;
                if depth == 0 {
                    return rewrote.then_some((out, i));
                }
            }
            q @ (b'\'' | b'"') => {
                rewrote |= q == b'\'';
                out.push('"');
                i += 1;
                loop {
                    let c = *b.get(i)?;
                    if c == q {
                        i += 1;
                        break;
                    }
                    match c {
                        b'\\' => {
                            rewrote |= b.get(i + 1) == Some(&b'\'');
                            match b.get(i + 1)? {
                                b'\'' => out.push('\''),
                                b'"' => out.push_str("\\\""),
                                b'\\' => out.push_str("\\\\"),
                                b'n' => out.push_str("\\n"),
                                b't' => out.push_str("\\t"),
                                b'r' => out.push_str("\\r"),
                                // \x41, \u… and the like: kept as text.
                                _ => {
                                    out.push_str("\\\\");
                                    i += 1;
                                    continue;
                                }
                            }
                            i += 2;
                        }
                        b'"' => {
                            out.push_str("\\\"");
                            i += 1;
                        }
                        // A line break inside a string (the text was wrapped):
                        // one space, and the next line's indentation goes.
                        c if c < 0x20 => {
                            rewrote = true;
                            if !out.ends_with(' ') {
                                out.push(' ');
                            }
                            i += 1;
                            while matches!(b.get(i), Some(b' ' | b'\t')) {
                                i += 1;
                            }
                        }
                        _ => {
                            let ch = s.get(i..)?.chars().next()?;
                            out.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                out.push('"');
            }
            c if c.is_ascii_alphabetic() => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &s[start..i];
                let before_quote = matches!(b.get(i), Some(b'\'' | b'"'));
                match word {
                    "None" => out.push_str("null"),
                    "True" => out.push_str("true"),
                    "False" => out.push_str("false"),
                    // String prefixes: b'…', u'…', r'…'.
                    "b" | "u" | "r" if before_quote => {}
                    _ => {
                        out.push_str(word);
                        continue;
                    }
                }
                rewrote = true;
            }
            _ => {
                let ch = s.get(i..)?.chars().next()?;
                out.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    None
}

/// Drops HTML tags and collapses whitespace.
fn strip_tags(html: &str) -> String {
    let mut out = String::with_capacity(html.len().min(4096));
    let mut in_tag = false;
    let mut last_space = true;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => {
                in_tag = false;
                if !last_space {
                    out.push(' ');
                    last_space = true;
                }
            }
            _ if in_tag => {}
            c if c.is_whitespace() => {
                if !last_space {
                    out.push(' ');
                    last_space = true;
                }
            }
            c => {
                out.push(c);
                last_space = false;
            }
        }
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(json: &str) -> Facts {
        Facts::extract(&Evidence::from_json_str(json).unwrap(), None)
    }

    #[test]
    fn tokens_normalise() {
        for (raw, want) in [
            ("rateLimitExceeded", "rate_limit_exceeded"),
            ("RATE_LIMIT_EXCEEDED", "rate_limit_exceeded"),
            ("ThrottlingException", "throttling_exception"),
            ("Too Many Requests", "too_many_requests"),
            ("overloaded_error", "overloaded_error"),
        ] {
            assert_eq!(norm_token(raw).as_deref(), Some(want), "{raw}");
        }
    }

    #[test]
    fn sse_error_in_200_stream() {
        let f = facts(
            r#"{"items":[{"kind":"http","status":200,"body":"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"}]}"#,
        );
        assert!(f.tokens.iter().any(|(t, _)| t == "overloaded_error"));
        assert!(f.hay[0].contains("Overloaded"));
    }

    #[test]
    fn nested_json_in_stderr_message() {
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["ApiError: {\"error\":{\"message\":\"{\\n \\\"error\\\": {\\n \\\"code\\\": 429, \\\"status\\\": \\\"RESOURCE_EXHAUSTED\\\", \\\"details\\\": [{\\\"quotaId\\\": \\\"PerDayThing\\\"}]}}\",\"code\":429}}"]}]}"#,
        );
        assert!(f.tokens.iter().any(|(t, _)| t == "resource_exhausted"));
        assert_eq!(f.quota_ids, vec!["perdaything"]);
        assert!(f.statuses.iter().any(|(s, _)| *s == 429));
    }

    #[test]
    fn google_details_in_go_maps_and_protobuf_text() {
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["Error 429, Details: [map[@type:type.googleapis.com/google.rpc.QuotaFailure violations:[map[quotaId:GenerateContentPaidTierInputTokensPerModelPerMinute quotaMetric:x]]]]"]}]}"#,
        );
        assert_eq!(
            f.quota_ids,
            vec!["generatecontentpaidtierinputtokenspermodelperminute"]
        );
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["HTTP 429: violations { quota_id: \"GenerateRequestsPerDayPerProjectPerModel\" }"]}]}"#,
        );
        assert_eq!(
            f.quota_ids,
            vec!["generaterequestsperdayperprojectpermodel"]
        );
        let f =
            facts(r#"{"items":[{"kind":"stderr","lines":["Error 429: no quota here: quotaId"]}]}"#);
        assert!(f.quota_ids.is_empty());
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["Error 429, map[@type:type.googleapis.com/google.rpc.RetryInfo retryDelay:59s]]"]}]}"#,
        );
        assert_eq!(f.timing.retry_info, vec!["59s"]);
        // An SDK's own backoff under a longer key is not a RetryInfo delay.
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["HTTP 429 $metadata: attempts 3, totalRetryDelay: 274, retry_delay: 12"]}]}"#,
        );
        assert!(f.timing.retry_info.is_empty(), "{:?}", f.timing.retry_info);
        // Without a 429 there is no RESOURCE_EXHAUSTED to read them for.
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["quotaId:PerMinuteThing retryDelay:5s"]}]}"#,
        );
        assert!(f.quota_ids.is_empty() && f.timing.retry_info.is_empty());
    }

    #[test]
    fn statuses_in_prose() {
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["exceeded retry limit, last status: 401 Unauthorized","API Error: 529 Overloaded","HTTP 429: slow"]}]}"#,
        );
        let s: Vec<u16> = f.statuses.iter().map(|(s, _)| *s).collect();
        assert_eq!(s, vec![401, 529, 429]);
    }

    #[test]
    fn python_literals_are_read_like_json() {
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', 'message': \"Don't retry\", 'param': None}}"]}]}"#,
        );
        assert!(
            f.tokens.iter().any(|(t, _)| t == "overloaded_error"),
            "{:?}",
            f.tokens
        );
        assert!(f.hay[0].contains("Don't retry"));
        let (json, n) = python_literal_as_json("{'a': b'x\\'y', 'b': [True, None]} tail").unwrap();
        assert_eq!(json, r#"{"a": "x'y", "b": [true, null]}"#);
        assert_eq!(n, "{'a': b'x\\'y', 'b': [True, None]}".len());
        assert!(python_literal_as_json("{\"a\": 1}").is_none());
        assert!(python_literal_as_json("{'a': 'open").is_none());
    }

    #[test]
    fn finish_reasons_and_oversized_requests_are_identifiers() {
        let f = facts(
            r#"{"items":[{"kind":"http","status":200,"body":"{\"choices\":[{\"finish_reason\":\"content_filter\"}],\"promptFeedback\":{\"blockReason\":\"PROHIBITED_CONTENT\"}}"}]}"#,
        );
        let t: Vec<&str> = f.tokens.iter().map(|(t, _)| t.as_str()).collect();
        assert!(t.contains(&"finish_reason_content_filter"), "{t:?}");
        assert!(t.contains(&"block_reason_prohibited_content"), "{t:?}");
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["on tokens per minute (TPM): Limit 7000, Used 0, Requested ~12903. Please try again in 50s."]}]}"#,
        );
        assert!(f.tokens.iter().any(|(t, _)| t == "request_exceeds_limit"));
        let f = facts(
            r#"{"items":[{"kind":"stderr","lines":["on tokens per min (TPM): Limit 30000, Used 29000, Requested 2,000."]}]}"#,
        );
        assert!(!f.tokens.iter().any(|(t, _)| t == "request_exceeds_limit"));
    }

    #[test]
    fn relay_raw_replaces_wrapper_message() {
        let f = facts(
            r#"{"items":[{"kind":"http","status":429,"body":"{\"error\":{\"message\":\"Provider returned error\",\"code\":429,\"metadata\":{\"raw\":\"upstream is rate-limited\"}}}"}]}"#,
        );
        assert!(!f.hay[0].contains("Provider returned error"));
        assert!(f.hay[0].contains("upstream is rate-limited"));
    }
}
