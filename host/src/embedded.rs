//! The engine's own components, built to wasm32-wasip2 by `build.rs` and
//! embedded in the crate, so `wbx` is one self-contained binary. They are
//! compiled at most once per machine: the compile cache keys them by the
//! sha256 of these bytes.

use crate::cap;
use crate::policy::Cap;

/// A component shipped inside the engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Embedded {
    /// Its package name in compositions and receipts.
    pub(crate) name: &'static str,
    /// Its component bytes.
    pub(crate) bytes: &'static [u8],
}

/// Serves `workbooks:engine/kv` over `workbooks:host/storage`.
pub(crate) const KV_BROKER: Embedded = Embedded {
    name: "workbooks:kv-broker",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/kv_broker.wasm")),
};

/// The pipe shell broker (`workbooks:engine/shell`).
pub(crate) const SHELL: Embedded = Embedded {
    name: "workbooks:shell",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/shell.wasm")),
};

/// The multicall command of the coreutils-style applets.
pub(crate) const WBOX: Embedded = Embedded {
    name: "wbox",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/wbox.wasm")),
};

/// jq, on the jaq crates.
pub(crate) const JQ: Embedded = Embedded {
    name: "jq",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/jq.wasm")),
};

/// grep, on the regex crate.
pub(crate) const GREP: Embedded = Embedded {
    name: "grep",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/grep.wasm")),
};

/// upper: stdin uppercased.
pub(crate) const UPPER: Embedded = Embedded {
    name: "upper",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/upper.wasm")),
};

/// Serves `workbooks:engine/browse` over `workbooks:host/http`.
pub(crate) const BROWSE_BROKER: Embedded = Embedded {
    name: "workbooks:browse-broker",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/browse_broker.wasm")),
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
