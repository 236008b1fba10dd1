//! The CLI reference page, `docs/cli.md`, generated from clap's definition
//! of `wbx`: the test fails when the checked-in page differs from what the
//! definition gives, so a flag renamed or added cannot leave the book
//! behind. `WB_BLESS=1 cargo test -p workbooks-cli --bin wbx reference`
//! rewrites the page.

use clap::CommandFactory;

/// The page for this build's CLI.
fn page() -> String {
    let mut cmd = crate::Cli::command();
    cmd.build();
    let mut out = String::from(
        "# CLI reference\n\n\
         <!-- Generated from the CLI's own definition (clap); a test fails when it differs. \
         Regenerate: WB_BLESS=1 cargo test -p workbooks-cli --bin wbx reference -->\n\n\
         Every command of `wbx`, with its usage and each argument. The\n\
         [running chapter](running.md) says what the shared flags do;\n\
         `wbx <command> --help` prints the same text.\n",
    );
    section(&mut cmd, "wbx", 2, true, &mut out);
    out
}

/// `cmd`'s heading, text, usage and arguments, then its subcommands.
fn section(cmd: &mut clap::Command, path: &str, depth: usize, top: bool, out: &mut String) {
    out.push_str(&format!("\n{} `{path}`\n\n", "#".repeat(depth.min(4))));
    if let Some(about) = cmd.get_long_about().or(cmd.get_about()) {
        out.push_str(&format!("{about}\n\n"));
    }
    if let Some(after) = cmd.get_after_long_help() {
        out.push_str(&format!(
            "```text\n{}\n```\n\n",
            after.to_string().trim_end()
        ));
    }
    let usage = cmd.render_usage().to_string();
    let usage = usage.trim_start_matches("Usage: ").trim();
    out.push_str(&format!("```text\n{usage}\n```\n"));
    let rows: Vec<String> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && (top || !a.is_global_set()))
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .map(row)
        .collect();
    if !rows.is_empty() {
        out.push_str("\n| argument | what it is |\n|---|---|\n");
        for r in rows {
            out.push_str(&r);
        }
    }
    let names: Vec<String> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        .map(|s| s.get_name().to_string())
        .collect();
    for name in names {
        if let Some(sub) = cmd.find_subcommand_mut(&name) {
            section(sub, &format!("{path} {name}"), depth + 1, false, out);
        }
    }
}

/// One argument's row: how it is written, its help, default and variable.
fn row(a: &clap::Arg) -> String {
    let values = a
        .get_value_names()
        .map(|v| {
            v.iter()
                .map(|n| format!("<{n}>"))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| format!("<{}>", a.get_id().as_str().to_uppercase()));
    let takes = a.get_num_args().is_some_and(|n| n.takes_values());
    let spelled = if a.is_positional() {
        values
    } else {
        let mut names = Vec::new();
        if let Some(s) = a.get_short() {
            names.push(format!("-{s}"));
        }
        if let Some(l) = a.get_long() {
            names.push(format!("--{l}"));
        }
        let names = names.join(", ");
        if takes {
            format!("{names} {values}")
        } else {
            names
        }
    };
    let mut what = a
        .get_long_help()
        .or(a.get_help())
        .map(|h| h.to_string().replace('\n', " "))
        .unwrap_or_default();
    let defaults: Vec<String> = a
        .get_default_values()
        .iter()
        .map(|d| d.to_string_lossy().into_owned())
        .collect();
    if takes && !defaults.is_empty() {
        what.push_str(&format!(" (default: `{}`)", defaults.join(",")));
    }
    if let Some(env) = a.get_env() {
        what.push_str(&format!(" (env: `{}`)", env.to_string_lossy()));
    }
    format!("| `{}` | {} |\n", spelled, what.replace('|', "\\|"))
}

#[test]
fn the_cli_reference_page_is_what_the_cli_definition_gives() {
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/cli.md");
    let want = page();
    if std::env::var_os("WB_BLESS").is_some() {
        std::fs::write(&file, &want).expect("write docs/cli.md");
        return;
    }
    let held = std::fs::read_to_string(&file).unwrap_or_default();
    if held != want {
        let at = held
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(held.lines().count().min(want.lines().count()));
        panic!(
            "docs/cli.md differs from the CLI's definition from line {}: {:?} vs {:?}; \
             regenerate with WB_BLESS=1 cargo test -p workbooks-cli --bin wbx reference",
            at + 1,
            held.lines().nth(at),
            want.lines().nth(at)
        );
    }
}
