//! Python dict literals (`{'error': {'code': None}}`, as Python SDKs print
//! errors) rewritten as JSON, so the JSON readers take them apart too.

/// A Python literal at the start of `s` (`{'error': {'code': None}}`, as
/// Python SDKs print errors), rewritten as JSON, with the length of `s` it
/// covers: single-quoted and `b'…'` strings become JSON strings, `None`,
/// `True` and `False` become `null`, `true` and `false`. `None` when `s`
/// does not start with such a literal, the literal is not closed, or it
/// needed no rewriting (then it is not valid JSON for another reason).
pub(super) fn python_literal_as_json(s: &str) -> Option<(String, usize)> {
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
