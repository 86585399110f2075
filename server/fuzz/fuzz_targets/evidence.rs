//! Any bytes as an evidence envelope, through the lenient readers.
//! What is checked: `server_fuzz::checks::evidence_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| server_fuzz::checks::evidence_bytes(data));
