//! Any bytes as an agent CLI's stdout, through every format's reader.
//! What is checked: `fuzz::runner_formats_bytes`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz::runner_formats_bytes(data));
