//! Legacy policy documents built from the bytes, against a model of the rules.
//! What is checked: `server_fuzz::checks::legacy_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| server_fuzz::checks::legacy_bytes(data));
