//! Prints the session the host docked it with.
use test_programs::workbooks::engine::session_info;

fn main() {
    let s = session_info::get();
    println!(
        "id={} tenant={} profile={} caps={}",
        s.id,
        s.tenant,
        s.profile,
        s.caps.join(",")
    );
}
