//! A plain `exec` line read without building clap's parser of every verb:
//! `wbx exec hello.wasm` and the line the `os_process` tier starts its
//! children with both begin sooner. It takes a line only when clap would
//! read it alike (the test below holds the two readers to each other);
//! anything else (help, `--broker`, `--stub`, a flag given twice that may
//! not repeat, a value that looks like a flag or is empty)
//! is left to clap, which reads it or names what is wrong.

use super::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use workbooks_wire::{Arg, ArgReader, home_env_is_empty};

/// `[--home DIR] exec [flags] FILE [-- ARGS...]`, with its `--home`; `None`
/// for anything clap should read.
pub(crate) fn early(args: &[OsString]) -> Option<(Args, Option<PathBuf>)> {
    let mut args = ArgReader::new(args, &["--env", "--dir"]);
    let mut home = None;
    let mut exec = Args {
        profile: "compute".into(),
        caps: None,
        dirs: Vec::new(),
        timeout: None,
        memory: None,
        fuel: workbooks::limits::COMMAND_FUEL,
        env: Vec::new(),
        expect_sha256: None,
        tenant: "default".into(),
        id: None,
        framed: false,
        relay: None,
        handoff: None,
        no_new_threads: false,
        file: PathBuf::new(),
        args: Vec::new(),
    };
    let (mut verb, mut file, mut trailing) = (false, false, false);
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg? {
            // After `--`, every argument is the command's.
            Arg::Word(word) if trailing => {
                exec.args.push(word.to_string());
                continue;
            }
            Arg::Word(word) => {
                match (verb, file) {
                    (false, _) if word == "exec" => verb = true,
                    (true, false) if !word.is_empty() && word != "-" => {
                        exec.file = PathBuf::from(word);
                        file = true;
                    }
                    _ => return None,
                }
                continue;
            }
            Arg::EndOfFlags if file => {
                trailing = true;
                continue;
            }
            Arg::EndOfFlags => return None,
            Arg::Flag(flag, inline) => (flag, inline),
        };
        if flag == "--framed" && verb && inline.is_none() {
            exec.framed = true;
            continue;
        }
        if flag == "--no-new-threads" && verb && inline.is_none() {
            exec.no_new_threads = true;
            continue;
        }
        let value = args.value(inline);
        match flag {
            "--home" => home = Some(PathBuf::from(value?)),
            "--profile" if verb => exec.profile = value?,
            "--caps" if verb => exec.caps = Some(value?),
            "--dir" if verb => exec.dirs.push(value?),
            "--timeout" if verb => exec.timeout = Some(value?.parse().ok()?),
            "--memory" if verb => exec.memory = Some(value?.parse().ok()?),
            "--fuel" if verb => exec.fuel = value?.parse().ok()?,
            "--env" if verb => exec.env.push(value?),
            "--expect-sha256" if verb => exec.expect_sha256 = Some(value?),
            "--tenant" if verb => exec.tenant = value?,
            "--id" if verb => exec.id = Some(value?),
            "--relay" if verb => exec.relay = Some(value?.parse().ok()?),
            "--handoff" if verb => exec.handoff = Some(value?),
            _ => return None,
        }
    }
    if home.is_none() && home_env_is_empty() {
        return None;
    }
    // The container child's flags come only with --framed (clap says so).
    let child = exec.relay.is_some() || exec.handoff.is_some() || exec.no_new_threads;
    if child && !exec.framed {
        return None;
    }
    file.then_some((exec, home))
}

#[cfg(test)]
mod tests {
    /// Argument shapes: those the early reader takes, and those it must
    /// leave to clap.
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
    fn every_exec_line_read_without_clap_is_read_as_clap_reads_it() {
        let taken = crate::taken_as_clap_takes(SHAPES, super::early, |full, early, args| {
            let crate::Command::Exec(full) = full else {
                panic!("{args:?} is not an exec for clap");
            };
            assert_eq!(full, early, "{args:?}");
        });
        assert_eq!(taken, 10, "the shapes the early reader takes");
    }
}
