//! Components from OCI registries: push, pull and verify by reference.
//!
//! What it owns: the `oci://HOST[:PORT]/REPO[:TAG|@sha256:…]` reference
//! ([`OciRef`]), the wasm artifact layout other tools read (the CNCF wasm
//! OCI artifact: config `application/vnd.wasm.config.v0+json`, one layer
//! `application/wasm`; [`artifact`]), did:key signatures over the manifest
//! digest ([`signature`], attached through the referrers API and under the
//! `sha256-<hex>.sig` tag), the signers a home requires ([`Trust`]), the
//! credentials an operator already has ([`Credentials`]) and the record of
//! what was pulled ([`local`]).
//!
//! The registry protocol is `oci-client`'s; none of it is written here.
//!
//! Invariants:
//! - every connection the protocol client opens goes through the engine's
//!   egress floor ([`gate`]): a CONNECT to a host the floor refuses is
//!   refused, plain HTTP is spoken only to a loopback registry, and the
//!   bytes one operation reads are capped;
//! - nothing is stored that did not check: the manifest's digest, its
//!   media types, the layer's digest and size, the component's validation
//!   and, when signers are required, a signature by one of them.

mod artifact;
mod auth;
mod error;
mod gate;
pub mod limits;
pub mod local;
mod pull;
mod push;
mod reference;
pub mod signature;
#[cfg(feature = "testing")]
pub mod testing;
mod transport;
mod trust;

pub use artifact::{WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE};
pub use auth::Credentials;
pub use error::OciError;
pub use local::Pulled;
pub use pull::pull;
pub use push::{Pushed, push};
pub use reference::OciRef;
pub use transport::Transport;
pub use trust::Trust;

/// The scheme that marks a reference where a file path is accepted.
pub const SCHEME: &str = "oci://";

/// Whether `arg` (a command-line path) names an OCI reference.
pub fn is_reference(arg: &std::ffi::OsStr) -> bool {
    arg.to_str().is_some_and(|s| s.starts_with(SCHEME))
}

#[cfg(test)]
mod layers {
    /// The modules, lowest first: none imports from one above it.
    const LAYERS: &[&str] = &[
        "limits",
        "error",
        "artifact",
        "reference",
        "signature",
        "trust",
        "auth",
        "gate",
        "transport",
        "local",
        "push",
        "pull",
        "testing",
    ];

    #[test]
    fn every_module_is_placed_and_none_imports_from_a_layer_above_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let checked = layers::check(&src, LAYERS, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(checked >= 12, "checked only {checked} files");
    }
}
