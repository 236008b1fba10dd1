//! Tests of the `grep` command, run in memory through `grep::run`.

mod exit_codes;
mod files;
mod matching;
mod output;
mod support;
