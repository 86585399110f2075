//! Classification: turn what an agent adapter saw about one failure into a
//! stable semantic code and class, with validated timing and nothing secret.
//! This is the only crate that reads provider names or provider text;
//! everything downstream branches on [`Classification`] alone.
//!
//! - [`evidence`]: the envelope types and their lenient, bounded readers
//!   (in `domain`, shared with the runner and adapters).
//! - `extract`: per-item extractors that turn raw items into normalised
//!   `facts` (statuses, error identifiers, ACP codes, exits, text
//!   haystacks: the vocabulary the matcher, timing and provenance read);
//!   `json`: the light, borrowing JSON tree they read bodies into.
//! - [`provenance`]: which parts of an envelope are evidence at all, as the
//!   `mask` extraction obeys.
//! - [`catalogue`]: the versioned data catalogue (`catalogue/` at the
//!   repository root): code registry, rules in priority tiers, timing
//!   profiles. `catalogue::format` reads the files, `catalogue::compile`
//!   validates and compiles them (every problem with its file, entry and
//!   field), `catalogue::verdict` decides between matching rules.
//! - `matcher`: the hot path, fenced off — rule bits, the literal
//!   prefilter, text hits, structured conditions and word-at-a-time scans.
//! - [`timing`]: retry-after, reset headers, RetryInfo, prose durations,
//!   epochs and zoned clock times, validated against `occurred_at`.
//! - [`sanitize`]: redaction and the bounded `safe_excerpt`;
//!   [`skeleton`]: an envelope's sanitised shape, kept in the unknown log,
//!   and the fixtures and reclassification grown from it.
//! - [`classifier`]: [`classify`], the pure function tying them together;
//!   `explain`: its trace, built only when asked for ([`classify_with`]).
//! - [`fixtures`]: the fixture format and runner; [`rounds`]: recorded
//!   rounds and their floors; [`score`]: figures and
//!   gates over labelled corpora; [`cli`]: the CLI commands.

pub mod catalogue;
pub mod classifier;
pub mod cli;
mod explain;
mod extract;
mod facts;
pub mod fixtures;
mod json;
pub mod lofo;
mod mask;
mod matcher;
pub mod provenance;
pub mod rounds;
pub mod sanitize;
pub mod score;
pub mod skeleton;
pub mod timing;

pub use catalogue::{
    Catalogue, CatalogueError, CatalogueFiles, CatalogueSpec, CatalogueSummary, CodeSummary,
    Confidence, Explanation, RuleMatch, Scope,
};
pub use classifier::{
    classify, classify_at, classify_json, classify_json_at, classify_line, classify_line_with,
    classify_with, Classification, RULE_CONFLICT, RULE_UNMATCHED,
};
/// The envelope is the shared vocabulary's (`domain::evidence`): adapters
/// write it, this crate reads it.
pub use domain::evidence;
pub use evidence::{Evidence, EvidenceError, Item, Phase};
