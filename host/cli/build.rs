//! A static x86_64 musl `wbx` enters through `src/start.rs`, which
//! populates its writable segment before it relocates itself, and its
//! segments start on 2 MiB boundaries.

fn main() {
    link_for_a_fast_static_start("wbx");
}

include!("src/start_link.rs");
