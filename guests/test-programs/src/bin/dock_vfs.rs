//! Imports the vfs interface: writes a file and reads it back.
use test_programs::workbooks::engine::vfs::{self, Volume};

fn main() {
    vfs::write(Volume::Workspace, "probe.txt", b"vfs works").expect("write");
    let back = vfs::read(Volume::Workspace, "probe.txt").expect("read");
    println!("{}", String::from_utf8_lossy(&back));
}
