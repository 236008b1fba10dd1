//! A `run` line read straight from the command line by a reader of that
//! verb alone, without clap, and its hand-off to the daemon serving the
//! home. Both the thin client `wb` and `wbx` itself take this path first:
//! a daemon-served line then costs a socket round trip, not the start of
//! an engine or of a parser. clap's parser of the one verb ([`RunVerb`],
//! [`Globals`]) would cost `wb` a sixth of its start (0.65 → 0.78 ms of
//! a served `wb run true`, static build), so this reader's flag table is
//! held to clap's definition by a test instead. Anything it does not take
//! exactly as clap would (another verb, help, `--dir`, `--broker`, a value
//! that does not parse) is left to the full CLI.
//!
//! [`Globals`]: crate::Globals

use crate::args::{Arg, ArgReader, home_env_is_empty};
use crate::request::{FileId, Request};
use crate::verb::RunVerb;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::PathBuf;

/// `[--home DIR] [--json] run [flags] LINE`, as far as a client reads it
/// without clap.
#[derive(Debug, PartialEq)]
pub struct RunArgs {
    /// `--home`, when given.
    pub home: Option<PathBuf>,
    /// `--json`: the outcome as JSON (`{stdout, stderr, exit, stages}`,
    /// or `{"error": …}`).
    pub json: bool,
    /// The verb's arguments.
    pub run: RunVerb,
}

/// The flags the reader takes: those that take a value, those that take
/// none, and those that may repeat. A test holds them to clap's
/// definition of the global flags and the verb.
const VALUE_FLAGS: &[&str] = &[
    "--home",
    "--profile",
    "--caps",
    "--tenant",
    "--env",
    "--timeout",
    "--fuel",
    "--memory",
    "--allow-host",
    "--grant",
];
const SWITCHES: &[&str] = &["--json"];
const REPEATABLE: &[&str] = &["--env", "--allow-host"];

impl RunArgs {
    /// The arguments of a `run` verb a client can send as they are; `None` for
    /// anything else (another verb, help, a flag it does not take, a value
    /// that does not parse), which `wbx` then reads and answers.
    pub fn parse(args: &[OsString]) -> Option<RunArgs> {
        let mut args = ArgReader::new(args, REPEATABLE);
        let mut run = RunArgs {
            home: None,
            json: false,
            run: RunVerb::default(),
        };
        let mut verb = false;
        let mut line = None;
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg? {
                Arg::Word(word) => {
                    match verb {
                        false if word == "run" => verb = true,
                        true if line.is_none() => line = Some(word.to_string()),
                        _ => return None,
                    }
                    continue;
                }
                Arg::EndOfFlags => continue,
                Arg::Flag(flag, inline) => (flag, inline),
            };
            if SWITCHES.contains(&flag) {
                match flag {
                    "--json" if inline.is_none() && !run.json => run.json = true,
                    _ => return None,
                }
                continue;
            }
            if !VALUE_FLAGS.contains(&flag) {
                return None;
            }
            let value = args.value(inline);
            let stage = &mut run.run.stage;
            match flag {
                "--home" => run.home = Some(PathBuf::from(value?)),
                "--profile" if verb => stage.profile = value?,
                "--caps" if verb => stage.caps = Some(value?),
                "--tenant" if verb => stage.tenant = value?,
                "--env" if verb => stage.env.push(value?),
                "--allow-host" if verb => stage.allow_hosts.push(value?),
                "--grant" if verb => stage.grant = Some(value?),
                "--timeout" if verb => stage.timeout = Some(value?.parse().ok()?),
                "--fuel" if verb => stage.fuel = Some(value?.parse().ok()?),
                "--memory" if verb => stage.memory = Some(value?.parse().ok()?),
                _ => return None,
            }
        }
        run.run.line = line?;
        // `run hello.wasm` (wasmtime's habit) is left to the full CLI,
        // which points to `exec` rather than calling it an unknown command.
        let word = run.run.line.trim();
        if word.ends_with(".wasm") && !word.contains(char::is_whitespace) {
            return None;
        }
        if run.home.is_none() && home_env_is_empty() {
            return None;
        }
        verb.then_some(run)
    }

    /// The home it names: `--home`, else the default one.
    pub fn home(&self) -> PathBuf {
        self.home.clone().unwrap_or_else(crate::default_home)
    }

    /// The request for this line from a client that names its engine by
    /// `build` id or by the `engine` binary it would otherwise run.
    pub fn request(self, build: Option<String>, engine: Option<FileId>, bin: &str) -> Request {
        Request {
            build,
            engine,
            env: crate::env_digest(),
            bin: bin.into(),
            line: self.run.line,
            json: self.json,
            stdin: !std::io::stdin().is_terminal(),
            stage: self.run.stage,
            dirs: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::StageArgs;

    fn parse(args: &[&str]) -> Option<RunArgs> {
        RunArgs::parse(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn a_run_line_with_its_flags_is_taken_as_clap_would_read_it() {
        let run = parse(&[
            "--home=/h",
            "run",
            "--json",
            "--profile",
            "posix",
            "--caps=vfs,net",
            "--tenant",
            "t1",
            "--env",
            "A=1",
            "--env=B=2",
            "--timeout",
            "500",
            "--fuel=9",
            "--memory",
            "64",
            "--allow-host",
            "https://api.example.com",
            "--allow-host=tcp://db.example.com:5432",
            "seq 3 | wc -l",
        ])
        .unwrap();
        assert_eq!(run.home, Some(PathBuf::from("/h")));
        assert!(run.json);
        assert_eq!(run.run.line, "seq 3 | wc -l");
        let want = StageArgs {
            profile: "posix".into(),
            caps: Some("vfs,net".into()),
            tenant: "t1".into(),
            env: vec!["A=1".into(), "B=2".into()],
            timeout: Some(500),
            fuel: Some(9),
            memory: Some(64),
            allow_hosts: vec![
                "https://api.example.com".into(),
                "tcp://db.example.com:5432".into(),
            ],
            ..StageArgs::default()
        };
        assert_eq!(run.run.stage, want);
        let granted = parse(&["run", "--grant", "g-0123abcd", "true"]).unwrap();
        assert_eq!(granted.run.stage.grant.as_deref(), Some("g-0123abcd"));
        assert_eq!(parse(&["run", "--", "-n"]).unwrap().run.line, "-n");
        assert_eq!(
            parse(&["run", "true", "--home", "/x"]).unwrap().home,
            Some("/x".into())
        );
    }

    #[test]
    fn everything_else_goes_to_the_engine() {
        for args in [
            &["exec", "x.wasm"][..],
            &["--version"],
            &["-V"],
            &["run", "--help"],
            &["run"],
            &["run", "a", "b"],
            &["run", "--dir", "/d::/d", "true"],
            &["--stub", "wasi:sockets", "run", "true"],
            &["--broker", "kv=k.wasm", "run", "true"],
            &["run", "--timeout", "soon", "true"],
            &["run", "--json=yes", "true"],
            &["run", "--profile"],
            &["run", "--unknown", "true"],
            &["run", "--json", "--json", "true"],
            &["run", "--fuel", "1", "--fuel=2", "true"],
            &["--home", "/a", "run", "true", "--home", "/b"],
            &["run", "--tenant", "--json", "true"],
            &["run", "--fuel", "-1", "true"],
            &["run", "--profile=", "true"],
            &["run", "--caps", "", "true"],
            &[],
        ] {
            assert_eq!(parse(args), None, "{args:?}");
        }
    }

    /// Flags of the verb the reader leaves to the full CLI: preopens, whose
    /// host paths the full CLI checks and makes absolute.
    #[cfg(feature = "clap")]
    const LEFT_TO_ENGINE: &[&str] = &["--dir"];

    /// Each flag of clap's definition, the global ones and the verb's:
    /// whether it takes a value and whether it may repeat.
    #[cfg(feature = "clap")]
    fn clap_flags() -> Vec<(String, bool, bool)> {
        use clap::{ArgAction, Args as _, Command};
        let command =
            crate::RunVerb::augment_args(crate::Globals::augment_args(Command::new("run")));
        command
            .get_arguments()
            .filter_map(|arg| {
                let long = format!("--{}", arg.get_long()?);
                let action = arg.get_action();
                Some((
                    long,
                    action.takes_values(),
                    matches!(action, ArgAction::Append),
                ))
            })
            .collect()
    }

    #[test]
    #[cfg(feature = "clap")]
    fn the_readers_flags_are_claps_flags_taking_a_value_and_repeating_alike() {
        let clap = clap_flags();
        assert!(clap.len() >= 9, "clap's flags: {clap:?}");
        for (flag, takes_value, repeats) in &clap {
            if LEFT_TO_ENGINE.contains(&flag.as_str()) {
                continue;
            }
            let listed = if *takes_value { VALUE_FLAGS } else { SWITCHES };
            assert!(
                listed.contains(&flag.as_str()),
                "{flag}: not in the reader's table"
            );
            assert_eq!(
                REPEATABLE.contains(&flag.as_str()),
                *repeats,
                "{flag}: repeats"
            );
        }
        for flag in VALUE_FLAGS.iter().chain(SWITCHES).chain(LEFT_TO_ENGINE) {
            assert!(
                clap.iter().any(|(name, ..)| name == flag),
                "{flag}: the reader takes a flag clap's definition lacks"
            );
        }
    }

    #[test]
    #[cfg(feature = "clap")]
    fn every_flag_in_the_readers_table_is_read_and_read_as_clap_reads_it() {
        use clap::{Args as _, Command, FromArgMatches as _};
        let clap = Command::new("wb")
            .no_binary_name(true)
            .subcommand(crate::RunVerb::augment_args(Command::new("run")));
        let clap = crate::Globals::augment_args(clap);
        for flag in VALUE_FLAGS.iter().chain(SWITCHES) {
            // `--home` is given in every line, so that `WB_HOME` is not read.
            let mut args = match *flag {
                "--home" => vec!["run", flag],
                _ => vec!["--home", "/h", "run", flag],
            };
            if VALUE_FLAGS.contains(flag) {
                args.push("1");
            }
            args.push("true");
            let read = parse(&args).unwrap_or_else(|| panic!("{flag}: not taken"));
            let matches = clap.clone().try_get_matches_from(&args).unwrap();
            let globals = crate::Globals::from_arg_matches(&matches).unwrap();
            let (_, run) = matches.subcommand().unwrap();
            let run = crate::RunVerb::from_arg_matches(run).unwrap();
            assert_eq!(
                (read.home, read.json, read.run),
                (globals.home, globals.json, run),
                "{args:?}"
            );
        }
    }
}
