//! Built-in commands: components shipped inside the engine. Their names are
//! reserved: the registry refuses to bind them, so a hostile registration
//! can never rebind `jq` (or `sort`) to other bytes.

use crate::artifact::Artifact;
use crate::embedded;

/// The applets of `wbox`, each also callable by its bare name.
pub const APPLETS: [&str; 17] = [
    "cat", "echo", "seq", "head", "wc", "nl", "rev", "basename", "dirname", "tr", "sort", "uniq",
    "tail", "cut", "true", "false", "wbox",
];

/// Built-in command names besides the applets.
pub const COMMANDS: [&str; 7] = ["wbox", "jq", "grep", "upper", "search", "fetch", "wat"];

/// Names of the engine's own components, reserved as well.
const ENGINE_COMPONENTS: [&str; 2] = ["shell", "kv-broker"];

/// Whether `name` is reserved for a built-in.
pub fn is_reserved(name: &str) -> bool {
    APPLETS.contains(&name) || COMMANDS.contains(&name) || ENGINE_COMPONENTS.contains(&name)
}

/// The catalog this build carries (`host/core/catalog.json`): the programs the
/// engine installs by sha256 pin.
pub const CATALOG_ROWS: &str = include_str!("../../catalog.json");

/// The sha256 (hex) a catalog name is reserved for: under `python` or
/// `qjs` only the pinned program may be registered, so no registration can
/// put other bytes where an agent, a toolkit lane or an operator expects
/// the catalog's.
pub fn pinned(name: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Pin {
        name: String,
        sha256: String,
    }
    static PINS: std::sync::OnceLock<Vec<Pin>> = std::sync::OnceLock::new();
    PINS.get_or_init(|| serde_json::from_str(CATALOG_ROWS).unwrap_or_default())
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.sha256.clone())
}

/// A built-in resolved from a name: its artifact and the argv it prepends
/// (`sort` is `wbox sort`).
pub struct Resolved {
    /// The component that serves it.
    pub artifact: Artifact,
    /// The argv it prepends, for an applet.
    pub prefix: Option<&'static str>,
}

/// The built-in named `name`, if any.
pub fn resolve(name: &str) -> Option<Resolved> {
    let (artifact, prefix) = match name {
        "wbox" => (embedded::WBOX.artifact(), None),
        "jq" => (embedded::JQ.artifact(), None),
        "grep" => (embedded::GREP.artifact(), None),
        "upper" => (embedded::UPPER.artifact(), None),
        "search" => (embedded::SEARCH.artifact(), None),
        "fetch" => (embedded::FETCH.artifact(), None),
        "wat" => (embedded::WAT_LANE.artifact(), None),
        applet => {
            let applet = APPLETS.iter().find(|a| **a == applet)?;
            (embedded::WBOX.artifact(), Some(*applet))
        }
    };
    Some(Resolved { artifact, prefix })
}
