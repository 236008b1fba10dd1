//! A plain `exec` line read by a parser of that verb alone, built from the
//! same definitions as the full CLI's ([`Args`], [`Globals`]):
//! `wbx exec hello.wasm` begins without building the parser of every
//! verb.
//! Anything it refuses (another verb, help, `--broker`, `--stub`) is left
//! to the full parser, which reads it or names what is wrong.

use super::Args;
use clap::Parser as _;
use std::ffi::OsString;
use workbooks_wire::Globals;

/// `[--home DIR] exec [flags] FILE [-- ARGS...]`, and no other verb.
#[derive(clap::Parser)]
#[command(no_binary_name = true)]
struct ExecOnly {
    #[command(flatten)]
    globals: Globals,
    #[command(subcommand)]
    verb: Verb,
}

#[derive(clap::Subcommand)]
enum Verb {
    Exec(Args),
}

/// The `exec` line in `args`, with its global flags; `None` for anything
/// the full parser should read.
pub(crate) fn early(args: &[OsString]) -> Option<(Args, Globals)> {
    let ExecOnly {
        globals,
        verb: Verb::Exec(exec),
    } = ExecOnly::try_parse_from(args).ok()?;
    // A flag this parser does not know (`--broker`, a typo) lands in FILE:
    // the full parser reads it or names it.
    if exec.stray_flag().is_some() {
        return None;
    }
    Some((exec, globals))
}

#[cfg(test)]
mod tests {
    /// Argument shapes: those the one-verb parser takes, and those it
    /// leaves to the full one.
    const SHAPES: &[&[&str]] = &[
        &["exec", "hello.wasm"],
        &["--home", "/h", "exec", "hello.wasm"],
        &["exec", "hello.wasm", "--home=/x"],
        &["exec", "hello.wasm", "--", "a", "-b", "--c", ""],
        &[
            "exec",
            "--profile=posix",
            "--dir",
            "/d::/g",
            "--dir=/e::/f::ro",
            "t.wasm",
        ],
        &[
            "exec", "--env", "A=1", "--env=B=", "--memory", "64", "t.wasm", "--", "x",
        ],
        &[
            "--home",
            "/h",
            "exec",
            "--id=s-1",
            "--profile",
            "posix",
            "--caps",
            "vfs,net",
            "--tenant=t1",
            "--timeout",
            "500",
            "--fuel",
            "9",
            "--expect-sha256",
            "ab12",
            "--env=K=V",
            "--memory",
            "1",
            "t.wasm",
            "--",
            "y",
        ],
        &["exec", "--relay", "5", "t.wasm"],
        &["exec", "--no-new-threads", "t.wasm"],
        &["exec", "--framed", "--relay", "5", "--relay=6", "t.wasm"],
        &["exec", "--framed", "--relay", "five", "t.wasm"],
        &["exec", "t.wasm", "--timeout", "5", "--", "--timeout", "6"],
        &["exec", "hello.wasm", "--", "a", "--", "b"],
        &["exec", "--", "hello.wasm"],
        &["exec", "a.wasm", "b.wasm"],
        &["exec", "-"],
        &["exec", ""],
        &["exec"],
        &["exec", "--fuel", "1", "--fuel=2", "t.wasm"],
        &["exec", "--profile", "--framed", "t.wasm"],
        &["exec", "--env", "-x", "t.wasm"],
        &["exec", "--caps", "", "t.wasm"],
        &["exec", "--tenant=", "t.wasm"],
        &["exec", "--timeout", "soon", "t.wasm"],
        &["exec", "--memory", "-1", "t.wasm"],
        &["exec", "--framed=true", "t.wasm"],
        &["exec", "--framed", "--framed", "t.wasm"],
        &["--framed", "exec", "t.wasm"],
        &["--home=", "exec", "t.wasm"],
        &["--home", "/a", "exec", "t.wasm", "--home", "/b"],
        &["--broker", "kv=k.wasm", "exec", "t.wasm"],
        &["--stub=wasi:sockets", "exec", "t.wasm"],
        &["exec", "--help"],
        &["exec", "-h"],
        &["run", "true"],
        &["exec", "t.wasm", "extra", "--", "x"],
    ];

    #[test]
    fn every_exec_line_the_one_verb_parser_takes_is_read_as_the_full_parser_reads_it() {
        let taken = crate::taken_as_clap_takes(SHAPES, super::early, |full, early, args| {
            let crate::Command::Exec(full) = full else {
                panic!("{args:?} is not an exec for clap");
            };
            assert_eq!(full, early, "{args:?}");
        });
        assert_eq!(taken, 19, "the shapes the one-verb parser takes");
    }

    fn read(args: &[&str]) -> super::Args {
        let os: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        super::early(&os)
            .unwrap_or_else(|| panic!("{args:?} not taken"))
            .0
    }

    #[test]
    fn everything_after_the_file_is_the_guests_as_wasmtime_run_passes_it() {
        let exec = read(&["exec", "t.wasm", "a", "-b", "--timeout", "5", "--help"]);
        assert_eq!(exec.file(), std::path::PathBuf::from("t.wasm"));
        assert_eq!(exec.guest_args(), ["a", "-b", "--timeout", "5", "--help"]);
        assert_eq!(exec.timeout, None, "a flag after the file is the guest's");
        assert_eq!(read(&["exec", "--timeout", "5", "t.wasm"]).timeout, Some(5));
    }

    #[test]
    fn one_dash_dash_right_after_the_file_is_taken_and_any_other_is_the_guests() {
        assert_eq!(read(&["exec", "t.wasm", "--", "a"]).guest_args(), ["a"]);
        assert_eq!(
            read(&["exec", "t.wasm", "--", "--", "a"]).guest_args(),
            ["--", "a"]
        );
        assert_eq!(
            read(&["exec", "t.wasm", "a", "--", "b"]).guest_args(),
            ["a", "--", "b"]
        );
        assert_eq!(read(&["exec", "--", "t.wasm", "a"]).guest_args(), ["a"]);
        assert!(read(&["exec", "t.wasm"]).guest_args().is_empty());
    }
}
