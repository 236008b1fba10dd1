//! A plain `exec` line read by a parser of that verb alone, built from the
//! same definitions as the full CLI's ([`Args`], [`HomeFlag`]):
//! `wbx exec hello.wasm` and the line the `os_process` tier starts its
//! children with both begin without building the parser of every verb.
//! Anything it refuses (another verb, help, `--broker`, `--stub`) is left
//! to the full parser, which reads it or names what is wrong.

use super::Args;
use clap::Parser as _;
use std::ffi::OsString;
use std::path::PathBuf;
use workbooks_wire::HomeFlag;

/// `[--home DIR] exec [flags] FILE [-- ARGS...]`, and no other verb.
#[derive(clap::Parser)]
#[command(no_binary_name = true)]
struct ExecOnly {
    #[command(flatten)]
    home: HomeFlag,
    #[command(subcommand)]
    verb: Verb,
}

#[derive(clap::Subcommand)]
enum Verb {
    Exec(Args),
}

/// The `exec` line in `args`, with its `--home`; `None` for anything the
/// full parser should read.
pub(crate) fn early(args: &[OsString]) -> Option<(Args, Option<PathBuf>)> {
    let ExecOnly {
        home,
        verb: Verb::Exec(exec),
    } = ExecOnly::try_parse_from(args).ok()?;
    Some((exec, home.home))
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
            "--framed",
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
        &[
            "--home",
            "/tmp/.workbooks",
            "exec",
            "--framed",
            "--no-new-threads",
            "--relay=5",
            r#"--handoff={"fd":6,"compiled":"ab","module":false}"#,
            "--id=s-1",
            "/proc/self/fd/7",
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
        assert_eq!(taken, 14, "the shapes the one-verb parser takes");
    }
}
