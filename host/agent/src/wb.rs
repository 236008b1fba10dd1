//! `wb`: the engine's CLI verbs that only read, run in process for the
//! model, printing what `wbx` prints for them.
//!
//! Threat: a model using the CLI to change the engine (register or remove
//! a command, revoke a tenant, read a secret) or to learn host paths.
//! Only the verbs listed in [`VERBS`] exist here; every other word is
//! refused by name, and nothing shown carries a path on disk.

use super::Agents;
use workbooks::commands::listing;
use workbooks_toolkit as toolkit;

/// The toolkit `id`, or the error the model reads.
fn kit(agents: &Agents, id: &str) -> Result<toolkit::Toolkit, String> {
    agents
        .toolkits()
        .get(id)
        .map_err(|e| format!("wb error: {e}"))
}

/// The verbs the model may run.
pub(crate) const VERBS: &str = "profiles [--json], command list [--json], command show NAME, toolkit list, toolkit show ID [SKILL], toolkit search QUERY, toolkit verify ID, version, help";

/// Runs `args` (a `wb` command line, `wb` itself optional): the output,
/// or the error the model reads.
pub(crate) fn wb(agents: &Agents, args: &str) -> Result<String, String> {
    let mut words: Vec<&str> = args.split_whitespace().collect();
    if matches!(words.first(), Some(&"wb" | &"wbx")) {
        words.remove(0);
    }
    let refused = || {
        format!(
            "wb error: `{}` is not a read-only verb; the verbs here are: {VERBS}",
            words.join(" ")
        )
    };
    let registry = agents.engine().registry();
    let listed = || registry.list().map_err(|e| format!("wb error: {e}"));
    match words.as_slice() {
        [] | ["help" | "--help"] => Ok(format!("wb: the engine's read-only verbs: {VERBS}")),
        ["version" | "--version"] => Ok(format!("wbx {}", env!("CARGO_PKG_VERSION"))),
        ["profiles"] => Ok(workbooks::policy::profiles_text(false)),
        ["profiles", "--json"] => Ok(workbooks::policy::profiles_text(true)),
        ["command", "list"] => Ok(listing::list_text(&listed()?, false)),
        ["command", "list", "--json"] => Ok(listing::list_text(&listed()?, true)),
        ["command", "show", name] => {
            let entry = registry.get(name).map_err(|e| format!("wb error: {e}"))?;
            listing::show_text(name, entry.as_ref())
                .ok_or_else(|| format!("wb error: no command named `{name}`"))
        }
        ["toolkit", "list"] => Ok(toolkit::list_text(&agents.toolkits().list())),
        ["toolkit", "show", id] => Ok(toolkit::show_text(&kit(agents, id)?)),
        ["toolkit", "show", id, skill] => kit(agents, id)?
            .skill(skill)
            .map_err(|e| format!("wb error: {e}")),
        ["toolkit", "search", query @ ..] if !query.is_empty() => {
            let hits = toolkit::search(&agents.toolkits().list(), &query.join(" "));
            Ok(if hits.is_empty() {
                "no matches".into()
            } else {
                hits.join("\n")
            })
        }
        ["toolkit", "verify", id] => {
            Ok(toolkit::verify(&kit(agents, id)?, agents.engine().registry()).text())
        }
        _ => Err(refused()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_only_verbs_print_what_wbx_prints() {
        let (_home, engine) = workbooks::engine::for_tests();
        let agents = Agents::new(engine);
        assert_eq!(
            wb(&agents, "wb profiles").unwrap(),
            workbooks::policy::profiles_text(false)
        );
        let list = wb(&agents, "command list --json").unwrap();
        let list: serde_json::Value = serde_json::from_str(&list).unwrap();
        assert!(list["builtins"].as_array().unwrap().contains(&"jq".into()));
        assert_eq!(
            wb(&agents, "command show jq").unwrap(),
            "jq: built-in (embedded in wbx)"
        );
        assert_eq!(
            wb(&agents, "command show nothing-here").unwrap_err(),
            "wb error: no command named `nothing-here`"
        );
    }

    #[test]
    fn every_verb_that_changes_or_reveals_the_engine_is_refused_by_name() {
        let (_home, engine) = workbooks::engine::for_tests();
        let agents = Agents::new(engine);
        for line in [
            "command register evil /tmp/evil.wasm",
            "command remove jq",
            "command run jq .",
            "revoke default",
            "unrevoke default",
            "secret list",
            "secret set k v",
            "exec /bin/sh",
            "run rm -rf /",
            "agent run --exec --task x",
            "serve-api",
            "daemon",
            "profiles --json extra",
            "toolkit sign text",
            "toolkit build text",
            "toolkit run text task",
            "toolkit push text /tmp",
        ] {
            let got = wb(&agents, line).unwrap_err();
            assert_eq!(
                got,
                format!("wb error: `{line}` is not a read-only verb; the verbs here are: {VERBS}")
            );
        }
    }
}
