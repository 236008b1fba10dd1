//! A component kernel (world `workbooks:engine/kernel`) for the engine's
//! tests: answers its input reversed, prefixed with how many calls this
//! instance has served; traps on the input `trap`.

wit_bindgen::generate!({
    path: ["../../wit"],
    world: "workbooks:engine/kernel",
});

use std::sync::atomic::{AtomicU32, Ordering};

static CALLS: AtomicU32 = AtomicU32::new(0);

struct TestKernel;

impl Guest for TestKernel {
    fn process(input: Vec<u8>) -> Vec<u8> {
        assert!(input != b"trap", "asked to trap");
        let n = CALLS.fetch_add(1, Ordering::Relaxed) + 1;
        let mut out = format!("{n}:").into_bytes();
        out.extend(input.iter().rev());
        out
    }
}

export!(TestKernel);
