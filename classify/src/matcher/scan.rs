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

/// Whether `b` is single-spaced printable ASCII: bytes ` ` to `~` only,
/// no space at either end and never two in a row. Such a text is already
/// what collapsing whitespace would make of it.
pub(crate) fn is_single_spaced(b: &[u8]) -> bool {
    const SPACES: u64 = LO * 0x20;
    const LOW7: u64 = !HI;
    if b.first() == Some(&b' ') || b.last() == Some(&b' ') {
        return false;
    }
    // Bit 7 of the last byte seen, when that byte was a space.
    let mut prev = 0u64;
    let mut i = 0;
    while i + 8 <= b.len() {
        let w = word(b, i);
        if w & HI != 0 || has_less(w, 0x20) || has_byte(w, 0x7f) {
            return false;
        }
        // Bit 7 of each byte that is a space (exact: no carries between bytes).
        let x = w ^ SPACES;
        let spaces = !((x & LOW7).wrapping_add(LOW7) | x) & HI;
        if spaces & ((spaces << 8) | prev) != 0 {
            return false;
        }
        prev = spaces >> 56;
        i += 8;
    }
    let mut prev_space = prev != 0;
    for &c in &b[i..] {
        if !(b' '..=b'~').contains(&c) || (c == b' ' && prev_space) {
            return false;
        }
        prev_space = c == b' ';
    }
    true
}

/// A case-insensitive, ASCII pattern of the form `\b(?:word|word…)…`: every
/// match begins at a word boundary with one of its lead words. Such a
/// pattern is only tried, anchored, where a lead word starts: finding the
/// words in the lower-cased text (SIMD substring search) is far cheaper than
/// running the pattern's case-insensitive automaton over all of the text,
/// most of which holds no match. Matches are exactly those of the plain
/// pattern searched from the start (`leads_find_what_the_pattern_finds` in
/// the timing tests checks each use).
pub(crate) struct Led {
    leads: Vec<memchr::memmem::Finder<'static>>,
    /// The pattern anchored at the start of the text it is given.
    anchored: regex::bytes::Regex,
    #[cfg(test)]
    pattern: &'static str,
}

impl Led {
    /// `pattern` must begin with `\b` and then one of `leads` (lower case,
    /// each starting with a letter), case-insensitively.
    pub(crate) fn new(pattern: &'static str, leads: &[&'static str]) -> Led {
        assert!(
            pattern.starts_with(r"\b"),
            "a led pattern starts at a word boundary"
        );
        assert!(leads.iter().all(
            |w| w.starts_with(|c: char| c.is_ascii_lowercase()) && w.to_ascii_lowercase() == *w
        ));
        Led {
            leads: leads
                .iter()
                .map(|w| memchr::memmem::Finder::new(*w))
                .collect(),
            anchored: led_regex(&format!("^(?:{pattern})")),
            #[cfg(test)]
            pattern,
        }
    }

    /// The plain pattern, for tests comparing against it.
    #[cfg(test)]
    pub(crate) fn plain(&self) -> regex::bytes::Regex {
        led_regex(self.pattern)
    }

    /// The first place at or after `at` where a lead word starts at a word
    /// boundary in `hay` (`lower` is it ASCII-lowercased).
    fn next_start(&self, hay: &[u8], lower: &[u8], mut at: usize) -> Option<usize> {
        debug_assert_eq!(hay.len(), lower.len());
        loop {
            let rest = lower.get(at..)?;
            let p = at + self.leads.iter().filter_map(|f| f.find(rest)).min()?;
            // The leading `\b`: a lead word starts with a letter, so the
            // boundary holds unless a word byte comes before it.
            if p == 0 || !is_word_byte(hay[p - 1]) {
                return Some(p);
            }
            at = p + 1;
        }
    }

    /// Non-overlapping matches in `hay` (`lower` is it ASCII-lowercased).
    pub(crate) fn find<'a>(
        &'a self,
        hay: &'a [u8],
        lower: &'a [u8],
    ) -> impl Iterator<Item = std::ops::Range<usize>> + use<'a> {
        self.each(hay, lower, |s| self.anchored.find(s).map(|m| (m.end(), ())))
            .map(|(at, len, ())| at..at + len)
    }

    /// [`Self::find`] with the groups of each match; their offsets count
    /// from the match's start, which comes with them.
    pub(crate) fn captures<'a, 'h>(
        &'a self,
        hay: &'h [u8],
        lower: &'a [u8],
    ) -> impl Iterator<Item = (usize, regex::bytes::Captures<'h>)> + use<'a, 'h> {
        self.each(hay, lower, |s| {
            let c = self.anchored.captures(s)?;
            Some((c.get(0)?.end(), c))
        })
        .map(|(at, _, c)| (at, c))
    }

    /// Tries `anchored` (which answers a match's length and what it read)
    /// at each place a match may start, moving past each match found.
    fn each<'a, 'h, T, F>(
        &'a self,
        hay: &'h [u8],
        lower: &'a [u8],
        anchored: F,
    ) -> impl Iterator<Item = (usize, usize, T)> + use<'a, 'h, T, F>
    where
        F: Fn(&'h [u8]) -> Option<(usize, T)> + 'a,
    {
        let mut at = 0;
        std::iter::from_fn(move || loop {
            let p = self.next_start(hay, lower, at)?;
            at = p + 1;
            if let Some((len, found)) = anchored(&hay[p..]) {
                at = p + len.max(1);
                return Some((p, len, found));
            }
        })
    }
}

fn led_regex(pattern: &str) -> regex::bytes::Regex {
    regex::bytes::RegexBuilder::new(pattern)
        .case_insensitive(true)
        .unicode(false)
        .build()
        .expect("led pattern compiles")
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
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

    #[test]
    fn single_spaced_matches_its_definition() {
        let want = |b: &[u8]| {
            b.iter().all(|c| (b' '..=b'~').contains(c))
                && b.first() != Some(&b' ')
                && b.last() != Some(&b' ')
                && !b.windows(2).any(|w| w == b"  ")
        };
        let base = b"abcdefghijklmnopqrstuvwxyz0123".to_vec();
        let mut samples = vec![Vec::new(), b" ".to_vec(), b"a".to_vec()];
        // One odd byte anywhere, and two spaces at every pair of places
        // (adjacent ones inside a word, across a word boundary, in the tail).
        for odd in 0u8..=255 {
            for at in 0..base.len() {
                let mut v = base.clone();
                v[at] = odd;
                samples.push(v);
            }
        }
        for a in 0..base.len() {
            for b in a + 1..base.len() {
                let mut v = base.clone();
                v[a] = b' ';
                v[b] = b' ';
                samples.push(v);
            }
        }
        for len in 0..base.len() {
            samples.push(base[..len].to_vec());
        }
        for s in &samples {
            assert_eq!(
                is_single_spaced(s),
                want(s),
                "{:?}",
                String::from_utf8_lossy(s)
            );
        }
    }
}
