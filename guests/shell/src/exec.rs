//! Running a parsed script: each simple command through `commands`, stdout
//! piped byte-exact into the next stage, `&&`/`||` on exit status,
//! redirections confined to the preopened directories.

use crate::bindings::exports::workbooks::engine::shell::{Error, Outcome, Stage};
use crate::bindings::workbooks::engine::commands;
use crate::parse::{Join, RedirectKind, Script, Simple};
use std::collections::HashMap;
use std::io::Write;
use std::time::Instant;

/// The state of one `run`.
pub struct Session {
    vars: HashMap<String, String>,
    preopens: Vec<Vec<String>>,
    stdin: Option<Vec<u8>>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    stages: Vec<Stage>,
}

/// Splits a path into normal components, resolving `.` and `..`
/// lexically; `None` if `..` climbs above the root.
fn components(path: &str) -> Option<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            s => out.push(s.to_string()),
        }
    }
    Some(out)
}

impl Session {
    /// A session over the given preopened directory names.
    pub fn new(stdin: Vec<u8>, preopens: Vec<String>) -> Self {
        Self {
            vars: HashMap::new(),
            preopens: preopens.iter().filter_map(|p| components(p)).collect(),
            stdin: Some(stdin),
            stdout: Vec::new(),
            stderr: Vec::new(),
            stages: Vec::new(),
        }
    }

    /// The path to open for a redirection target, or `outside-sandbox`.
    fn resolve(&self, target: &str) -> Result<String, Error> {
        let outside = || Error::OutsideSandbox(target.to_string());
        let comps = components(target).ok_or_else(outside)?;
        let inside = self
            .preopens
            .iter()
            .any(|root| comps.len() >= root.len() && comps[..root.len()] == root[..]);
        if !inside {
            return Err(outside());
        }
        Ok(format!("/{}", comps.join("/")))
    }

    fn read_file(&self, target: &str) -> Result<Vec<u8>, Error> {
        if target == "/dev/null" {
            return Ok(Vec::new());
        }
        let path = self.resolve(target)?;
        std::fs::read(&path).map_err(|e| Error::Redirect(format!("{target}: {e}")))
    }

    fn write_file(&self, target: &str, bytes: &[u8], append: bool) -> Result<(), Error> {
        if target == "/dev/null" {
            return Ok(());
        }
        let path = self.resolve(target)?;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(&path)
            .map_err(|e| Error::Redirect(format!("{target}: {e}")))?;
        file.write_all(bytes)
            .map_err(|e| Error::Redirect(format!("{target}: {e}")))
    }

    /// Runs a whole script; the exit status of the last stage that ran.
    pub fn run(mut self, script: Script) -> Result<Outcome, Error> {
        let mut status = 0;
        for (join, pipeline) in script {
            let go = match join {
                Join::Always => true,
                Join::IfOk => status == 0,
                Join::IfFailed => status != 0,
            };
            if go {
                status = self.pipeline(pipeline)?;
            }
        }
        Ok(Outcome {
            stdout: self.stdout,
            stderr: self.stderr,
            exit_code: status,
            stages: self.stages,
        })
    }

    fn pipeline(&mut self, stages: Vec<Simple>) -> Result<i32, Error> {
        // The line's stdin goes to the first stage that reads it: a first
        // stage with `<` reads its file and leaves stdin for later.
        let first_reads_file = stages
            .first()
            .is_some_and(|s| s.redirects.iter().any(|r| r.kind == RedirectKind::In));
        let mut input = if first_reads_file {
            Vec::new()
        } else {
            self.stdin.take().unwrap_or_default()
        };
        let mut status = 0;
        let last = stages.len() - 1;
        for (i, simple) in stages.into_iter().enumerate() {
            let mut words = simple.words.iter().peekable();
            let mut assignments = Vec::new();
            while let Some((name, value)) = words.peek().and_then(|w| w.assignment()) {
                assignments.push((name, value.expand(&self.vars)));
                words.next();
            }
            let argv: Vec<String> = words.map(|w| w.expand(&self.vars)).collect();
            let redirects: Vec<(RedirectKind, String)> = simple
                .redirects
                .iter()
                .map(|r| (r.kind, r.target.expand(&self.vars)))
                .collect();
            // Commands get no environment: assignments set shell variables.
            self.vars.extend(assignments);
            let mut sink: Option<(String, bool)> = None;
            for (kind, target) in &redirects {
                match kind {
                    RedirectKind::In => input = self.read_file(target)?,
                    RedirectKind::Out | RedirectKind::Append => {
                        let append = *kind == RedirectKind::Append;
                        // Like sh, every output target is created or truncated;
                        // the last one receives the output.
                        self.write_file(target, b"", append)?;
                        sink = Some((target.clone(), append));
                    }
                }
            }
            let Some((name, args)) = argv.split_first() else {
                input = Vec::new();
                status = 0;
                continue;
            };
            let start = Instant::now();
            let out = commands::run_command(name, args, &std::mem::take(&mut input))
                .map_err(|e| Error::Command((name.clone(), e)))?;
            self.stages.push(Stage {
                argv: argv.clone(),
                exit_code: out.exit_code,
                elapsed_us: start.elapsed().as_micros() as u64,
                stdout_bytes: out.stdout.len() as u64,
                stderr_bytes: out.stderr.len() as u64,
            });
            self.stderr.extend_from_slice(&out.stderr);
            status = out.exit_code;
            match sink {
                Some((target, append)) => self.write_file(&target, &out.stdout, append)?,
                None if i == last => self.stdout.extend_from_slice(&out.stdout),
                None => input = out.stdout,
            }
        }
        Ok(status)
    }
}
