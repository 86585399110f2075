//! Any bytes as one `kandev-recovery classify` input line: parsing and
//! classification never panic, and every answer keeps its promises.
#![no_main]

use libfuzzer_sys::fuzz_target;
use server_fuzz::classify::{classify_line, Catalogue};

fuzz_target!(|data: &[u8]| {
    let Ok(line) = std::str::from_utf8(data) else {
        return;
    };
    let now = chrono::DateTime::from_timestamp(1_796_040_000, 0).unwrap_or_default();
    if let Ok(c) = classify_line(Catalogue::builtin(), line, now) {
        assert!(c.safe_excerpt.chars().count() <= 240);
        assert_eq!(Catalogue::builtin().class_of(&c.code), Some(c.class));
        assert_eq!(c.retry_after_seconds.is_some(), c.reset_at.is_some());
        if let Some(r) = c.reset_at {
            assert!(r > c.occurred_at);
        }
        let again = classify_line(Catalogue::builtin(), line, now).expect("same input parses");
        assert_eq!(c, again, "classification is deterministic");
    }
});
