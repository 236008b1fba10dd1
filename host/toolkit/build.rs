//! Builds the build broker (`guests/builder`) into OUT_DIR, where
//! `src/broker.rs` embeds it: the service ships its own component, which
//! the core does not name.

#[path = "../../guests/build_support.rs"]
mod build_support;
#[path = "../../guests/ship_guest.rs"]
mod ship_guest;

fn main() {
    ship_guest::ship("builder");
}
