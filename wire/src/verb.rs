//! The `run` verb's arguments and the flags every verb takes (`--home`,
//! `--json`), defined once: the full CLI reads them with clap (feature
//! `clap`), and the thin client's reader ([`RunArgs`](crate::RunArgs)) is
//! held to that definition by a test.

use crate::request::StageArgs;
use std::path::PathBuf;

/// The flags every verb takes.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct Globals {
    /// Engine home: the registry, kv, keys and the database (default: the
    /// user's, `$XDG_DATA_HOME/workbooks`; its compile cache is under
    /// `$XDG_CACHE_HOME/workbooks`).
    #[cfg_attr(
        feature = "clap",
        arg(long, global = true, env = "WB_HOME", value_name = "DIR")
    )]
    pub home: Option<PathBuf>,
    /// Print JSON: the verb's output where it has one, and a failure as
    /// `{"error": {"kind", "message", "exit"}}` on stdout (same exit code).
    #[cfg_attr(feature = "clap", arg(long, global = true))]
    pub json: bool,
}

/// The `run` verb's arguments.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct RunVerb {
    /// The stage flags.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub stage: StageArgs,
    /// The command line, e.g. 'cat data.json | jq -r .name | sort -u'.
    pub line: String,
}
