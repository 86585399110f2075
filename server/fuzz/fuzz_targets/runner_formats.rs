//! Any bytes as an agent CLI's stdout, through every format's reader.
//! What is checked: `server_fuzz::checks::runner_formats_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| server_fuzz::checks::runner_formats_bytes(data));
