//! Built-in commands: components shipped inside the engine. Their names are
//! reserved: the registry refuses to bind them, so a hostile registration
//! can never rebind `jq` (or `sort`) to other bytes.

use crate::artifact::{Artifact, ArtifactKind};
use crate::embedded::{self, Embedded};
use std::sync::OnceLock;

/// The applets of `wbox`, each also callable by its bare name.
pub const APPLETS: [&str; 16] = [
    "cat", "echo", "seq", "head", "wc", "nl", "rev", "basename", "dirname", "tr", "sort", "uniq",
    "tail", "true", "false", "wbox",
];

/// Built-in command names besides the applets.
pub const COMMANDS: [&str; 4] = ["wbox", "jq", "grep", "upper"];

/// Names of the engine's own components, reserved as well.
const ENGINE_COMPONENTS: [&str; 2] = ["shell", "kv-broker"];

/// Whether `name` is reserved for a built-in.
pub fn is_reserved(name: &str) -> bool {
    APPLETS.contains(&name) || COMMANDS.contains(&name) || ENGINE_COMPONENTS.contains(&name)
}

/// A built-in resolved from a name: its artifact and the argv it prepends
/// (`sort` is `wbox sort`).
pub(crate) struct Resolved {
    pub(crate) artifact: Artifact,
    pub(crate) prefix: Option<&'static str>,
}

fn artifact(e: &Embedded, cell: &'static OnceLock<Artifact>) -> Artifact {
    cell.get_or_init(|| Artifact::trusted(e.bytes.to_vec(), ArtifactKind::Component))
        .clone()
}

/// The built-in named `name`, if any.
pub(crate) fn resolve(name: &str) -> Option<Resolved> {
    static WBOX: OnceLock<Artifact> = OnceLock::new();
    static JQ: OnceLock<Artifact> = OnceLock::new();
    static GREP: OnceLock<Artifact> = OnceLock::new();
    static UPPER: OnceLock<Artifact> = OnceLock::new();
    let (artifact, prefix) = match name {
        "wbox" => (artifact(&embedded::WBOX, &WBOX), None),
        "jq" => (artifact(&embedded::JQ, &JQ), None),
        "grep" => (artifact(&embedded::GREP, &GREP), None),
        "upper" => (artifact(&embedded::UPPER, &UPPER), None),
        applet => {
            let applet = APPLETS.iter().find(|a| **a == applet)?;
            (artifact(&embedded::WBOX, &WBOX), Some(*applet))
        }
    };
    Some(Resolved { artifact, prefix })
}
