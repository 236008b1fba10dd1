//! The packed command request parser on arbitrary bytes: it must never panic, and a
//! request it accepts must encode back to the bytes it consumed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use workbooks::commands::packed;

fuzz_target!(|data: &[u8]| {
    if let Ok(req) = packed::parse(data) {
        let again = packed::encode(&req.name, &req.argv, &req.stdin);
        assert!(data.starts_with(&again), "accepted bytes do not re-encode");
    }
});
