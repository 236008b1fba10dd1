//! Running a parsed script: each pipeline's stages at once through
//! `commands`, stdout streamed byte-exact into the next stage, `&&`/`||` on exit status,
//! redirections confined to the preopened directories.

use crate::bindings::exports::workbooks::engine::shell::{Error, Outcome, Stage};
use crate::bindings::workbooks::engine::command_types::{PipelineStage, StageInput, StageSink};
use crate::bindings::workbooks::engine::commands;
use crate::parse::{Join, RedirectKind, Script, Simple};
use std::collections::HashMap;
use std::io::Write;

/// The state of one `run`.
pub struct Session {
    vars: HashMap<String, String>,
    preopens: Vec<Vec<String>>,
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
    pub fn new(preopens: Vec<String>) -> Self {
        Self {
            vars: HashMap::new(),
            preopens: preopens.iter().filter_map(|p| components(p)).collect(),
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
            stderr: self.stderr,
            exit_code: status,
            stages: self.stages,
        })
    }

    fn pipeline(&mut self, stages: Vec<Simple>) -> Result<i32, Error> {
        let last = stages.len() - 1;
        // The stages that run, the file each redirected stdout is for, and
        // whether the line ends on a stage with no command.
        let mut specs: Vec<PipelineStage> = Vec::new();
        let mut sinks: Vec<Option<(String, bool)>> = Vec::new();
        let mut ends_empty = false;
        // Whether the next stage reads the one before it.
        let mut piped = true;
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
            // The line's stdin goes to a first stage without its own `<`.
            let mut input = if i == 0 {
                StageInput::Session
            } else if piped {
                StageInput::Pipe
            } else {
                StageInput::Bytes(Vec::new())
            };
            let mut sink: Option<(String, bool)> = None;
            for (kind, target) in &redirects {
                match kind {
                    RedirectKind::In => input = StageInput::Bytes(self.read_file(target)?),
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
                // No command: nothing runs, the next stage reads nothing.
                piped = false;
                ends_empty = i == last;
                continue;
            };
            piped = sink.is_none();
            specs.push(PipelineStage {
                name: name.clone(),
                argv: args.to_vec(),
                input,
                // A redirected stdout comes back here for its file; the
                // last stage writes the line's stdout itself.
                stdout: if sink.is_some() {
                    StageSink::Capture
                } else if i == last {
                    StageSink::Session
                } else {
                    StageSink::Pipe
                },
            });
            sinks.push(sink);
        }
        if specs.is_empty() {
            return Ok(0);
        }
        let outputs = commands::run_pipeline(&specs).map_err(|f| {
            let name = specs
                .get(f.index as usize)
                .map(|s| s.name.clone())
                .unwrap_or_default();
            Error::Command((name, f.error))
        })?;
        let mut status = 0;
        for ((spec, sink), out) in specs.into_iter().zip(sinks).zip(outputs) {
            let mut argv = vec![spec.name];
            argv.extend(spec.argv);
            self.stages.push(Stage {
                argv,
                exit_code: out.output.exit_code,
                elapsed_us: out.elapsed_us,
                stdout_bytes: out.stdout_bytes,
                stderr_bytes: out.output.stderr.len() as u64,
            });
            self.stderr.extend_from_slice(&out.output.stderr);
            status = out.output.exit_code;
            if let Some((target, append)) = sink {
                self.write_file(&target, &out.output.stdout, append)?;
            }
        }
        Ok(if ends_empty { 0 } else { status })
    }
}
