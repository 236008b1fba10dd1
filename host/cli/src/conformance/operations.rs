//! The WASI test suite's operation format (`wasi-testsuite-p3/<folder>/`,
//! the suite's specification.md beside it): per case `NAME.wasm` and an
//! optional `NAME.json` with `operations` (`run` with args, env and root;
//! `write` to stdin; `read` of stdout or stderr; `connect`, `send` and
//! `recv` against a socket the guest serves; `wait` for the exit code),
//! the `proposals` it needs and the `world` it is (`wasi:cli/command` by
//! default, or `wasi:http/service`: [`service`]). A legacy `root` at the
//! top level is a `run` with that root.
//!
//! Every case runs through the path `wbx exec` takes: docked under the
//! narrowest profile that grants its imports and run with the case's args
//! and environment, its stdio streamed so each operation meets the guest
//! while it runs.

use super::{Tally, service};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use workbooks::pipes::{PipeWriter, pipe};
use workbooks::{Artifact, Engine, Output, Preopen, SessionOptions, Stdin};

/// The suite's folder under the suites directory.
pub(crate) const SUITE: &str = "wasi-testsuite-p3";

/// How long one `read` or `recv` waits for its bytes.
const READ_WAIT: Duration = Duration::from_secs(10);

/// Bytes each stdio pipe holds before its writer waits.
const PIPE_BYTES: usize = 64 << 10;

/// A case's `NAME.json`.
#[derive(Debug, Default, Deserialize)]
struct Spec {
    #[serde(default)]
    operations: Vec<Op>,
    /// The legacy form's preopened root.
    root: Option<String>,
    world: Option<String>,
    /// The peers a `wasi:http/service` case's guest calls.
    #[serde(default)]
    servers: Vec<service::Peer>,
}

/// One operation.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Op {
    Run {
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        root: Option<String>,
    },
    Wait {
        #[serde(default)]
        exit_code: i32,
    },
    Read {
        #[serde(default = "stdout")]
        id: String,
        #[serde(default)]
        payload: String,
    },
    Write {
        #[serde(default)]
        payload: String,
    },
    Connect {
        #[serde(default = "server")]
        id: String,
        #[serde(default = "tcp")]
        protocol_type: String,
    },
    Send {
        id: String,
        #[serde(default)]
        payload: String,
    },
    Recv {
        id: String,
        #[serde(default)]
        payload: String,
    },
    /// A request to a served `wasi:http/service` component.
    Request(service::Request),
    /// The end of serving (the suite sends SIGINT).
    Kill {},
    /// An operation this runner does not know.
    #[serde(other)]
    Other,
}

fn stdout() -> String {
    "stdout".into()
}

fn server() -> String {
    "server".into()
}

fn tcp() -> String {
    "tcp".into()
}

/// Runs every case of one folder.
pub(crate) async fn run_dir(engine: &Engine, dir: &Path, verbose: bool) -> Tally {
    super::wasi::tally_dir(
        dir,
        verbose,
        |wasm| async move { run_case(engine, &wasm).await },
    )
    .await
}

/// A guest's run: aborted when the case ends without waiting for it (a
/// failed operation, a second `run`).
struct Running(tokio::task::JoinHandle<Result<workbooks::RunOutput, workbooks::RunError>>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The guest's stdio, as the runner holds it while the guest runs.
struct Stdio {
    stdin: Option<PipeWriter>,
    stdout: workbooks::PipeReader,
    stderr: workbooks::PipeReader,
}

/// Runs one case; the profile it ran under, or why it failed.
async fn run_case(engine: &Engine, wasm: &Path) -> Result<String, String> {
    let mut spec: Spec = match std::fs::read_to_string(wasm.with_extension("json")) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("bad json: {e}"))?,
        Err(_) => Spec::default(),
    };
    match spec.world.as_deref() {
        None | Some("wasi:cli/command") => {}
        Some("wasi:http/service") => return run_service(engine, wasm, spec).await,
        Some(world) => return Err(format!("world {world}: not run by this runner")),
    }
    if spec.operations.is_empty() {
        spec.operations = vec![
            Op::Run {
                args: Vec::new(),
                env: BTreeMap::new(),
                root: spec.root.take(),
            },
            Op::Wait { exit_code: 0 },
        ];
    }
    let (docked, profile) = super::wasi::dock_narrowest(engine, wasm)?;
    // argv[0] is the file name, as a runtime run on the file gives it.
    let file = wasm.file_name().unwrap_or_default().to_string_lossy();
    // Declared first, dropped last: the scratch root outlives the run.
    let mut scratch = None;
    let mut running: Option<Running> = None;
    let mut stdio: Option<Stdio> = None;
    let mut peers: BTreeMap<String, tokio::net::TcpStream> = BTreeMap::new();
    for op in spec.operations {
        match op {
            Op::Run { args, env, root } => {
                let mut opts = SessionOptions::new(super::wasi::id_of(&file), "conformance");
                // The program name the suite's runner gives: the file's,
                // as `wbx exec cli-env.wasm` gives it.
                opts.program = Some(file.to_string());
                opts.args = args;
                opts.env = env.into_iter().collect();
                let (stdin_w, stdin_r) = pipe(PIPE_BYTES, b"");
                let (stdout_w, stdout_r) = pipe(PIPE_BYTES, b"");
                let (stderr_w, stderr_r) = pipe(PIPE_BYTES, b"");
                opts.stdin = Stdin::Pipe(stdin_r);
                opts.stdout = Output::Pipe(stdout_w);
                opts.stderr = Output::Pipe(stderr_w);
                if let Some(root) = root.or_else(|| spec.root.take()) {
                    let copy = tempfile::tempdir().map_err(|e| format!("scratch: {e}"))?;
                    let from = wasm.parent().unwrap_or(Path::new(".")).join(&root);
                    super::wasi::copy_tree(&from, copy.path())
                        .map_err(|e| format!("copying {root}: {e}"))?;
                    opts.dirs.push(Preopen {
                        host: copy.path().to_path_buf(),
                        guest: "/".into(),
                        read_only: false,
                    });
                    scratch = Some(copy);
                }
                let (engine, docked) = (engine.clone(), docked.clone());
                running = Some(Running(tokio::spawn(async move {
                    engine.run(&docked, opts).await
                })));
                stdio = Some(Stdio {
                    stdin: Some(stdin_w),
                    stdout: stdout_r,
                    stderr: stderr_r,
                });
            }
            Op::Write { payload } => {
                let io = stdio.as_mut().ok_or("write before run")?;
                let mut stdin = io.stdin.take().ok_or("a second write: stdin is closed")?;
                tokio::time::timeout(READ_WAIT, stdin.write_all(payload.as_bytes()))
                    .await
                    .map_err(|_| "write: the guest did not read its stdin".to_string())?
                    .map_err(|e| format!("write: {e}"))?;
                // The guest reads to the end of its input.
                drop(stdin);
            }
            Op::Read { id, payload } => {
                let io = stdio.as_mut().ok_or("read before run")?;
                let stream: &mut (dyn AsyncRead + Unpin + Send) = match id.as_str() {
                    "stdout" => &mut io.stdout,
                    "stderr" => &mut io.stderr,
                    other => return Err(format!("read of unknown stream {other}")),
                };
                let got = read_exactly(stream, payload.len()).await;
                if got != payload.as_bytes() {
                    return Err(format!(
                        "{id} {:?} (expected {payload:?}) under {profile}",
                        String::from_utf8_lossy(&got)
                    ));
                }
            }
            Op::Connect { id, protocol_type } => {
                let io = stdio.as_mut().ok_or("connect before run")?;
                if protocol_type != "tcp" {
                    return Err(format!(
                        "connect over {protocol_type}: not run by this runner"
                    ));
                }
                let line = read_line(&mut io.stdout).await;
                let stream = tokio::net::TcpStream::connect(line.trim())
                    .await
                    .map_err(|e| format!("connect to {line:?}: {e} under {profile}"))?;
                peers.insert(id, stream);
            }
            Op::Send { id, payload } => {
                let peer = peers.get_mut(&id).ok_or(format!("send on unknown {id}"))?;
                peer.write_all(payload.as_bytes())
                    .await
                    .map_err(|e| format!("send: {e}"))?;
            }
            Op::Recv { id, payload } => {
                let peer = peers.get_mut(&id).ok_or(format!("recv on unknown {id}"))?;
                let got = read_exactly(peer, payload.len()).await;
                if got != payload.as_bytes() {
                    return Err(format!(
                        "recv {:?} (expected {payload:?})",
                        String::from_utf8_lossy(&got)
                    ));
                }
            }
            Op::Wait { exit_code } => {
                let io = stdio.as_mut().ok_or("wait before run")?;
                // A guest waiting on stdin sees its end.
                io.stdin.take();
                peers.clear();
                let mut run = running.take().ok_or("wait before run")?;
                let task = &mut run.0;
                // What the guest still writes is read, so it never waits
                // on a full pipe.
                let (out, _, err) =
                    tokio::join!(task, drain(&mut io.stdout), drain(&mut io.stderr));
                let err = String::from_utf8_lossy(&err);
                let tail: String = err.trim().chars().take(300).collect();
                let out = out.map_err(|e| format!("the run panicked: {e}"))?;
                let out = out.map_err(|e| format!("{e} (under {profile}): {tail}"))?;
                if out.exit_code != exit_code {
                    return Err(format!(
                        "exit {} (expected {exit_code}) under {profile}: {tail}",
                        out.exit_code
                    ));
                }
            }
            Op::Request(_) | Op::Kill {} => {
                return Err("an operation of the wasi:http/service world".into());
            }
            Op::Other => return Err("an operation this runner does not know".into()),
        }
    }
    drop(running);
    drop(scratch);
    Ok(profile.to_string())
}

/// Runs a case of the `wasi:http/service` world: served, asked, stopped.
async fn run_service(engine: &Engine, wasm: &Path, spec: Spec) -> Result<String, String> {
    let artifact = Artifact::from_file(wasm).map_err(|e| format!("load: {e}"))?;
    let mut served = None;
    let mut profile = None;
    for op in spec.operations {
        match op {
            Op::Run { env, .. } => {
                let env = env.into_iter().collect();
                let s = service::serve(engine, &artifact, &spec.servers, env).await?;
                profile = Some(s.profile);
                served = Some(s);
            }
            Op::Request(req) => {
                let s = served.as_ref().ok_or("request before run")?;
                service::request(s, req)
                    .await
                    .map_err(|e| format!("{e} under {}", s.profile))?;
            }
            Op::Kill {} => served = None,
            Op::Wait { .. } => {}
            _ => return Err("an operation the wasi:http/service world has not".into()),
        }
    }
    profile
        .map(|p| p.to_string())
        .ok_or_else(|| "never run".into())
}

/// Up to `len` bytes from `stream`: fewer at its end or after
/// [`READ_WAIT`].
async fn read_exactly(stream: &mut (dyn AsyncRead + Unpin + Send), len: usize) -> Vec<u8> {
    let mut got = Vec::with_capacity(len);
    let deadline = tokio::time::Instant::now() + READ_WAIT;
    while got.len() < len {
        let mut buf = vec![0; len - got.len()];
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => break,
        }
    }
    got
}

/// Everything left in `stream`, to its end.
async fn drain(stream: &mut workbooks::PipeReader) -> Vec<u8> {
    let mut all = Vec::new();
    let _ = stream.read_to_end(&mut all).await;
    all
}

/// One line from `stream` (the address a guest serving a socket prints).
async fn read_line(stream: &mut workbooks::PipeReader) -> String {
    let mut line = Vec::new();
    while !line.ends_with(b"\n") {
        let byte = read_exactly(stream, 1).await;
        if byte.is_empty() {
            break;
        }
        line.extend(byte);
    }
    String::from_utf8_lossy(&line).into_owned()
}
