//! Runs the `grep` command in memory and creates scratch files for tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one run of the command produced.
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
}

/// Runs `grep` with `args`, feeding `stdin`.
pub fn grep_bytes(args: &[&str], stdin: &[u8]) -> (Vec<u8>, Outcome) {
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let code = grep::run(&args, &mut &stdin[..], &mut stdout, &mut stderr);
    let outcome = Outcome {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        code,
    };
    (stdout, outcome)
}

/// Runs `grep` with `args`, feeding `stdin`.
pub fn grep(args: &[&str], stdin: &str) -> Outcome {
    grep_bytes(args, stdin.as_bytes()).1
}

/// Just the standard output of a run.
pub fn lines(args: &[&str], stdin: &str) -> String {
    grep(args, stdin).stdout
}

/// A fresh, empty directory in the temp directory.
pub fn scratch_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let number = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("grep-test-{}-{number}", std::process::id()));
    let _ = std::fs::remove_dir_all(&path);
    std::fs::create_dir_all(&path).expect("scratch directory is creatable");
    path
}

/// Writes `contents` to `name` inside `dir` and returns the path as text.
pub fn write(dir: &std::path::Path, name: &str, contents: &str) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("parent directory is creatable");
    }
    std::fs::write(&path, contents).expect("scratch file is writable");
    path.to_str().expect("temp paths are UTF-8").to_owned()
}
