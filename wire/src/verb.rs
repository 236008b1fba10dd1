//! The `run` verb's arguments and the `--home` flag, defined once: the full
//! CLI reads them with clap (feature `clap`), and the thin client's reader
//! ([`RunArgs`](crate::RunArgs)) is held to that definition by a test.

use crate::request::StageArgs;
use std::path::PathBuf;

/// `--home`, the flag every verb takes.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct HomeFlag {
    /// Engine home: caches and the database (default ./.workbooks).
    #[cfg_attr(
        feature = "clap",
        arg(long, global = true, env = "WB_HOME", value_name = "DIR")
    )]
    pub home: Option<PathBuf>,
}

/// The `run` verb's arguments.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct RunVerb {
    /// The stage flags.
    #[cfg_attr(feature = "clap", command(flatten))]
    pub stage: StageArgs,
    /// Print {stdout, stderr, exit, stages} as JSON instead of passing the
    /// output through.
    #[cfg_attr(feature = "clap", arg(long))]
    pub json: bool,
    /// The command line, e.g. 'cat data.json | jq -r .name | sort -u'.
    pub line: String,
}
