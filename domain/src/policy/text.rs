//! Names and references people read: profile names, candidate labels and
//! identifiers, a route's `caller.ref`, token and person names.
//!
//! They are shown in pages, titles, logs and terminals, so characters that
//! change how the text *around* them reads are refused at the edge:
//! control characters (a newline forges a log line, an escape sequence
//! recolours a terminal), bidirectional overrides and isolates (`U+202E`
//! makes `exe.txt` read as `txt.exe`) and zero-width characters (two names
//! that look the same but differ). The server checks API input with this
//! and the browser checks the settings form with the same function, so they
//! never disagree. Markup characters (`<`, `"`) are fine: every page
//! escapes what it renders.

use super::error::{FieldError, FieldErrorCode};

/// Whether `c` changes how surrounding text reads while showing nothing
/// of its own (or is a control character).
pub fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // Bidirectional marks, embeddings, overrides and isolates.
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
            // Zero-width spaces, joiners and invisible operators, the
            // byte-order mark, the Mongolian vowel separator, the soft
            // hyphen and the combining grapheme joiner.
            | '\u{200B}'..='\u{200D}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}' | '\u{180E}'
            | '\u{00AD}' | '\u{034F}'
            // Line and paragraph separators (line breaks by another name)
            // and interlinear annotation marks.
            | '\u{2028}' | '\u{2029}' | '\u{FFF9}'..='\u{FFFB}'
        )
}

/// The first hidden character of `s` and its position (in characters).
pub fn first_hidden(s: &str) -> Option<(usize, char)> {
    s.chars().enumerate().find(|(_, c)| is_hidden(*c))
}

/// A field error for `field` when `s` holds a hidden character.
pub fn check_visible(field: &str, s: &str) -> Result<(), FieldError> {
    match first_hidden(s) {
        None => Ok(()),
        Some((at, c)) => Err(FieldError::new(
            field,
            FieldErrorCode::InvalidValue,
            format!(
                "must not contain control, bidirectional or zero-width characters \
                 (U+{:04X} at character {})",
                c as u32,
                at + 1
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_refused_with_their_position() {
        for (text, code) in [
            ("a\u{202E}b", 0x202E),
            ("a\u{2066}b", 0x2066),
            ("a\u{200B}b", 0x200B),
            ("a\u{200D}b", 0x200D),
            ("a\u{FEFF}b", 0xFEFF),
            ("a\nb", 0x0A),
            ("a\u{1B}[31mb", 0x1B),
            ("a\u{7F}b", 0x7F),
            ("a\u{85}b", 0x85),
            ("a\u{2028}b", 0x2028),
        ] {
            let e = check_visible("name", text).unwrap_err();
            assert_eq!(e.field, "name");
            assert_eq!(e.code, FieldErrorCode::InvalidValue);
            assert!(
                e.message.contains(&format!("U+{code:04X} at character 2")),
                "{text:?}: {}",
                e.message
            );
        }
    }

    #[test]
    fn visible_text_and_markup_pass() {
        for text in [
            "Claude → Codex",
            "</title><meta http-equiv=refresh>",
            "\"><img src=x onerror=alert(1)>",
            "Ünïcödé 名前 עברית",
            "tab-free name",
        ] {
            assert_eq!(check_visible("name", text), Ok(()), "{text:?}");
        }
    }
}
