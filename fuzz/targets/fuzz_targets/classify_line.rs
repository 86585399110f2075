//! Any bytes as one `kandev-recovery classify` input line.
//! What is checked: `fuzz::classify_line_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::classify_line_bytes(data));
