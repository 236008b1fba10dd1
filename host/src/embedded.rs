//! The engine's own components, built to wasm32-wasip2 by `build.rs` and
//! embedded in the crate, so `wbx` is one self-contained binary. They are
//! compiled at most once per machine: the compile cache keys them by the
//! sha256 of these bytes.

use crate::artifact::Artifact;
use crate::cap;
use crate::policy::Cap;

mod sha256 {
    include!(concat!(env!("OUT_DIR"), "/embedded_sha256.rs"));
}

/// A component shipped inside the engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Embedded {
    /// Its package name in compositions and receipts.
    pub(crate) name: &'static str,
    /// Its component bytes.
    pub(crate) bytes: &'static [u8],
    /// The sha256 of the bytes, computed by the build.
    pub(crate) sha256: [u8; 32],
}

impl Embedded {
    /// The component as an artifact (no copy).
    pub(crate) fn artifact(&self) -> Artifact {
        Artifact::embedded(self.bytes, self.sha256)
    }
}

/// Serves `workbooks:engine/kv` over `workbooks:host/storage`.
pub(crate) const KV_BROKER: Embedded = Embedded {
    name: "workbooks:kv-broker",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/kv_broker.wasm")),
    sha256: sha256::KV_BROKER,
};

/// The pipe shell broker (`workbooks:engine/shell`).
pub(crate) const SHELL: Embedded = Embedded {
    name: "workbooks:shell",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/shell.wasm")),
    sha256: sha256::SHELL,
};

/// The multicall command of the coreutils-style applets.
pub(crate) const WBOX: Embedded = Embedded {
    name: "wbox",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/wbox.wasm")),
    sha256: sha256::WBOX,
};

/// jq, on the jaq crates.
pub(crate) const JQ: Embedded = Embedded {
    name: "jq",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/jq.wasm")),
    sha256: sha256::JQ,
};

/// grep, on the regex crate.
pub(crate) const GREP: Embedded = Embedded {
    name: "grep",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/grep.wasm")),
    sha256: sha256::GREP,
};

/// upper: stdin uppercased.
pub(crate) const UPPER: Embedded = Embedded {
    name: "upper",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/upper.wasm")),
    sha256: sha256::UPPER,
};

/// Serves `workbooks:engine/browse` over `workbooks:host/http`.
pub(crate) const BROWSE_BROKER: Embedded = Embedded {
    name: "workbooks:browse-broker",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/browse_broker.wasm")),
    sha256: sha256::BROWSE_BROKER,
};

/// The broker component serving a cap's guest-facing interface, with the
/// interface's name, for caps served by a broker rather than the host.
pub(crate) fn broker_for(c: Cap) -> Option<(&'static str, Embedded)> {
    match c {
        Cap::Kv => Some((cap::kv::ENGINE_INTERFACE, KV_BROKER)),
        Cap::Browse => Some((cap::browse::ENGINE_INTERFACE, BROWSE_BROKER)),
        _ => None,
    }
}
