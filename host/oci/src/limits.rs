//! Every limit of a registry exchange, each with what it stops.

use std::time::Duration;

/// The largest manifest read: a hostile registry's endless manifest.
pub const OCI_MAX_MANIFEST_BYTES: usize = 4 << 20;

/// The largest wasm layer pulled or pushed: a hostile registry's endless
/// blob, and a component no host would dock.
pub const OCI_MAX_LAYER_BYTES: u64 = 128 << 20;

/// The largest config blob read: the config only describes the layer.
pub const OCI_MAX_CONFIG_BYTES: usize = 1 << 20;

/// The largest signature blob read: one did, one digest, one signature.
pub const OCI_MAX_SIGNATURE_BYTES: usize = 64 << 10;

/// The most signature layers and signature manifests read per artifact:
/// a registry that lists thousands of referrers to stall a pull.
pub const OCI_MAX_SIGNATURES: usize = 32;

/// The most bytes one operation may read from the network, on top of the
/// layer: the manifests, configs and signatures around it. The gate cuts
/// the connection past it, whatever the protocol client would read.
pub const OCI_MAX_OVERHEAD_BYTES: u64 = 16 << 20;

/// The wall-clock budget of one whole push or pull, every protocol step
/// in it: a registry that answers byte by byte, or each step just in time.
pub const OCI_TIMEOUT: Duration = Duration::from_secs(600);

/// The connect budget of one connection: a host that never answers.
pub const OCI_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest request head the gate reads: a client that never ends it.
pub const GATE_MAX_HEAD_BYTES: usize = 16 << 10;
