//! wasmtime's own defects that a guest can reach, answered as a named trap
//! of that guest's instance only, with none of the defect's text (which
//! names the build machine's paths) in anything a guest or a client sees.
//!
//! The wrong-end defect (GHSA-xrvr-8678-5wp8) is fixed upstream in
//! [`WRONG_END_FIXED_IN`], which the package registry these machines reach
//! does not have yet. The tests read the wasmtime version `Cargo.lock`
//! pins, so taking the release is one line in `Cargo.toml`: from then on
//! the same guests must meet an ordinary trap, still naming no path.

use crate::common::text;
use crate::common::{request, serve_handler};
use guest_artifacts::*;

/// The wasmtime release that fixes the wrong-end defect.
const WRONG_END_FIXED_IN: [u32; 3] = [48, 0, 9];

/// What a trap's text must never carry to a guest or a client.
const LEAKS: [&str; 4] = ["panicked", "location:", "/.cargo/", "BUG"];

/// Whether the pinned wasmtime still has the wrong-end defect.
fn wrong_end_open() -> bool {
    let version = crate::common::locked_wasmtime();
    let parts: Vec<u32> = version.split('.').map(|n| n.parse().unwrap()).collect();
    parts.as_slice() < WRONG_END_FIXED_IN.as_slice()
}

/// A guest that leads wasmtime 48.0.8 into one of its own defects (a
/// stream's write end cancelled as a read end, dropped as one, then the
/// read end read) ends its store with a named trap. Before, a debug build
/// panicked the whole `wbx` there, and a release build's trap text named
/// the build machine's paths.
#[test]
pub(crate) fn wasi03_cancel_wrong_end() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::common::wbx(
        home.path(),
        &["exec", "--profile", "compute", WASI03_CANCEL_WRONG_END],
        b"",
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    if wrong_end_open() {
        assert!(
            stdout.contains("cancel-read on the write end 0x2\n"),
            "{stdout}{stderr}"
        );
        assert!(
            stderr.contains("trap: the runtime reached a state it does not support"),
            "{stdout}{stderr}"
        );
    } else {
        // Fixed: cancelling a read on a write end is the guest's own trap.
        assert!(stderr.contains("trap: "), "{stdout}{stderr}");
        assert!(!stderr.contains("does not support"), "{stdout}{stderr}");
    }
    for leak in LEAKS {
        assert!(!stderr.contains(leak), "{leak}: {stderr}");
    }
    assert_eq!(out.status.code(), Some(121), "{stderr}");
}

/// The same defect reached by a served 0.3 handler, on an instance per
/// request and on shared instances: the client gets a 500 saying its
/// instance is ended, with none of the defect's own text, and the next
/// request is answered by a fresh instance. (A shared instance learns only
/// that its worker stopped; what stopped it goes to the log.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_served_handler_reaching_the_wrong_end_defect_ends_its_own_instance_only() {
    for per_request in [true, false] {
        let said = match (per_request, wrong_end_open()) {
            (true, true) => {
                "the handler reached a state the runtime does not support; its instance is ended\n"
            }
            (false, _) => "the handler trapped; its instance is ended\n",
            // Fixed: the guest's own trap, however wasmtime words it.
            (true, false) => "the handler ",
        };
        let home = tempfile::tempdir().unwrap();
        let e = crate::common::own_engine(home.path());
        let opts = workbooks::ServeOptions {
            instance_per_request: per_request,
            ..Default::default()
        };
        let addr = serve_handler(&e, opts).await;
        // A shared instance counts the requests it has seen, so the count
        // after the defect says whether the instance that met it is gone.
        let first = request(addr, "GET", "/count", "").await;
        assert_eq!(first, (200, "1\n".into()), "per request: {per_request}");
        let (status, body) = request(addr, "GET", "/wrong-end", "").await;
        assert_eq!(status, 500, "per request: {per_request}: {body}");
        assert!(body.starts_with(said), "per request: {per_request}: {body}");
        for leak in LEAKS {
            assert!(!body.contains(leak), "{leak}: {body}");
        }
        let next = request(addr, "GET", "/count", "").await;
        assert_eq!(next, (200, "1\n".into()), "per request: {per_request}");
    }
}
