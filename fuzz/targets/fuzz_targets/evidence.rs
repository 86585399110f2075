//! Any bytes as an evidence envelope, through the lenient readers.
//! What is checked: `fuzz::evidence_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::evidence_bytes(data));
