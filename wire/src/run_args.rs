//! A `run` line read straight from the command line, without the full
//! CLI's argument parser, and its hand-off to the daemon serving the home.
//! Both the thin client `wb` and `wbx` itself take this path first: a
//! daemon-served line then costs a socket round trip, not the start of an
//! engine or of a parser for every verb. Anything this reader does not take
//! exactly as the full parser would (another verb, help, `--dir`,
//! `--broker`, a value that does not parse) is left to the full CLI.

use crate::args::{Arg, ArgReader, home_env_is_empty};
use crate::relay::{Answer, open, relay};
use crate::request::{FileId, Request, StageArgs};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// `[--home DIR] run [flags] LINE`, as far as a client reads it without
/// the full parser.
#[derive(Debug, PartialEq)]
pub struct RunArgs {
    /// `--home`, when given.
    pub home: Option<PathBuf>,
    /// `--json`.
    pub json: bool,
    /// The stage flags.
    pub stage: StageArgs,
    /// The command line.
    pub line: String,
}

impl RunArgs {
    /// The arguments of a `run` verb a client can send as they are; `None` for
    /// anything else (another verb, help, a flag it does not take, a value
    /// that does not parse), which `wbx` then reads and answers.
    pub fn parse(args: &[OsString]) -> Option<RunArgs> {
        let mut args = ArgReader::new(args, &["--env"]);
        let mut run = RunArgs {
            home: None,
            json: false,
            stage: StageArgs::default(),
            line: String::new(),
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
            if flag == "--json" && verb && inline.is_none() {
                run.json = true;
                continue;
            }
            let value = args.value(inline);
            let stage = &mut run.stage;
            match flag {
                "--home" => run.home = Some(PathBuf::from(value?)),
                "--profile" if verb => stage.profile = value?,
                "--caps" if verb => stage.caps = Some(value?),
                "--tenant" if verb => stage.tenant = value?,
                "--env" if verb => stage.env.push(value?),
                "--timeout" if verb => stage.timeout = Some(value?.parse().ok()?),
                "--fuel" if verb => stage.fuel = Some(value?.parse().ok()?),
                "--memory" if verb => stage.memory = Some(value?.parse().ok()?),
                _ => return None,
            }
        }
        run.line = line?;
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
            line: self.line,
            json: self.json,
            stdin: !std::io::stdin().is_terminal(),
            stage: self.stage,
            dirs: Vec::new(),
        }
    }
}

/// The socket of the daemon serving `home`, connected; `None` when none
/// listens there, when the process listening is not this user's (nothing
/// is sent to it), or when `WB_DAEMON=0` asks that no line go through one.
/// Connected before a request is built: with no daemon, a client spends
/// nothing on one.
pub fn connect(home: &Path) -> Option<UnixStream> {
    if std::env::var_os("WB_DAEMON").is_some_and(|v| v == "0") {
        return None;
    }
    let path = crate::socket_path(home, false).ok()?;
    let stream = UnixStream::connect(path).ok()?;
    crate::peer_is_me(&stream).then_some(stream)
}

/// What became of a line offered to a daemon.
pub enum Served {
    /// The daemon ran it; its exit code.
    Exit(u8),
    /// The daemon refused it; why. The client runs it itself.
    Refused(String),
    /// The socket failed before the daemon answered; the client runs it.
    Unanswered,
}

/// Offers `request` on `stream` (from [`connect`]); once accepted, the line
/// is the daemon's and this relays it to its exit code (`bin` starts the
/// message of a daemon lost mid-line).
pub fn offer(stream: UnixStream, request: &Request, bin: &str) -> Served {
    match open(stream, request) {
        Ok(Answer::Accepted { reader, writer }) => Served::Exit(relay(reader, &writer, bin)),
        Ok(Answer::Refused(why)) => Served::Refused(why),
        Err(_) => Served::Unanswered,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            "seq 3 | wc -l",
        ])
        .unwrap();
        assert_eq!(run.home, Some(PathBuf::from("/h")));
        assert!(run.json);
        assert_eq!(run.line, "seq 3 | wc -l");
        let want = StageArgs {
            profile: "posix".into(),
            caps: Some("vfs,net".into()),
            tenant: "t1".into(),
            env: vec!["A=1".into(), "B=2".into()],
            timeout: Some(500),
            fuel: Some(9),
            memory: Some(64),
            ..StageArgs::default()
        };
        assert_eq!(run.stage, want);
        assert_eq!(parse(&["run", "--", "-n"]).unwrap().line, "-n");
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
            &["--json", "run", "true"],
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
}
