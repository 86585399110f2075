//! Any JSON as a candidate's policy document (`domain::policy::validate`).
//! What is checked: `fuzz::policy_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::policy_bytes(data));
