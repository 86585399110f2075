//! Any JSON as a candidate's policy document (`app::policy::validate`).
//! What is checked: `server_fuzz::checks::policy_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| server_fuzz::checks::policy_bytes(data));
