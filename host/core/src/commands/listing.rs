//! What `wbx command list|show` prints, and the agent's `wb` tool with it.

use super::builtin;
use super::registry::Entry;
use std::collections::BTreeSet;

/// The command list: the built-ins, then each registered command (JSON
/// with `json`).
pub fn list_text(entries: &[Entry], json: bool) -> String {
    if json {
        let builtins: BTreeSet<&str> = builtin::COMMANDS
            .iter()
            .chain(builtin::APPLETS.iter())
            .copied()
            .collect();
        return serde_json::json!({"builtins": builtins, "registered": entries}).to_string();
    }
    let mut out = format!("built-in   {}", builtin::COMMANDS.join(" "));
    out.push_str(&format!("\napplets    {}", builtin::APPLETS.join(" ")));
    for e in entries {
        out.push_str(&format!(
            "\n{:<10} sha256:{}  {:?} {:?}  {} bytes",
            e.name,
            e.sha256.get(..16).unwrap_or(&e.sha256),
            e.arg_mode,
            e.tier,
            e.size
        ));
    }
    out
}

/// One command as `wbx command show` prints it (without its path on
/// disk), `None` when no command has that name.
pub fn show_text(name: &str, entry: Option<&Entry>) -> Option<String> {
    if builtin::is_reserved(name) {
        return Some(format!("{name}: built-in (embedded in wbx)"));
    }
    entry.map(|e| serde_json::to_string_pretty(e).unwrap_or_default())
}
