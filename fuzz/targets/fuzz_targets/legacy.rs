//! Legacy policy documents built from the bytes, against a model of the rules.
//! What is checked: `fuzz::legacy_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::legacy_bytes(data));
