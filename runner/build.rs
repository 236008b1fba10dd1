//! The static x86_64 musl runner enters through the CLI's
//! `src/cli/start.rs`, which populates its writable segment before it
//! relocates itself, as `wbx` does.

fn main() {
    enter_through_populate_stub("wbr");
}

include!("../host/src/cli/start_link.rs");
