//! Running wbox in-process with injected stdin, plus scratch files.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// What an applet produced.
pub struct Outcome {
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub code: u8,
}

impl Outcome {
    /// Stdout as text (tests only feed valid UTF-8 when they use this).
    pub fn text(&self) -> String {
        String::from_utf8(self.stdout.clone()).expect("stdout is UTF-8")
    }
}

/// Runs `wbox <applet> args...` with `stdin` as standard input.
pub fn run(applet: &str, args: &[&str], stdin: &[u8]) -> Outcome {
    let mut argv: Vec<OsString> = vec!["session-id".into(), applet.into()];
    argv.extend(args.iter().map(OsString::from));
    run_argv(&argv, stdin)
}

/// Runs wbox with a complete argv.
pub fn run_argv(argv: &[OsString], stdin: &[u8]) -> Outcome {
    let mut input = stdin;
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let code = {
        let mut io = wbox::Io {
            stdin: &mut input,
            stdout: &mut stdout,
            stderr: &mut stderr,
        };
        wbox::run(argv, &mut io)
    };
    Outcome {
        stdout,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        code,
    }
}

/// Stdout of a run that must succeed.
pub fn output(applet: &str, args: &[&str], stdin: &str) -> String {
    let outcome = run(applet, args, stdin.as_bytes());
    assert_eq!(outcome.code, 0, "stderr: {}", outcome.stderr);
    outcome.text()
}

/// A scratch directory removed when dropped.
pub struct Scratch {
    root: PathBuf,
}

static NEXT_SCRATCH: AtomicUsize = AtomicUsize::new(0);

impl Scratch {
    pub fn new() -> Scratch {
        let unique = NEXT_SCRATCH.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("wbox-tests-{}-{unique}", std::process::id()));
        std::fs::create_dir_all(&root).expect("create scratch dir");
        Scratch { root }
    }

    /// Writes `content` to `name` and returns its path as a string.
    pub fn file(&self, name: &str, content: &[u8]) -> String {
        let path = self.root.join(name);
        std::fs::write(&path, content).expect("write scratch file");
        path.to_string_lossy().into_owned()
    }

    /// Path of `name` inside the scratch directory.
    pub fn path(&self, name: &str) -> String {
        self.root.join(name).to_string_lossy().into_owned()
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}
