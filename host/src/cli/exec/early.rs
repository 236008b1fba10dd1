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

/// `[--home DIR] exec [flags] FILE [-- ARGS...]`, with its `--home`; `None`
/// for anything clap should read.
pub(crate) fn early(args: &[OsString]) -> Option<(Args, Option<PathBuf>)> {
    let mut args = args.iter().map(|a| a.to_str());
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
        file: PathBuf::new(),
        args: Vec::new(),
    };
    let (mut verb, mut file, mut trailing) = (false, false, false);
    // clap refuses a flag given twice, unless it may repeat.
    let mut seen: Vec<&str> = Vec::new();
    while let Some(arg) = args.next() {
        let arg = arg?;
        if trailing {
            exec.args.push(arg.to_string());
            continue;
        }
        if arg == "--" {
            if !file {
                return None;
            }
            trailing = true;
            continue;
        }
        if !arg.starts_with('-') {
            match (verb, file) {
                (false, _) if arg == "exec" => verb = true,
                (true, false) if !arg.is_empty() => {
                    exec.file = PathBuf::from(arg);
                    file = true;
                }
                _ => return None,
            }
            continue;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg, None),
        };
        if flag != "--env" && flag != "--dir" {
            if seen.contains(&flag) {
                return None;
            }
            seen.push(flag);
        }
        if flag == "--framed" && verb && inline.is_none() {
            exec.framed = true;
            continue;
        }
        // clap reads a next argument that starts with `-` as a flag, and
        // refuses an empty value: both are left to it.
        let mut value = || {
            inline
                .or_else(|| args.next()?.filter(|v| !v.starts_with('-')))
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        match flag {
            "--home" => home = Some(PathBuf::from(value()?)),
            "--profile" if verb => exec.profile = value()?,
            "--caps" if verb => exec.caps = Some(value()?),
            "--dir" if verb => exec.dirs.push(value()?),
            "--timeout" if verb => exec.timeout = Some(value()?.parse().ok()?),
            "--memory" if verb => exec.memory = Some(value()?.parse().ok()?),
            "--fuel" if verb => exec.fuel = value()?.parse().ok()?,
            "--env" if verb => exec.env.push(value()?),
            "--expect-sha256" if verb => exec.expect_sha256 = Some(value()?),
            "--tenant" if verb => exec.tenant = value()?,
            "--id" if verb => exec.id = Some(value()?),
            _ => return None,
        }
    }
    // clap reads an empty `WB_HOME` as `--home` without its value.
    if home.is_none() && std::env::var_os("WB_HOME").is_some_and(|h| h.is_empty()) {
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
        assert_eq!(taken, 9, "the shapes the early reader takes");
    }
}
