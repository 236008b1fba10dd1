//! The engine's own components, built to wasm32-wasip2 by `build.rs` and
//! embedded in the crate, so `wbx` is one self-contained binary. They are
//! compiled at most once per compile cache (the user's, by default, shared
//! by every folder): it keys them by the sha256 of these bytes.

use crate::artifact::Artifact;
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

/// search: BM25 ranking of a directory's files.
pub(crate) const SEARCH: Embedded = Embedded {
    name: "search",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/search.wasm")),
    sha256: sha256::SEARCH,
};

/// wat: the WAT build lane, text to a validated module or component.
pub(crate) const WAT_LANE: Embedded = Embedded {
    name: "wat",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/wat_lane.wasm")),
    sha256: sha256::WAT_LANE,
};

/// fetch: a page as text, through `browse`.
pub(crate) const FETCH: Embedded = Embedded {
    name: "fetch",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/fetch.wasm")),
    sha256: sha256::FETCH,
};

/// upper: stdin uppercased.
pub(crate) const UPPER: Embedded = Embedded {
    name: "upper",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/upper.wasm")),
    sha256: sha256::UPPER,
};

/// The deny broker of `wasi:sockets`: every operation refused
/// (`--stub wasi:sockets`).
pub(crate) const DENY_SOCKETS: Embedded = Embedded {
    name: "workbooks:deny-sockets",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/deny_sockets.wasm")),
    sha256: sha256::DENY_SOCKETS,
};

/// The deny broker of `wasi:http`: every request refused
/// (`--stub wasi:http`).
pub(crate) const DENY_HTTP: Embedded = Embedded {
    name: "workbooks:deny-http",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/deny_http.wasm")),
    sha256: sha256::DENY_HTTP,
};

include!(concat!(env!("OUT_DIR"), "/embedded_brokers.rs"));

/// What identifies this build to another process of it (a `wbx daemon`
/// and its clients): the crate's version, the compile cache's engine key
/// and the hash of every shipped component. Two processes with the same
/// id run a line alike. Computed once per process.
pub(crate) fn build_id() -> &'static str {
    static ID: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ID.get_or_init(compute_build_id)
}

fn compute_build_id() -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    for flavor in [
        crate::flavor::Flavor::Sync,
        crate::flavor::Flavor::Concurrent,
    ] {
        h.update(crate::artifact::engine_key(flavor).as_bytes());
    }
    for shipped in all() {
        h.update(shipped.sha256);
    }
    hex::encode(&h.finalize()[..16])
}

/// Every component shipped inside the engine: the shell, the built-in
/// commands, the deny brokers and every cap's broker.
pub(crate) fn all() -> Vec<Embedded> {
    let mut all = vec![
        SHELL,
        WBOX,
        JQ,
        GREP,
        UPPER,
        SEARCH,
        FETCH,
        WAT_LANE,
        DENY_SOCKETS,
        DENY_HTTP,
    ];
    all.extend(BROKERS.iter().map(|(_, _, broker)| *broker));
    all
}
