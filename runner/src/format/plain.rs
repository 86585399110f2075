//! `format = "plain"`: an agent whose stdout is its answer. Nothing tells
//! the answer from an error printed to stdout, so every line is both shown
//! and kept as evidence, and the first one is an effect: a plain agent that
//! printed anything is never repeated automatically (fail closed).

use super::{Read, Reader, Seen};

pub struct Plain;

impl Reader for Plain {
    fn stdout_line(&mut self, line: &str) -> Read {
        if line.trim().is_empty() {
            return Read::nothing();
        }
        Read::evidence(vec![Seen::Text(format!("{line}\n"))])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_is_output_and_evidence() {
        let r = Plain.stdout_line("hello");
        assert!(r.keep);
        assert_eq!(r.seen, vec![Seen::Text("hello\n".into())]);
        assert_eq!(Plain.stdout_line("  "), Read::nothing());
    }
}
