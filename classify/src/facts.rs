//! Facts: what extraction finds in an envelope, the one vocabulary the
//! rest of the classifier reads. The three text haystacks and their
//! segments (each tied to the item and stream line it came from), the
//! structured facts (statuses, identifiers, quota ids, ACP codes, stop
//! reasons, exits and signals), the raw timing inputs, and the questions
//! rules ask of them (which kinds are present, which item a position
//! belongs to).
//!
//! The types are apart from the extractors that fill them (`extract`) so
//! that the extractors, the provenance judgment (which reads a full
//! extraction's facts) and the matcher each depend on this module rather
//! than on one another.

/// Which haystack a text came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    Error = 0,
    Agent = 1,
    Tool = 2,
}

impl Source {
    pub(crate) const ALL: [Source; 3] = [Source::Error, Source::Agent, Source::Tool];

    pub(crate) fn parse(s: &str) -> Option<Source> {
        Some(match s {
            "error" => Source::Error,
            "agent" => Source::Agent,
            "tool" => Source::Tool,
            _ => return None,
        })
    }

    pub(crate) fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// One piece of text inside a haystack, tied to the item it came from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Segment {
    pub source: Source,
    pub start: usize,
    pub end: usize,
    pub item: usize,
    /// The stream line it came from (for text read out of JSON, the line
    /// the JSON starts on); [`NO_LINE`] outside stream items.
    pub line: u32,
}

/// [`Segment::line`] of text that does not come from a stream line.
pub(crate) const NO_LINE: u32 = u32::MAX;

/// A reset-style header (`x-ratelimit-reset-tokens: 6m0s`) with its
/// `remaining` partner when present.
#[derive(Debug, Clone)]
pub(crate) struct ResetHeader {
    pub value: String,
    pub remaining: Option<String>,
}

/// A timing field found in a JSON body.
#[derive(Debug, Clone)]
pub(crate) enum BodyHint {
    /// Epoch seconds or milliseconds, or RFC 3339 text.
    Absolute(String),
    /// Seconds from now.
    Seconds(f64),
}

/// Raw timing material; [`super::timing`] validates it.
#[derive(Debug, Clone, Default)]
pub(crate) struct TimingInputs {
    pub retry_after_ms: Option<String>,
    pub retry_after: Option<String>,
    pub reset_headers: Vec<ResetHeader>,
    pub unified_resets: Vec<String>,
    pub retry_info: Vec<String>,
    pub body: Vec<BodyHint>,
}

/// Everything the rules look at, extracted once per envelope.
#[derive(Debug, Default)]
pub(crate) struct Facts {
    pub hay: [String; 3],
    /// The haystacks, ASCII-lowercased (for literal searches).
    pub lower: [Vec<u8>; 3],
    pub segments: Vec<Segment>,
    pub statuses: Vec<(u16, usize)>,
    pub tokens: Vec<(String, usize)>,
    pub quota_ids: Vec<String>,
    pub acp_codes: Vec<(i64, usize)>,
    pub stop_reasons: Vec<(String, usize)>,
    pub exit_codes: Vec<(i64, usize)>,
    pub signals: Vec<(String, usize)>,
    pub no_response: Option<usize>,
    pub tool_failed: Option<usize>,
    pub timing: TimingInputs,
    /// The stream line being read while extracting (see
    /// [`Segment::line`]).
    pub(crate) line: u32,
}

/// Bits for the kinds of facts an envelope has, so rules that need a kind
/// that is absent are skipped at once.
pub(crate) mod kind {
    pub const STATUS: u16 = 1;
    pub const TOKEN: u16 = 1 << 1;
    pub const QUOTA: u16 = 1 << 2;
    pub const ACP: u16 = 1 << 3;
    pub const EXIT: u16 = 1 << 4;
    pub const SIGNAL: u16 = 1 << 5;
    pub const STOP: u16 = 1 << 6;
    pub const NO_RESPONSE: u16 = 1 << 7;
    pub const TOOL_FAILED: u16 = 1 << 8;
    /// How many kinds there are.
    pub const COUNT: usize = 9;
}

impl Facts {
    /// Which kinds of facts are present (bits of [`kind`]).
    pub(crate) fn kinds(&self) -> u16 {
        use kind::*;
        let mut k = 0;
        let mut set = |present: bool, bit: u16| {
            if present {
                k |= bit;
            }
        };
        set(!self.statuses.is_empty(), STATUS);
        set(!self.tokens.is_empty(), TOKEN);
        set(!self.quota_ids.is_empty(), QUOTA);
        set(!self.acp_codes.is_empty(), ACP);
        set(!self.exit_codes.is_empty(), EXIT);
        set(!self.signals.is_empty(), SIGNAL);
        set(!self.stop_reasons.is_empty(), STOP);
        set(self.no_response.is_some(), NO_RESPONSE);
        set(self.tool_failed.is_some(), TOOL_FAILED);
        k
    }

    /// The item a haystack position belongs to.
    pub(crate) fn item_at(&self, source: Source, pos: usize) -> Option<usize> {
        self.segment_at(source, pos).map(|s| s.item)
    }

    pub(crate) fn segment_at(&self, source: Source, pos: usize) -> Option<&Segment> {
        self.segments
            .iter()
            .find(|s| s.source == source && s.start <= pos && pos <= s.end)
    }

    pub(crate) fn segment_text(&self, s: &Segment) -> &str {
        &self.hay[s.source as usize][s.start..s.end]
    }

    /// [`Self::segment_text`], ASCII-lowercased.
    pub(crate) fn segment_lower(&self, s: &Segment) -> &[u8] {
        &self.lower[s.source as usize][s.start..s.end]
    }
}
