//! Text matches for one envelope: the prefilter's literal hits per
//! haystack, which rules' patterns may match at all, and the confirmations
//! (by the prefilter's expansions or the regex) on just the segments that
//! hold hits.

use super::compiled::Matcher;
use super::prefilter::Hit;
use super::rule::Role;
use crate::facts::{Facts, Source};
use std::borrow::Cow;

/// Text matches. The prefilter runs once per haystack and says, per
/// pattern, which segments (lines, messages) hold one of its literals and
/// where; a pattern is checked only on those segments. Patterns match within
/// one segment, never across unrelated lines.
pub(super) struct TextHits<'a> {
    matcher: &'a Matcher,
    facts: &'a Facts,
    /// Per haystack: its segments' byte ranges, in order.
    segments: [Vec<(usize, usize)>; 3],
    /// Per haystack: literal hits, in the order the prefilter found them
    /// (segment, then end); more than [`UNSORTED_MAX`] sorted by pattern,
    /// segment, start (the order [`Self::pattern_hits`] gives).
    hits: [Vec<Hit>; 3],
    /// Rules whose text pattern may match (bits, as in `RuleBits`).
    pub(super) may_text: Vec<u64>,
    /// Rules whose not_text pattern may match.
    may_not: Vec<u64>,
    /// Where text patterns matched: `(rule, haystack, segment index)`.
    found: Vec<(usize, Source, usize)>,
}

/// Most hits in one haystack left unsorted: a few patterns' hits are then
/// picked out of them when asked for ([`TextHits::pattern_hits`]), which
/// costs less than sorting them all; more are sorted once, so picking a
/// pattern's out of a long list stays a binary search.
const UNSORTED_MAX: usize = 64;

impl<'a> TextHits<'a> {
    pub(super) fn new(matcher: &'a Matcher, facts: &'a Facts) -> Self {
        let words = matcher.bits.words;
        let mut may_text = vec![0u64; words];
        let mut may_not = vec![0u64; words];
        let segments: [Vec<(usize, usize)>; 3] = std::array::from_fn(|slot| {
            facts
                .segments
                .iter()
                .filter(|g| g.source as usize == slot)
                .map(|g| (g.start, g.end))
                .collect()
        });
        let hits: [Vec<Hit>; 3] = std::array::from_fn(|slot| {
            let hay = facts.hay[slot].as_bytes();
            let segs = &segments[slot];
            if hay.is_empty() || segs.is_empty() {
                return Vec::new();
            }
            let pf = &matcher.prefilters[slot];
            let hits = pf.hits_found(&facts.lower[slot], segs);
            let mut mark = |pattern: usize| {
                let (rule, role) = matcher.owners[slot][pattern];
                let set = match role {
                    Role::Text => &mut may_text,
                    Role::NotText => &mut may_not,
                };
                set[rule / 64] |= 1 << (rule % 64);
            };
            for &p in pf.always() {
                mark(p);
            }
            for h in &hits {
                mark(h.pattern as usize);
            }
            let mut hits = hits;
            if hits.len() > UNSORTED_MAX {
                hits.sort_unstable();
            }
            hits
        });
        TextHits {
            matcher,
            facts,
            segments,
            hits,
            may_text,
            may_not,
            found: Vec::new(),
        }
    }

    pub(super) fn may_not(&self, rule: usize) -> bool {
        self.may_not[rule / 64] & (1 << (rule % 64)) != 0
    }

    /// The hits of one pattern in one haystack, sorted by segment, start,
    /// branch and end.
    fn pattern_hits(&self, slot: usize, pattern: usize) -> Cow<'_, [Hit]> {
        let hits = &self.hits[slot];
        let p = pattern as u32;
        if hits.len() > UNSORTED_MAX {
            let lo = hits.partition_point(|h| h.pattern < p);
            let hi = lo + hits[lo..].partition_point(|h| h.pattern <= p);
            return Cow::Borrowed(&hits[lo..hi]);
        }
        let mut own: Vec<Hit> = hits.iter().filter(|h| h.pattern == p).copied().collect();
        own.sort_unstable();
        Cow::Owned(own)
    }

    /// Whether the rule's text (or not_text) pattern matches; for text, the
    /// latest segment where it does is remembered for [`Self::segment`] and
    /// [`Self::focus`].
    /// Called at most once per rule and role.
    pub(super) fn hit(&mut self, rule: usize, role: Role) -> bool {
        let r = &self.matcher.rules[rule];
        let (re, slots) = match role {
            Role::Text => (r.text_re.as_ref(), &r.text_slots),
            Role::NotText => (r.not_text_re.as_ref(), &r.not_text_slots),
        };
        let Some(re) = re else { return false };
        for src in Source::ALL {
            let slot = src as usize;
            let Some(pattern) = slots[slot] else { continue };
            let hay = self.facts.hay[slot].as_bytes();
            let segs = &self.segments[slot];
            if hay.is_empty() || segs.is_empty() {
                continue;
            }
            let pf = &self.matcher.prefilters[slot];
            // Latest segment first: the excerpt shows the last match.
            let found = if pf.is_always(pattern) {
                (0..segs.len()).rev().find(|&g| {
                    let (start, end) = segs[g];
                    re.is_match(&hay[start..end])
                })
            } else {
                let hits = self.pattern_hits(slot, pattern);
                let mut found = None;
                let mut end = hits.len();
                while end > 0 {
                    let g = hits[end - 1].segment;
                    let begin = hits[..end].partition_point(|h| h.segment < g);
                    let (start, stop) = segs[g as usize];
                    let lower = &self.facts.lower[slot][start..stop];
                    if pf.confirm(&hits[begin..end], &hay[start..stop], lower, start, re) {
                        found = Some(g as usize);
                        break;
                    }
                    end = begin;
                }
                found
            };
            if let Some(g) = found {
                if matches!(role, Role::Text) {
                    self.found.push((rule, src, g));
                }
                return true;
            }
        }
        false
    }

    /// The deciding segment of a rule whose text matched: its haystack and
    /// byte range, and its index among that haystack's segments.
    pub(super) fn segment(&self, rule: usize) -> Option<(Source, usize, usize)> {
        let &(_, src, g) = self.found.iter().find(|(r, _, _)| *r == rule)?;
        Some((src, self.segments[src as usize][g].0, g))
    }

    /// See [`super::Evaluation::text_focus`].
    pub(super) fn focus(&self, rule: usize) -> Option<usize> {
        let (src, _, g) = self.segment(rule)?;
        let r = &self.matcher.rules[rule];
        let slot = src as usize;
        let (start, end) = self.segments[slot][g];
        let text = &self.facts.hay[slot].as_bytes()[start..end];
        let pattern = r.text_slots[slot]?;
        let pf = &self.matcher.prefilters[slot];
        let last = if pf.is_always(pattern) {
            None
        } else {
            let hits = self.pattern_hits(slot, pattern);
            let lo = hits.partition_point(|h| (h.segment as usize) < g);
            let hi = hits.partition_point(|h| (h.segment as usize) <= g);
            let lower = &self.facts.lower[slot][start..end];
            pf.last_literal_match(&hits[lo..hi], text, lower, start)
        };
        let (m_start, m_end) = match last {
            Some(m) => m,
            None => {
                let m = r.text_re.as_ref()?.find_iter(text).last()?;
                (m.start(), m.end())
            }
        };
        // A match may start on the separator before its words.
        let skip = text[m_start..m_end]
            .iter()
            .take_while(|c| !c.is_ascii_alphanumeric())
            .count()
            .min(m_end - m_start);
        Some(start + m_start + skip)
    }
}
