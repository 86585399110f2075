//! Word-at-a-time byte scans for the classifier's hottest loops.
//!
//! Copying text into the haystacks and collapsing whitespace in excerpts
//! walk every byte looking for the rare one that needs attention; testing
//! eight bytes per step (SWAR) cuts those loops to a fraction. Each function
//! returns exactly what the byte-at-a-time loop it replaces would.

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Whether some byte of `w` is below `n` (`n <= 0x80`); exact.
#[inline]
fn has_less(w: u64, n: u8) -> bool {
    w.wrapping_sub(LO * u64::from(n)) & !w & HI != 0
}

/// Whether some byte of `w` equals `b`; exact.
#[inline]
fn has_byte(w: u64, b: u8) -> bool {
    has_less(w ^ (LO * u64::from(b)), 1)
}

#[inline]
fn word(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(a)
}

/// The end of the run of plain bytes starting at `i`: ASCII that is not a
/// control byte, or is `\n` or `\t`.
pub(crate) fn plain_run_end(b: &[u8], mut i: usize) -> usize {
    let plain = |c: u8| c < 0x80 && (c >= 0x20 || c == b'\n' || c == b'\t');
    loop {
        // Eight printable ASCII bytes at a time; a word with anything else
        // (perhaps only a `\n` or `\t`) is looked at byte by byte.
        while i + 8 <= b.len() {
            let w = word(b, i);
            if w & HI != 0 || has_less(w, 0x20) {
                break;
            }
            i += 8;
        }
        let stop = (i + 8).min(b.len());
        while i < stop {
            if !plain(b[i]) {
                return i;
            }
            i += 1;
        }
        if i >= b.len() {
            return i;
        }
    }
}

/// The end of the run of visible ASCII (`!` to `~`) starting at `i`.
pub(crate) fn visible_run_end(b: &[u8], mut i: usize) -> usize {
    while i + 8 <= b.len() {
        let w = word(b, i);
        if w & HI != 0 || has_less(w, 0x21) || has_byte(w, 0x7f) {
            break;
        }
        i += 8;
    }
    while i < b.len() && b[i] > b' ' && b[i] < 0x7f {
        i += 1;
    }
    i
}

/// The words every match of a case-insensitive pattern begins with, in
/// lower case. No match can start before the first place one of them occurs,
/// so a search may begin there: finding the words in the lower-cased text
/// (SIMD substring search) is far cheaper than running the pattern's
/// case-insensitive automaton over text that holds none of them, which is
/// most text. Only sound when every match really begins with one of the
/// words; each use is checked against the plain search in its tests.
pub(crate) struct Leads(Vec<memchr::memmem::Finder<'static>>);

impl Leads {
    pub(crate) fn new(words: &[&'static str]) -> Leads {
        debug_assert!(words
            .iter()
            .all(|w| !w.is_empty() && w.to_ascii_lowercase() == *w));
        Leads(
            words
                .iter()
                .map(|w| memchr::memmem::Finder::new(*w))
                .collect(),
        )
    }

    /// Where the first word starts in `lower` (ASCII-lowercased text).
    pub(crate) fn first(&self, lower: &[u8]) -> Option<usize> {
        self.0.iter().filter_map(|f| f.find(lower)).min()
    }
}

/// Non-overlapping matches of `re` in `hay` at or after `at`, with their
/// groups: what `captures_iter` reports from there, for patterns that never
/// match the empty string. `find_at` and `captures_at` keep the text before
/// `at` as context, so `\b` reads as it would in a search from the start.
pub(crate) fn captures_from<'r, 'h>(
    re: &'r regex::bytes::Regex,
    hay: &'h [u8],
    mut at: usize,
) -> impl Iterator<Item = regex::bytes::Captures<'h>> + use<'r, 'h> {
    std::iter::from_fn(move || {
        if at > hay.len() {
            return None;
        }
        let c = re.captures_at(hay, at)?;
        let m = c.get(0)?;
        at = m.end().max(m.start() + 1);
        Some(c)
    })
}

/// [`captures_from`] for whole matches only.
pub(crate) fn find_from<'r, 'h>(
    re: &'r regex::bytes::Regex,
    hay: &'h [u8],
    mut at: usize,
) -> impl Iterator<Item = regex::bytes::Match<'h>> + use<'r, 'h> {
    std::iter::from_fn(move || {
        if at > hay.len() {
            return None;
        }
        let m = re.find_at(hay, at)?;
        at = m.end().max(m.start() + 1);
        Some(m)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_match_the_byte_loops() {
        let plain = |c: u8| c < 0x80 && (c >= 0x20 || c == b'\n' || c == b'\t');
        let visible = |c: u8| c > b' ' && c < 0x7f;
        let samples: Vec<Vec<u8>> = (0u8..=255)
            .flat_map(|odd| {
                (0..24).map(move |at| {
                    let mut v = b"abcdefghij klmno\npqrst\tuvwxyz0123456789abcdefghij".to_vec();
                    v[at] = odd;
                    v
                })
            })
            .collect();
        for s in &samples {
            for start in 0..s.len() {
                let want = (start..s.len()).find(|&k| !plain(s[k])).unwrap_or(s.len());
                assert_eq!(plain_run_end(s, start), want, "{s:?} {start}");
                let want = (start..s.len())
                    .find(|&k| !visible(s[k]))
                    .unwrap_or(s.len());
                assert_eq!(visible_run_end(s, start), want, "{s:?} {start}");
            }
        }
    }
}
