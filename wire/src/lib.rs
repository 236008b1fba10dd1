//! The protocol between `wbx daemon` and its clients, one Unix stream
//! socket per line; and the client's half of it. Also the request a
//! parent engine sends the child that runs a command for it ([`child`]),
//! and the frames of a container-tier child's calls to its parent
//! ([`relay`]).
//!
//! Every message is a frame: a tag byte, a little-endian `u32` length and
//! that many bytes. The client opens with `Q` (the [`Request`], JSON); the
//! daemon answers `R` (refused, with the reason: the client runs the line
//! itself) or `A` (accepted: from here on the line is the daemon's, and the
//! client never runs it again). Then the daemon sends `I` when a stage
//! first reads stdin (the client starts sending `S` chunks and `Z` at its
//! end; until then it reads none of its stdin), `O` chunks of the line's
//! stdout as they are produced, `E` the line's stderr and `X` the exit
//! code. A client whose stdout was closed says `P`, and the stage writing
//! it ends as on a closed pipe. A client that goes away cancels its line.
//!
//! This crate holds no engine, so a client built on it alone (`wb`) starts
//! as fast as a small program does. What keeps such a client from being
//! served by a daemon that would run its line differently: the request
//! names the client's build ([`Request::build`]) or the engine binary it
//! would otherwise run ([`Request::engine`]), and a digest of the
//! environment that changes what a line may reach ([`env_digest`]); the
//! daemon refuses any request whose build, engine file or digest is not
//! its own.

mod args;
pub mod child;
mod frames;
pub mod home;
pub mod packed;
mod pump;
pub mod relay;
mod request;
mod run_args;
mod socket;
mod verb;

pub use frames::*;
pub use home::{cache_dir, default_home};
pub use pump::{Answer, ENGINE_EXIT, Served, connect, offer, open, pump};
pub use request::{
    DAEMON_ENV, DEFAULT_TENANT, FileId, NET_ALLOW_ENV, OPERATOR_ALLOW_ENV, Request, StageArgs,
    env_digest, env_digest_of,
};
pub use run_args::RunArgs;
pub use socket::{peer_is_me, socket_dir, socket_path, socket_path_in};
pub use verb::{Globals, RunVerb};

/// The crate's layering, checked: every top-level module is placed, and
/// each imports only from the modules before it.
#[cfg(test)]
mod layers {
    /// Lowest first.
    const LAYERS: &[&str] = &[
        "home", "socket", "args", "frames", "relay", "packed", "child", "request", "verb", "pump",
        "run_args",
    ];

    #[test]
    fn every_module_is_placed_and_none_imports_from_a_layer_above_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let checked = layers::check(&src, LAYERS, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(checked >= 9, "checked only {checked} files");
    }
}
