//! The engine's own components, built to wasm32-wasip2 by `build.rs` and
//! embedded in the crate, so `wbx` is one self-contained binary. They are
//! compiled at most once per machine: the compile cache keys them by the
//! sha256 of these bytes.

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

/// upper: stdin uppercased.
pub(crate) const UPPER: Embedded = Embedded {
    name: "upper",
    bytes: include_bytes!(concat!(env!("OUT_DIR"), "/upper.wasm")),
    sha256: sha256::UPPER,
};

/// A shipped broker component: `$file` is its artifact's stem in OUT_DIR,
/// `$hash` its constant in `embedded_sha256.rs`.
macro_rules! broker {
    ($name:literal, $file:literal, $hash:ident) => {
        Embedded {
            name: $name,
            bytes: include_bytes!(concat!(env!("OUT_DIR"), "/", $file, ".wasm")),
            sha256: sha256::$hash,
        }
    };
}

/// The shipped broker of every cap served by one, with the guest-facing
/// interface it exports. The host primitive each imports is in
/// [`crate::dock::imports::primitive_caps`].
pub(crate) const BROKERS: &[(Cap, &str, Embedded)] = &[
    (
        Cap::Vfs,
        "workbooks:engine/vfs@0.1.0",
        broker!("workbooks:vfs-broker", "vfs_broker", VFS_BROKER),
    ),
    (
        Cap::Kv,
        "workbooks:engine/kv@0.1.0",
        broker!("workbooks:kv-broker", "kv_broker", KV_BROKER),
    ),
    (
        Cap::Net,
        "workbooks:engine/net@0.1.0",
        broker!("workbooks:net-broker", "net_broker", NET_BROKER),
    ),
    (
        Cap::Browse,
        "workbooks:engine/browse@0.1.0",
        broker!("workbooks:browse-broker", "browse_broker", BROWSE_BROKER),
    ),
    (
        Cap::Secrets,
        "workbooks:engine/secrets@0.1.0",
        broker!("workbooks:secrets-broker", "secrets_broker", SECRETS_BROKER),
    ),
    (
        Cap::Queue,
        "workbooks:engine/queue@0.1.0",
        broker!("workbooks:queue-broker", "queue_broker", QUEUE_BROKER),
    ),
    (
        Cap::Commands,
        "workbooks:engine/commands@0.1.0",
        broker!(
            "workbooks:commands-broker",
            "commands_broker",
            COMMANDS_BROKER
        ),
    ),
    (
        Cap::Exec,
        "workbooks:engine/exec@0.1.0",
        broker!("workbooks:exec-broker", "exec_broker", EXEC_BROKER),
    ),
    (
        Cap::Tcp,
        "workbooks:engine/tcp@0.1.0",
        broker!("workbooks:tcp-broker", "tcp_broker", TCP_BROKER),
    ),
    (
        Cap::Udp,
        "workbooks:engine/udp@0.1.0",
        broker!("workbooks:udp-broker", "udp_broker", UDP_BROKER),
    ),
    (
        Cap::Tls,
        "workbooks:engine/tls@0.1.0",
        broker!("workbooks:tls-broker", "tls_broker", TLS_BROKER),
    ),
];
