//! Arbitrary text in every evidence field an adapter fills.
//! What is checked: `fuzz::classify_text_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::classify_text_bytes(data));
