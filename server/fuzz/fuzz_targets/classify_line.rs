//! Any bytes as one `kandev-recovery classify` input line.
//! What is checked: `server_fuzz::checks::classify_line_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| server_fuzz::checks::classify_line_bytes(data));
