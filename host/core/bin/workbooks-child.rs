//! The core's own child binary: what the `os_process` and `container`
//! tiers start when the embedder has no `wbx` (see `workbooks::child`).
//! Started with `workbooks::child::CHILD_ARGV`, it reads its request on
//! stdin, runs it and answers in frames on stdout; started any other way,
//! it says what it is and exits 2.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if !workbooks::child::started_as_child(&args) {
        eprintln!(
            "workbooks-child: started by an engine's os_process or container tier, \
             with `{}` and a request on stdin; not meant to be run by hand",
            workbooks::child::CHILD_ARGV.join(" ")
        );
        return ExitCode::from(2);
    }
    // Guests' sockets and files count against the hard limit, as in `wbx`.
    workbooks::cadence::raise_descriptor_limit();
    ExitCode::from(workbooks::child::run())
}
