//! Runs the `jq` command in memory and creates scratch files for tests.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one run of the command produced.
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    pub code: u8,
}

/// Runs `jq` with `args`, feeding `stdin`.
pub fn jq(args: &[&str], stdin: &str) -> Outcome {
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let code = jq::run(&args, &mut stdin.as_bytes(), &mut stdout, &mut stderr);
    Outcome {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        code,
    }
}

/// Writes `contents` to a fresh file in the temp directory.
pub fn scratch_file(contents: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let number = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("jq-test-{}-{number}.json", std::process::id()));
    std::fs::write(&path, contents).expect("scratch file is writable");
    path
}
