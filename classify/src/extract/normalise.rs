//! How text and identifiers are normalised on their way into the facts:
//! identifiers to snake_case (`rateLimitExceeded` and `RATE_LIMIT_EXCEEDED`
//! are one fact; the catalogue compiles its identifiers the same way), text
//! without ANSI escapes, typographic quotes or control characters, and
//! HTML without its tags.

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
pub(super) fn normalise_into(text: &str, out: &mut String) {
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // Copy the run of plain ASCII in one go.
        let start = i;
        i = crate::matcher::scan::plain_run_end(b, i);
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

/// Drops HTML tags and collapses whitespace.
pub(super) fn strip_tags(html: &str) -> String {
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
}
