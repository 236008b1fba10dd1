//! Tests of the `jq` command, run in memory through `jq::run`.

mod builtins;
mod exit_codes;
mod input_flags;
mod output_flags;
mod support;
