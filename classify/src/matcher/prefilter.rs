//! A literal prefilter for the catalogue's text patterns.
//!
//! One big `RegexSet` over ~200 case-insensitive patterns makes the lazy DFA
//! build new states for almost every haystack (each mix of half-matched
//! patterns is a state), which dominated classification time. Instead, every
//! pattern is reduced to a few literals of which any match must contain one
//! (read from the pattern's syntax tree), one Aho-Corasick pass finds where
//! those literals occur, and only those patterns are checked, only in those
//! segments. Patterns without a usable literal always run. The automaton is
//! case-sensitive over lower-cased literals and runs on an ASCII-lower-cased
//! copy of the haystack: smaller and faster than an ASCII-case-insensitive one.
//!
//! Most patterns are alternations of phrases with a few choices in them
//! (`\bconnection (?:was )?reset\b|socket hang ?up|…`): finite sets of
//! strings, perhaps between word boundaries. Such a branch is expanded into
//! its strings, which become the prefilter's literals, and a literal hit *is*
//! a match once the boundaries are checked: the regex does not run at all. It
//! runs only when no literal matched and a branch with real regex syntax
//! (`[^\n]*`, `\d+`, `\s*`) may match: such a branch is cut at that syntax
//! into runs that do expand (`you(?: have|'ve) (?:exceeded|reached) your`
//! … `[^\n]*` … `(?:limit|quota)`), and every run must occur in the
//! segment before the regex is worth running. Only the rarest run's strings
//! go in the automaton; the others, often common words (`in `, `your `,
//! `error`) that would make hits in most segments, are searched for only in
//! a segment where it hit. For a pattern made only of such
//! strings, where its last match starts is also computed from the hits (the
//! excerpt is centred there) the way the regex's leftmost-first,
//! non-overlapping `find_iter` would report it: strings are kept in the
//! regex's order of preference.

use aho_corasick::automaton::Automaton;
use aho_corasick::{dfa::DFA, AhoCorasick, Anchored, MatchKind};
use memchr::memmem::Finder;
use regex::bytes::Regex;
use regex_syntax::hir::{Class, Hir, HirKind, Look};
use regex_syntax::ParserBuilder;
use std::collections::HashMap;

/// Shortest literal worth prefiltering on; shorter ones match almost anywhere.
const MIN_LITERAL: usize = 3;
/// Most literals one pattern may contribute.
const MAX_LITERALS: usize = 64;
/// Most strings one pattern may be expanded into.
const MAX_EXPANSION: usize = 512;

/// Substrings at least one of which every match of `pattern` contains
/// (compared ASCII case-insensitively), or `None` when there is no useful set.
#[cfg(test)]
pub(crate) fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    plan(pattern).map(|p| p.literals.into_iter().map(|(l, _)| l).collect())
}

/// How one pattern is prefiltered and confirmed.
struct Plan {
    /// Prefilter literals, each with the branch it belongs to (for a regex
    /// branch, the literals of its rarest run, see [`Branch::Regex`]).
    literals: Vec<(Vec<u8>, usize)>,
    /// The pattern's alternatives, in the regex's order of preference: its
    /// strings where a top-level alternative expands into strings, else the
    /// alternative itself.
    branches: Vec<Branch>,
    /// Per regex branch with more than one run: the runs left out of the
    /// literals (see [`Prefilter::rest`]).
    rest: Vec<(u32, Vec<Vec<Vec<u8>>>)>,
}

/// How a hit on a branch's literal is confirmed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Branch {
    /// The branch is one string (its literal), perhaps with word
    /// boundaries at its ends: a hit is a match when those hold.
    Literal { word_start: bool, word_end: bool },
    /// Anything else: the pattern's regex decides, once the branch's rarest
    /// run (a set of literals a match must contain one of) has a hit and
    /// each of its other runs ([`Prefilter::rest`]) occurs in the segment.
    Regex,
}

/// Most literal sets a regex branch is checked on.
const MAX_PARTS: usize = 32;

fn plan(pattern: &str) -> Option<Plan> {
    let hir = ParserBuilder::new()
        .unicode(false)
        .utf8(false)
        .multi_line(true)
        .case_insensitive(false)
        .build()
        .parse(pattern)
        .ok()?;
    // The tree was read case-sensitively while the regex is case-insensitive;
    // that is the same thing modulo ASCII case only without inline flags.
    let flags = pattern
        .match_indices("(?")
        .any(|(i, _)| pattern.as_bytes().get(i + 2) != Some(&b':'));
    let mut literals = Vec::new();
    let mut required_count = 0;
    let mut branches = Vec::new();
    let mut rest = Vec::new();
    for alt in top_level(&hir) {
        let strings = if flags { None } else { expand(&alt) };
        match strings {
            Some(strings) if branches.len() + strings.len() <= MAX_EXPANSION => {
                for s in strings {
                    literals.push((s.bytes, branches.len()));
                    branches.push(Branch::Literal {
                        word_start: s.word_start,
                        word_end: s.word_end,
                    });
                }
            }
            _ => {
                let parts = match parts(&alt) {
                    Some(parts) => parts,
                    None => {
                        let lits = required(&alt)?;
                        required_count += lits.len();
                        if required_count > MAX_LITERALS {
                            return None;
                        }
                        vec![lits]
                    }
                };
                // Only the rarest part goes in the automaton: the common
                // words of the others (`in `, `your `, `error`) would make
                // hits in most segments. The others are searched for only
                // in a segment where it hit, before the regex runs.
                let b = branches.len();
                let mut parts = parts;
                let rarest = (0..parts.len())
                    .max_by_key(|&k| rarity(&parts[k]))
                    .unwrap_or(0);
                let kept = parts.remove(rarest);
                literals.extend(kept.into_iter().map(|l| (l, b)));
                // Rarest first: the search stops at the first part missing.
                parts.sort_by_key(|p| std::cmp::Reverse(rarity(p)));
                if !parts.is_empty() {
                    rest.push((b as u32, parts));
                }
                branches.push(Branch::Regex);
            }
        }
    }
    if literals.is_empty() || literals.iter().any(|(l, _)| l.len() < MIN_LITERAL) {
        return None;
    }
    Some(Plan {
        literals,
        branches,
        rest,
    })
}

/// Puts in the automaton, for each regex branch of several runs, the run
/// whose most shared literal is shared least (`shared`: per lower-cased
/// literal, how many of the catalogue's patterns use it), then as [`plan`]
/// chose. A literal many patterns use (`error`, `failed`) is common in text
/// too, and the run [`plan`] picks by length alone is often such a word
/// list where another run names a few services or commands.
fn prefer_unshared(plan: &mut Plan, shared: &HashMap<Vec<u8>, usize>) {
    let most_shared = |run: &[Vec<u8>]| {
        run.iter()
            .map(|l| shared.get(&l.to_ascii_lowercase()).copied().unwrap_or(0))
            .max()
            .unwrap_or(0)
    };
    let key = |run: &[Vec<u8>]| (std::cmp::Reverse(most_shared(run)), rarity(run));
    for (b, runs) in &mut plan.rest {
        let b = *b as usize;
        let kept: Vec<Vec<u8>> = plan
            .literals
            .iter()
            .filter(|(_, lb)| *lb == b)
            .map(|(l, _)| l.clone())
            .collect();
        let Some(best) = (0..runs.len()).max_by_key(|&k| key(&runs[k])) else {
            continue;
        };
        if key(&runs[best]) <= key(&kept) {
            continue;
        }
        let Some(at) = plan.literals.iter().position(|(_, lb)| *lb == b) else {
            continue;
        };
        let new = runs.remove(best);
        plan.literals.retain(|(_, lb)| *lb != b);
        plan.literals
            .splice(at..at, new.into_iter().map(|l| (l, b)));
        runs.push(kept);
        runs.sort_by_key(|r| std::cmp::Reverse(rarity(r)));
    }
}

/// For a branch that does not expand: the runs of its concatenation that do
/// (cut at the parts that do not), as literal sets every match contains one
/// of each of. A part that does not expand gives a set too when it holds
/// literals every match of it contains one of (`(?:is not defined|\S+ is
/// not a function)`), and so does a run with too many strings to expand
/// (a long list of names): otherwise a branch's only set may be a common
/// word (`error`) that makes its regex run in most segments. Word boundaries
/// at a run's ends are ignored (the literals only need to be necessary).
/// `None` when no run gives a useful set.
fn parts(h: &Hir) -> Option<Vec<Vec<Vec<u8>>>> {
    let subs = match h.kind() {
        HirKind::Concat(subs) => subs.as_slice(),
        _ => std::slice::from_ref(h),
    };
    let mut out = Vec::new();
    let mut total = 0;
    let mut keep = |lits: Vec<Vec<u8>>| {
        if !lits.is_empty() && out.len() < MAX_PARTS && total + lits.len() <= MAX_EXPANSION {
            total += lits.len();
            out.push(lits);
        }
    };
    let mut run: Vec<Hir> = Vec::new();
    let flush = |run: &mut Vec<Hir>, keep: &mut dyn FnMut(Vec<Vec<u8>>)| {
        if run.is_empty() {
            return;
        }
        let run = Hir::concat(std::mem::take(run));
        let Some(strings) = expand_parts(&run) else {
            if let Some(lits) = required_set(&run) {
                keep(lits);
            }
            return;
        };
        let mut lits = Vec::with_capacity(strings.len());
        for (bytes, bounds) in strings {
            if bytes.len() < MIN_LITERAL {
                return;
            }
            let inner_ok = bounds
                .iter()
                .filter(|&&at| at > 0 && at < bytes.len())
                .all(|&at| is_word(bytes[at - 1]) != is_word(bytes[at]));
            if inner_ok && !lits.contains(&bytes) {
                lits.push(bytes);
            }
        }
        keep(lits);
    };
    for s in subs {
        if expand_parts(s).is_some() {
            run.push(s.clone());
        } else {
            flush(&mut run, &mut keep);
            if let Some(lits) = required_set(s) {
                keep(lits);
            }
        }
    }
    flush(&mut run, &mut keep);
    (!out.is_empty()).then_some(out)
}

/// [`required`]'s literals when none is too short to be worth searching for.
fn required_set(h: &Hir) -> Option<Vec<Vec<u8>>> {
    required(h).filter(|lits| lits.iter().all(|l| l.len() >= MIN_LITERAL))
}

/// The pattern's top-level alternatives, in order. regex-syntax lifts a
/// prefix common to every alternative out of the alternation (`\ba|\bb`
/// reads as `\b(?:a|b)`); it is put back, which keeps the language and the
/// order of preference.
fn top_level(h: &Hir) -> Vec<Hir> {
    match h.kind() {
        HirKind::Alternation(alts) => alts.clone(),
        HirKind::Concat(subs) => {
            let fixed = |h: &Hir| matches!(h.kind(), HirKind::Look(_) | HirKind::Literal(_));
            let mut alts = subs
                .iter()
                .enumerate()
                .filter(|(_, s)| matches!(s.kind(), HirKind::Alternation(_)));
            match (alts.next(), alts.next()) {
                (Some((k, alt)), None)
                    if subs.iter().enumerate().all(|(j, s)| j == k || fixed(s)) =>
                {
                    let HirKind::Alternation(choices) = alt.kind() else {
                        return vec![h.clone()];
                    };
                    choices
                        .iter()
                        .map(|c| {
                            let mut parts = subs.clone();
                            parts[k] = c.clone();
                            Hir::concat(parts)
                        })
                        .collect()
                }
                _ => vec![h.clone()],
            }
        }
        _ => vec![h.clone()],
    }
}

/// One string a pattern branch matches, with the word boundaries asked for
/// at its ends.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Expanded {
    bytes: Vec<u8>,
    word_start: bool,
    word_end: bool,
}

/// The strings `h` matches, in the regex's order of preference, when it is a
/// small finite set of ASCII strings of at least [`MIN_LITERAL`] bytes with
/// ASCII word boundaries (`\b`) at most: literals, alternations, optional
/// parts and small byte classes. A `\b` inside a string is decided from the
/// string's own bytes (a string where it fails is dropped).
fn expand(h: &Hir) -> Option<Vec<Expanded>> {
    let parts = expand_parts(h)?;
    let mut out = Vec::with_capacity(parts.len());
    for (bytes, bounds) in parts {
        if bytes.len() < MIN_LITERAL || !bytes.is_ascii() {
            return None;
        }
        let (mut word_start, mut word_end) = (false, false);
        let mut holds = true;
        for at in bounds {
            if at == 0 {
                word_start = true;
            } else if at == bytes.len() {
                word_end = true;
            } else {
                holds &= is_word(bytes[at - 1]) != is_word(bytes[at]);
            }
        }
        if holds {
            out.push(Expanded {
                bytes,
                word_start,
                word_end,
            });
        }
    }
    Some(out)
}

/// Strings as (bytes, offsets of `\b` assertions), in preference order.
type Parts = Vec<(Vec<u8>, Vec<usize>)>;

fn expand_parts(h: &Hir) -> Option<Parts> {
    Some(match h.kind() {
        HirKind::Empty => vec![(Vec::new(), Vec::new())],
        HirKind::Literal(l) => vec![(l.0.to_vec(), Vec::new())],
        HirKind::Look(Look::WordAscii) => vec![(Vec::new(), vec![0])],
        HirKind::Capture(c) => expand_parts(&c.sub)?,
        // One byte of a few: only one can match at a place, so their order
        // does not matter.
        HirKind::Class(Class::Bytes(c)) => {
            let bytes: Vec<u8> = c.iter().flat_map(|r| r.start()..=r.end()).take(5).collect();
            if bytes.len() > 4 {
                return None;
            }
            bytes.into_iter().map(|b| (vec![b], Vec::new())).collect()
        }
        // The same for characters (the parser makes `\xe2\x94\x82|\xe2\x94\x94`
        // a class of two): no encoding is a prefix of another.
        HirKind::Class(Class::Unicode(c)) => {
            let chars: Vec<char> = c.iter().flat_map(|r| r.start()..=r.end()).take(5).collect();
            if chars.len() > 4 {
                return None;
            }
            chars
                .into_iter()
                .map(|ch| (ch.to_string().into_bytes(), Vec::new()))
                .collect()
        }
        // `x?` prefers `x`; `x??` prefers nothing.
        HirKind::Repetition(r) if r.min == 0 && r.max == Some(1) => {
            let sub = expand_parts(&r.sub)?;
            let none = (Vec::new(), Vec::new());
            if r.greedy {
                sub.into_iter().chain([none]).collect()
            } else {
                [none].into_iter().chain(sub).collect()
            }
        }
        HirKind::Repetition(r) if r.min == 1 && r.max == Some(1) => expand_parts(&r.sub)?,
        HirKind::Alternation(alts) => {
            let mut out = Vec::new();
            for a in alts {
                out.extend(expand_parts(a)?);
                if out.len() > MAX_EXPANSION {
                    return None;
                }
            }
            out
        }
        // The choices of earlier parts vary slowest: the regex tries them
        // first.
        HirKind::Concat(subs) => {
            let mut out: Parts = vec![(Vec::new(), Vec::new())];
            for s in subs {
                let next = expand_parts(s)?;
                if out.len() * next.len() > MAX_EXPANSION {
                    return None;
                }
                out = out
                    .iter()
                    .flat_map(|(b, w)| {
                        next.iter().map(move |(nb, nw)| {
                            let mut bytes = b.clone();
                            bytes.extend_from_slice(nb);
                            let words = w.iter().copied().chain(nw.iter().map(|x| x + b.len()));
                            (bytes, words.collect())
                        })
                    })
                    .collect();
            }
            out
        }
        _ => return None,
    })
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// A disjunction of required literals for `h`.
fn required(h: &Hir) -> Option<Vec<Vec<u8>>> {
    match h.kind() {
        HirKind::Literal(l) => Some(vec![l.0.to_vec()]),
        HirKind::Capture(c) => required(&c.sub),
        HirKind::Repetition(r) if r.min >= 1 => required(&r.sub),
        HirKind::Alternation(alts) => {
            let mut out = Vec::new();
            for a in alts {
                out.extend(required(a)?);
                if out.len() > MAX_LITERALS {
                    return None;
                }
            }
            Some(out)
        }
        HirKind::Concat(subs) => {
            let mut best: Option<Vec<Vec<u8>>> = None;
            let mut run: Vec<u8> = Vec::new();
            for s in subs {
                match s.kind() {
                    HirKind::Literal(l) => run.extend_from_slice(&l.0),
                    // Zero-width: the literals around it stay contiguous.
                    HirKind::Look(_) => {}
                    _ => {
                        if !run.is_empty() {
                            keep_better(&mut best, vec![std::mem::take(&mut run)]);
                        }
                        if let Some(c) = required(s) {
                            keep_better(&mut best, c);
                        }
                    }
                }
            }
            if !run.is_empty() {
                keep_better(&mut best, vec![run]);
            }
            best
        }
        _ => None,
    }
}

/// Prefers the candidate whose shortest literal is longest, then fewer literals.
fn keep_better(best: &mut Option<Vec<Vec<u8>>>, cand: Vec<Vec<u8>>) {
    if best.as_ref().is_none_or(|b| rarity(&cand) > rarity(b)) {
        *best = Some(cand);
    }
}

/// How rarely a set of literals is likely to occur: its shortest literal's
/// length, then fewer literals.
fn rarity(v: &[Vec<u8>]) -> (usize, usize) {
    (
        v.iter().map(Vec::len).min().unwrap_or(0),
        usize::MAX - v.len(),
    )
}

/// One occurrence of a pattern's literal inside one segment. Sorted, hits
/// group by pattern, then segment, then run in the order a leftmost-first
/// search meets them (start, then branch preference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Hit {
    pub pattern: u32,
    pub segment: u32,
    pub start: usize,
    pub branch: u32,
    pub end: usize,
}

/// Every pattern's literals in one automaton.
#[derive(Debug)]
struct Literals {
    dfa: DFA,
    /// The unanchored start state.
    start: aho_corasick::automaton::StateID,
}

/// The patterns of one haystack, with their prefilter.
#[derive(Debug, Default)]
pub(crate) struct Prefilter {
    dfa: Option<Literals>,
    /// Per automaton literal (unique): the `(pattern, branch)` using it.
    uses: Vec<Vec<(u32, u32)>>,
    /// Per pattern: its branches, or `None` when it has no usable literal
    /// and runs on every segment.
    branches: Vec<Option<Vec<Branch>>>,
    /// Patterns without a usable literal.
    always: Vec<usize>,
    /// Per pattern: for each regex branch of several parts, the parts left
    /// out of the automaton (lower-cased literal sets), all of which must
    /// occur in a segment where the branch's kept part hit. Searchers built
    /// once: building one costs more than the search.
    rest: Vec<Vec<(u32, Vec<Run>)>>,
}

/// A set of literals, searched for whether any of them occurs: one
/// left-out run of a regex branch, or the literals a `[provenance]` line
/// pattern requires ([`Run::required_by`]).
#[derive(Debug)]
pub(crate) enum Run {
    /// A few literals, each looked for on its own.
    Few(Vec<Finder<'static>>),
    /// Many (a word list): one pass of an automaton over them all rather
    /// than one search each.
    Many(AhoCorasick),
}

/// From this many literals a run is searched with one automaton.
const MANY: usize = 4;

impl Run {
    /// `lits` lower-cased. A literal with another of the run inside it is
    /// left out: where it occurs, so does the other.
    fn new(mut lits: Vec<Vec<u8>>) -> Run {
        lits.sort_by_key(Vec::len);
        lits.dedup();
        let mut kept: Vec<Vec<u8>> = Vec::with_capacity(lits.len());
        for l in lits {
            if !kept.iter().any(|k| memchr::memmem::find(&l, k).is_some()) {
                kept.push(l);
            }
        }
        if kept.len() >= MANY {
            // Leftmost-first, which may use a packed (Teddy) search;
            // whether some literal occurs does not depend on which match
            // is reported.
            if let Ok(ac) = AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostFirst)
                .build(&kept)
            {
                return Run::Many(ac);
            }
        }
        Run::Few(kept.iter().map(|l| Finder::new(l).into_owned()).collect())
    }

    /// Literals one of which every match of `pattern` contains (each
    /// branch's strings, or the rarest literal set of a branch with regex
    /// syntax), as a run; `None` when some branch has no usable set.
    pub(crate) fn required_by(pattern: &str) -> Option<Run> {
        let plan = plan(pattern)?;
        Some(Run::new(
            plan.literals
                .into_iter()
                .map(|(l, _)| l.to_ascii_lowercase())
                .collect(),
        ))
    }

    /// Whether one of the run's literals occurs in `lower`.
    pub(crate) fn occurs(&self, lower: &[u8]) -> bool {
        match self {
            Run::Few(finders) => finders.iter().any(|f| f.find(lower).is_some()),
            Run::Many(ac) => ac.is_match(lower),
        }
    }
}

impl Prefilter {
    /// `patterns[i]` is the i-th pattern's text.
    pub(crate) fn build(patterns: &[&str]) -> Result<Prefilter, String> {
        let mut lits: Vec<Vec<u8>> = Vec::new();
        let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
        let mut uses: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut branches = Vec::with_capacity(patterns.len());
        let mut always = Vec::new();
        let mut rest = Vec::with_capacity(patterns.len());
        let mut plans: Vec<Option<Plan>> = patterns.iter().map(|p| plan(p)).collect();
        // How many patterns use each literal, in any branch or run.
        let mut shared: HashMap<Vec<u8>, usize> = HashMap::new();
        for plan in plans.iter().flatten() {
            let mut mine: Vec<Vec<u8>> = plan
                .literals
                .iter()
                .map(|(l, _)| l)
                .chain(plan.rest.iter().flat_map(|(_, runs)| runs.iter().flatten()))
                .map(|l| l.to_ascii_lowercase())
                .collect();
            mine.sort_unstable();
            mine.dedup();
            for l in mine {
                *shared.entry(l).or_insert(0) += 1;
            }
        }
        for plan in plans.iter_mut().flatten() {
            prefer_unshared(plan, &shared);
        }
        for (i, plan) in plans.into_iter().enumerate() {
            let Some(plan) = plan else {
                always.push(i);
                branches.push(None);
                rest.push(Vec::new());
                continue;
            };
            rest.push(
                plan.rest
                    .into_iter()
                    .map(|(b, parts)| {
                        let run = |lits: Vec<Vec<u8>>| {
                            Run::new(lits.iter().map(|l| l.to_ascii_lowercase()).collect())
                        };
                        (b, parts.into_iter().map(run).collect())
                    })
                    .collect(),
            );
            for (lit, b) in plan.literals {
                let lit = lit.to_ascii_lowercase();
                let k = *index.entry(lit.clone()).or_insert_with(|| {
                    lits.push(lit);
                    uses.push(Vec::new());
                    lits.len() - 1
                });
                let u = (i as u32, b as u32);
                if !uses[k].contains(&u) {
                    uses[k].push(u);
                }
            }
            branches.push(Some(plan.branches));
        }
        let dfa = if lits.is_empty() {
            None
        } else {
            // A full DFA (~1.4 MB, built once): despite its size, 16% fewer
            // instructions per envelope than the contiguous NFA (100 KB) and
            // 13% more envelopes per second (measured with the classifier
            // benchmark, docs/benchmarks.md).
            let dfa = aho_corasick::dfa::Builder::new()
                .match_kind(MatchKind::Standard)
                // No prefilter: `hits` steps every byte itself, and without
                // one the start state is not special, so only match states
                // leave the inner loop.
                .prefilter(false)
                .build(&lits)
                .map_err(|e| e.to_string())?;
            let start = dfa.start_state(Anchored::No).map_err(|e| e.to_string())?;
            Some(Literals { dfa, start })
        };
        Ok(Prefilter {
            dfa,
            uses,
            branches,
            always,
            rest,
        })
    }

    /// Patterns without a usable literal (they may match in any segment).
    pub(crate) fn always(&self) -> &[usize] {
        &self.always
    }

    pub(crate) fn is_always(&self, pattern: usize) -> bool {
        self.branches[pattern].is_none()
    }

    /// [`Self::hits_found`], sorted.
    #[cfg(test)]
    pub(crate) fn hits(&self, lower: &[u8], segments: &[(usize, usize)]) -> Vec<Hit> {
        let mut hits = self.hits_found(lower, segments);
        hits.sort_unstable();
        hits
    }

    /// Every literal occurrence inside a segment, in the order found
    /// (segment, then end), for the haystack whose ASCII-lowercased bytes
    /// are `lower`; `segments` are its segments' byte ranges, in order. An
    /// occurrence that runs past its segment is dropped: patterns match
    /// within one segment. Sorted, hits group by pattern (see [`Hit`]).
    pub(crate) fn hits_found(&self, lower: &[u8], segments: &[(usize, usize)]) -> Vec<Hit> {
        let Some(Literals { dfa, start }) = &self.dfa else {
            return Vec::new();
        };
        // Room for the hits of a typical envelope without regrowing.
        let mut out = Vec::with_capacity(32);
        // Each segment is searched on its own from the start state, so an
        // occurrence that would run past its segment is never seen. The DFA
        // is stepped here rather than through `find_overlapping_iter`,
        // whose per-match bookkeeping cost more than the search itself.
        for (seg, &(seg_start, seg_end)) in segments.iter().enumerate() {
            let Some(bytes) = lower.get(seg_start..seg_end) else {
                continue;
            };
            let mut sid = *start;
            for (at, &byte) in bytes.iter().enumerate() {
                sid = dfa.next_state(Anchored::No, sid, byte);
                // Special states are the dead, match and start states; an
                // unanchored search never dies.
                if !dfa.is_special(sid) || !dfa.is_match(sid) {
                    continue;
                }
                let end = seg_start + at + 1;
                for k in 0..dfa.match_len(sid) {
                    let literal = dfa.match_pattern(sid, k);
                    let start = end - dfa.pattern_len(literal);
                    for &(pattern, branch) in &self.uses[literal.as_usize()] {
                        out.push(Hit {
                            pattern,
                            segment: seg as u32,
                            start,
                            branch,
                            end,
                        });
                    }
                }
            }
        }
        out
    }

    /// Whether `pattern` matches in a segment, given its hits there (all of
    /// one pattern and segment, at least one). `text` is the segment, which
    /// starts at `offset` in the haystack, and `lower` it ASCII-lowercased.
    pub(crate) fn confirm(
        &self,
        hits: &[Hit],
        text: &[u8],
        lower: &[u8],
        offset: usize,
        re: &Regex,
    ) -> bool {
        let Some(branches) = hits
            .first()
            .and_then(|h| self.branches[h.pattern as usize].as_ref())
        else {
            return re.is_match(text);
        };
        let literal = hits.iter().any(|h| match branches[h.branch as usize] {
            Branch::Literal {
                word_start,
                word_end,
            } => literal_match(text, h.start - offset, h.end - offset, word_start, word_end),
            Branch::Regex => false,
        });
        // Without a literal match, the regex can only match through a branch
        // with regex syntax, which needs a hit on its rarest run.
        literal || (self.regex_branch_possible(branches, hits, lower) && re.is_match(text))
    }

    /// Where a pattern's last match in a segment is, as `(start, end)` within
    /// `text`, when no branch with regex syntax can match there (else `None`:
    /// run the regex): then the matches are the literal branches' hits, and
    /// `find_iter` reports them so: the search takes the earliest start at or
    /// after the end of the previous match and, there, the first branch that
    /// matches.
    pub(crate) fn last_literal_match(
        &self,
        hits: &[Hit],
        text: &[u8],
        lower: &[u8],
        offset: usize,
    ) -> Option<(usize, usize)> {
        let branches = self.branches[hits.first()?.pattern as usize].as_ref()?;
        if self.regex_branch_possible(branches, hits, lower) {
            return None;
        }
        let mut at = 0;
        let mut last = None;
        for h in hits {
            let (s, e) = (h.start - offset, h.end - offset);
            if s < at {
                continue;
            }
            if let Branch::Literal {
                word_start,
                word_end,
            } = branches[h.branch as usize]
            {
                if literal_match(text, s, e, word_start, word_end) {
                    last = Some((s, e));
                    at = e;
                }
            }
        }
        last
    }
}

impl Prefilter {
    /// Whether some branch with regex syntax has a hit among `hits` (one
    /// pattern's hits in one segment) and its other runs occur in the
    /// segment (`lower`, ASCII-lowercased).
    fn regex_branch_possible(&self, branches: &[Branch], hits: &[Hit], lower: &[u8]) -> bool {
        let Some(first) = hits.first() else {
            return false;
        };
        let rest = &self.rest[first.pattern as usize];
        // Whether every left-out run of `branch` occurs in the segment.
        let others_occur = |branch: u32| {
            rest.iter()
                .find(|(b, _)| *b == branch)
                .is_none_or(|(_, runs)| runs.iter().all(|run| run.occurs(lower)))
        };
        // Regex branches already found wanting (the first few; past them a
        // branch is looked at again on each hit, which answers the same).
        let mut tried = [u32::MAX; 4];
        for h in hits {
            if branches[h.branch as usize] != Branch::Regex || tried.contains(&h.branch) {
                continue;
            }
            if others_occur(h.branch) {
                return true;
            }
            if let Some(slot) = tried.iter_mut().find(|b| **b == u32::MAX) {
                *slot = h.branch;
            }
        }
        false
    }
}

/// Whether `text[start..end]` (a literal occurrence) has the ASCII word
/// boundaries `\b` asks for, as the regex sees them within `text`.
fn literal_match(text: &[u8], start: usize, end: usize, word_start: bool, word_end: bool) -> bool {
    (!word_start || word_boundary(text, start)) && (!word_end || word_boundary(text, end))
}

fn word_boundary(text: &[u8], at: usize) -> bool {
    let before = at > 0 && is_word(text[at - 1]);
    let after = at < text.len() && is_word(text[at]);
    before != after
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matcher::build_regex;

    fn lits(p: &str) -> Option<Vec<String>> {
        required_literals(p).map(|v| {
            v.into_iter()
                .map(|l| String::from_utf8(l).unwrap())
                .collect()
        })
    }

    #[test]
    fn literals_are_required_substrings() {
        assert_eq!(
            lits(r"\bprompt is too long\b"),
            Some(vec!["prompt is too long".into()])
        );
        // The run after the class expands: a match holds one of its strings.
        assert_eq!(
            lits(r"(?:^|[^/\w.-])rate[- ]?limit(?:s|ed)?\b|\btoo many requests\b"),
            Some(
                [
                    "rate limits",
                    "rate limited",
                    "rate limit",
                    "rate-limits",
                    "rate-limited",
                    "rate-limit",
                    "ratelimits",
                    "ratelimited",
                    "ratelimit",
                    "too many requests"
                ]
                .map(String::from)
                .to_vec()
            )
        );
        // Without such a run, the best required literals.
        assert_eq!(
            lits(r"(?:^|[^/\w.-])r[a-z]+limit\b"),
            Some(vec!["limit".into()])
        );
        assert_eq!(
            lits(r"^\s*provider returned error\s*$"),
            Some(vec!["provider returned error".into()])
        );
        assert_eq!(lits(r"\bmodel\b"), Some(vec!["model".into()]));
        assert_eq!(lits(r"[a-z]+"), None);
        assert_eq!(lits(r"ab|cdef"), None, "a two-byte literal is too short");
    }

    #[test]
    fn branches_are_classified() {
        let p = plan(r"\bfoo bar\b|baz qux|\bquux|corge\b|rate[- ]+limit|(?:grault)").unwrap();
        let lit = |word_start, word_end| Branch::Literal {
            word_start,
            word_end,
        };
        assert_eq!(
            p.branches,
            vec![
                lit(true, true),
                lit(false, false),
                lit(true, false),
                lit(false, true),
                Branch::Regex,
                lit(false, false),
            ]
        );
        // A regex branch's rarest part is its literals; the others are
        // searched for only where it hits.
        fn of(p: &Plan, b: usize) -> Vec<&[u8]> {
            p.literals
                .iter()
                .filter(|l| l.1 == b)
                .map(|l| l.0.as_slice())
                .collect()
        }
        assert_eq!(of(&p, 4), vec![b"limit"]);
        assert_eq!(p.rest, vec![(4, vec![vec![b"rate".to_vec()]])]);
        // A prefix common to every branch is put back into each.
        let p = plan(r"\bfoo (?:bar|baz)\b|\bqux\s+quux").unwrap();
        assert_eq!(
            p.branches,
            vec![lit(true, true), lit(true, true), Branch::Regex]
        );
        assert_eq!(of(&p, 2), vec![b"quux"]);
        assert_eq!(p.rest, vec![(2, vec![vec![b"qux".to_vec()]])]);
        // A part that does not expand still gives its required literals,
        // rarer than the common word before it.
        let p =
            plan(r"^\s*ERROR\s+(?:undefined is not an object|\S*\s*is not defined\s*$)").unwrap();
        assert_eq!(
            of(&p, 0),
            vec![&b"undefined is not an object"[..], b"is not defined"]
        );
        assert_eq!(p.rest, vec![(0, vec![vec![b"ERROR".to_vec()]])]);
        // Byte sequences the parser reads as a class of characters expand
        // into the characters' bytes (a branch of them is still a regex
        // branch: literal branches are ASCII).
        let p = plan(r"^\s*(?:\xe2\x94\x82|\xe2\x94\x94) ").unwrap();
        assert_eq!(p.branches, vec![Branch::Regex]);
        assert_eq!(
            of(&p, 0),
            vec!["\u{2502} ".as_bytes(), "\u{2514} ".as_bytes()]
        );
        // Length alone keeps `error`; a word many patterns share gives way
        // to the run of names.
        let mut p = plan(r"\b(?:tavily|kagi)\b[^\n]*\berror\b").unwrap();
        assert_eq!(of(&p, 0), vec![b"error"]);
        prefer_unshared(&mut p, &HashMap::from([(b"error".to_vec(), 5)]));
        assert_eq!(of(&p, 0), vec![&b"tavily"[..], b"kagi"]);
        assert_eq!(p.rest, vec![(0, vec![vec![b"error".to_vec()]])]);
        // Inline flags: the case-sensitive reading no longer stands for the regex.
        let p = plan(r"(?-i:\bfoo bar\b)|baz qux").unwrap();
        assert!(p.branches.iter().all(|b| *b == Branch::Regex));
    }

    #[test]
    fn branches_expand_in_order_of_preference() {
        let strings = |p: &str| {
            let hir = ParserBuilder::new()
                .unicode(false)
                .utf8(false)
                .build()
                .parse(p)
                .unwrap();
            expand(&hir).map(|v| {
                v.into_iter()
                    .map(|e| {
                        let s = String::from_utf8(e.bytes).unwrap();
                        match (e.word_start, e.word_end) {
                            (true, true) => format!("<{s}>"),
                            (true, false) => format!("<{s}"),
                            (false, true) => format!("{s}>"),
                            (false, false) => s,
                        }
                    })
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(
            strings(r"\bconnection (?:was )?reset\b"),
            Some(vec![
                "<connection was reset>".into(),
                "<connection reset>".into()
            ])
        );
        assert_eq!(
            strings(r"(?:ax|abx)(?:c|bcd)"),
            Some(vec![
                "axc".into(),
                "axbcd".into(),
                "abxc".into(),
                "abxbcd".into()
            ])
        );
        assert_eq!(
            strings(r"socket hang ??up"),
            Some(vec!["socket hangup".into(), "socket hang up".into()])
        );
        assert_eq!(
            strings(r"unauthori[sz]ed\b"),
            Some(vec!["unauthorised>".into(), "unauthorized>".into()])
        );
        // An inner `\b` is decided by the string itself.
        assert_eq!(
            strings(r"\bfoo\b(?:-bar|bar)"),
            Some(vec!["<foo-bar".into()])
        );
        assert_eq!(strings(r"foo\s*bar"), None);
        assert_eq!(strings(r"foo[^\n]*bar"), None);
        assert_eq!(strings(r"(?:ab|abc)d?"), None, "\"ab\" is too short");
    }

    #[test]
    fn hits_are_a_superset_and_stay_in_segments() {
        let pats = [r"rate[- ]limit", r"\d{3}", r"overloaded"];
        let p = Prefilter::build(&pats).unwrap();
        assert_eq!(p.always(), &[1]);
        let h = p.hits(b"rate-limit hit", &[(0, 14)]);
        assert_eq!(h.iter().map(|h| h.pattern).collect::<Vec<_>>(), vec![0]);
        let h = p.hits(b"overloaded", &[(0, 10)]);
        assert_eq!(h.iter().map(|h| h.pattern).collect::<Vec<_>>(), vec![2]);
        // "limit" split across two segments is no hit.
        assert!(p.hits(b"rate li\nmit", &[(0, 7), (8, 11)]).is_empty());
    }

    /// The literal shortcut agrees with the regex, including where the last
    /// match starts.
    #[test]
    fn literal_branches_agree_with_the_regex() {
        let pats = [
            r"\bfoo\b|foo bar|\bbar",
            r"aaa",
            r"\boverloaded\b|overload",
            r"abc|abcd\b|\bbcd",
            r"\bfoo\b|ba+r x|qux",
        ];
        let texts: &[&[u8]] = &[
            b"foo",
            b"xfoo bar",
            b"foobar",
            b"a foo_bar foo.",
            b"aaaaaaa",
            b"not overloaded_error overloaded",
            b"abcd abc bcd xbcd",
            b"OVERLOADED",
            b"baaar x foo qux",
            b"foo qux bar x",
            b"",
        ];
        let p = Prefilter::build(&pats).unwrap();
        for (i, pat) in pats.iter().enumerate() {
            let re = build_regex(pat).unwrap();
            for t in texts {
                let lower = t.to_ascii_lowercase();
                let hits: Vec<Hit> = p
                    .hits(&lower, &[(0, t.len())])
                    .into_iter()
                    .filter(|h| h.pattern == i as u32)
                    .collect();
                let want = re.is_match(t);
                let got = !hits.is_empty() && p.confirm(&hits, t, &lower, 0, &re);
                assert_eq!(got, want, "{pat} on {:?}", String::from_utf8_lossy(t));
                if want {
                    // Computed from the hits unless the regex branch may match.
                    let last = re.find_iter(t).last().map(|m| (m.start(), m.end()));
                    let got = p.last_literal_match(&hits, t, &lower, 0);
                    let regex_may = pat.contains("a+") && t.windows(3).any(|w| w == b"r x");
                    assert_eq!(got.is_none(), regex_may, "{pat}");
                    if got.is_some() {
                        assert_eq!(got, last, "{pat}");
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod agreement {
    //! The prefilter decides literal matches without the regex: for every
    //! text pattern of the builtin catalogue, it must decide exactly as the
    //! regex does, on texts made of the patterns' own words.
    use super::*;
    use crate::catalogue::Catalogue;
    use proptest::prelude::*;
    use proptest::sample::Index;
    use proptest::test_runner::{Config, TestCaseError, TestRunner};

    const SEPARATORS: &[&str] = &[
        " ", " ", " ", "", "", "_", "-", ".", "\n", "\n", "'", "0", "7", ": ", "/", "é", "⎿", "🙂",
    ];
    const EXTRAS: &[&str] = &[
        "529",
        "1234567890",
        "x",
        "\"gpt-4o\"",
        "/model",
        "·",
        "é",
        "⎿",
        "🙂",
        "(",
        ")",
        "a",
        "per",
        "the",
        "not",
    ];

    /// Strings texts are made of, for one pattern: the prefilter's literals
    /// for it and the words of its source.
    fn pieces(pattern: &str) -> Vec<Vec<u8>> {
        let mut out: Vec<Vec<u8>> = plan(pattern)
            .map(|p| p.literals.into_iter().map(|(l, _)| l).collect())
            .unwrap_or_default();
        for w in pattern.split(|c: char| !(c.is_ascii_alphanumeric() || c == '\'')) {
            if !w.is_empty() && !out.iter().any(|o| o == w.as_bytes()) {
                out.push(w.as_bytes().to_vec());
            }
        }
        if out.is_empty() {
            out.push(b"x".to_vec());
        }
        out
    }

    /// One piece of a text: what (`kind`), which (`a`, `b`), in which case,
    /// after which separator.
    type Piece = (u8, Index, Index, u8, usize);
    type Input = (Vec<Piece>, u64, (u8, Index), u32);

    /// A text of `own` pieces (some from `all` patterns', some cut or
    /// extra), in mixed case between separators, perhaps truncated at either
    /// end, with its segments.
    fn text(own: &[Vec<u8>], all: &[Vec<Vec<u8>>], input: &Input) -> (String, Vec<(usize, usize)>) {
        let (pieces, mut seed, (cut, at), splits) = input;
        let mut t: Vec<u8> = Vec::new();
        for &(kind, a, b, case, sep) in pieces {
            t.extend_from_slice(SEPARATORS[sep].as_bytes());
            let mut p = match kind {
                0..=4 => a.get(own).to_vec(),
                5 => b.get(a.get::<Vec<Vec<u8>>>(all)).to_vec(),
                6 => {
                    // A cut literal: near misses.
                    let l = a.get(own);
                    let k = b.index(l.len() + 1);
                    if k % 2 == 0 { &l[..k] } else { &l[k..] }.to_vec()
                }
                _ => a.get(EXTRAS).as_bytes().to_vec(),
            };
            match case {
                0 => {}
                1 => p.make_ascii_uppercase(),
                _ => {
                    for c in &mut p {
                        if seed & 1 == 1 {
                            *c = c.to_ascii_uppercase();
                        }
                        seed = seed.rotate_right(1);
                    }
                }
            }
            t.extend_from_slice(&p);
        }
        let mut t = String::from_utf8_lossy(&t).into_owned();
        let mut k = at.index(t.len() + 1);
        while !t.is_char_boundary(k) {
            k += 1;
        }
        match cut {
            0 => t.truncate(k),
            1 => t = t[k..].to_owned(),
            _ => {}
        }
        // Segments as the haystack has them: items joined by '\n', an item
        // perhaps holding newlines itself.
        let mut segments = Vec::new();
        let mut start = 0;
        for (n, (i, _)) in t.match_indices('\n').enumerate() {
            if splits >> (n % 32) & 1 == 1 {
                segments.push((start, i));
                start = i + 1;
            }
        }
        segments.push((start, t.len()));
        (t, segments)
    }

    /// Checks `pattern` on every segment of `text` as the catalogue decides
    /// (see `TextHits::hit` and `TextHits::focus`).
    fn check(
        pf: &Prefilter,
        pattern: usize,
        re: &Regex,
        text: &str,
        segments: &[(usize, usize)],
        hits: &[Hit],
    ) -> Result<(), TestCaseError> {
        let always = pf.is_always(pattern);
        prop_assert_eq!(always, pf.always().contains(&pattern));
        let hay = text.as_bytes();
        let lower = hay.to_ascii_lowercase();
        for (g, &(start, end)) in segments.iter().enumerate() {
            let seg = &hay[start..end];
            let mine: Vec<Hit> = hits
                .iter()
                .filter(|h| h.pattern as usize == pattern && h.segment as usize == g)
                .copied()
                .collect();
            let want = re.is_match(seg);
            let got = if always {
                want
            } else {
                !mine.is_empty() && pf.confirm(&mine, seg, &lower[start..end], start, re)
            };
            prop_assert_eq!(
                got,
                want,
                "is_match: pattern {:?} on segment {:?}",
                re.as_str(),
                String::from_utf8_lossy(seg)
            );
            if let Some(got) = pf.last_literal_match(&mine, seg, &lower[start..end], start) {
                let last = re.find_iter(seg).last().map(|m| (m.start(), m.end()));
                prop_assert_eq!(
                    Some(got),
                    last,
                    "last match: pattern {:?} on segment {:?}",
                    re.as_str(),
                    String::from_utf8_lossy(seg)
                );
            }
        }
        Ok(())
    }

    #[test]
    fn every_catalogue_pattern_agrees_with_the_prefilter() {
        let sets = Catalogue::builtin().text_sets();
        let all: Vec<Vec<Vec<u8>>> = sets
            .iter()
            .flat_map(|(_, res)| res.iter().map(|re| pieces(re.as_str())))
            .collect();
        let piece = (
            0u8..8,
            any::<Index>(),
            any::<Index>(),
            0u8..3,
            0..SEPARATORS.len(),
        );
        let input = (
            proptest::collection::vec(piece, 1..7),
            any::<u64>(),
            (0u8..4, any::<Index>()),
            any::<u32>(),
        );
        let mut runner = TestRunner::new(Config {
            cases: 128,
            // Nowhere to write a failing seed: the report prints the text.
            failure_persistence: None,
            ..Config::default()
        });
        let result = runner.run(&input, |input| {
            let mut own = all.iter();
            for (pf, res) in &sets {
                for (i, re) in res.iter().enumerate() {
                    let own = own.next().unwrap();
                    let (t, segments) = text(own, &all, &input);
                    let lower = t.as_bytes().to_ascii_lowercase();
                    let hits = pf.hits(&lower, &segments);
                    check(pf, i, re, &t, &segments, &hits)?;
                    // And every other pattern the text has literals of.
                    let mut others: Vec<usize> = hits.iter().map(|h| h.pattern as usize).collect();
                    others.dedup();
                    for j in others.into_iter().filter(|&j| j != i) {
                        check(pf, j, res[j], &t, &segments, &hits)?;
                    }
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
    }
}
