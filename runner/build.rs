//! The static x86_64 musl runner enters through the CLI's
//! `host/cli/src/start.rs`, which populates its writable segment before it
//! relocates itself, and its segments start on 2 MiB boundaries, as
//! `wbx`'s do.

fn main() {
    link_for_a_fast_static_start("wbr");
}

include!("../host/cli/src/start_link.rs");
