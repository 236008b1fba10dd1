//! The exec wire parser on arbitrary bytes: it must never panic, and a
//! request it accepts must encode back to the bytes it consumed.
#![no_main]

use libfuzzer_sys::fuzz_target;
use workbooks::commands::wire;

fuzz_target!(|data: &[u8]| {
    if let Ok(req) = wire::parse(data) {
        let again = wire::encode(&req.name, &req.argv, &req.stdin);
        assert!(data.starts_with(&again), "accepted bytes do not re-encode");
    }
});
