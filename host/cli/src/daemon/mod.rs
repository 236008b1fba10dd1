//! `wbx daemon`: one warm engine for a home, so that `wbx run` and `wbr
//! run` skip loading the engine on every start. A client process pays only
//! for its own start and a socket round trip; the line runs here with the
//! shell, linkers and compiled code already in memory.
//!
//! What it serves: `run` lines, from clients of the same build (the
//! version, compile-cache key and shipped components agree: [`build_id`])
//! with the same allow-lists (`WB_NET_ALLOW`, `WB_OPERATOR_ALLOW`) and
//! no `--broker` of their own; anything else it refuses, and the client
//! runs the line itself. Each line gets the limits, tenant, preopens and
//! caps it would get in the client's own process, on a warm worker
//! thread with a runtime of its own; instances come from the engine's
//! pool. At most [`MAX_LINES`] run at once, and a
//! line asking more memory per stage than a pool slot holds is refused:
//! those run in the client.
//!
//! Threats, and what stops them. Another local user driving the engine:
//! the socket is created mode 0600 in the user's own runtime directory
//! (0700, see [`wire::socket_path`]), never in the home, which may be
//! anyone's, and a connection whose peer uid is not the socket owner's is
//! closed unread. Another user answering in the daemon's place: the client
//! checks the listener's uid before it sends anything. A client feeding
//! garbage or huge frames: a frame over [`wire::MAX_FRAME_BYTES`] is
//! refused before anything is allocated for it, and a bad request closes
//! only its own connection. A relative `--dir` resolved against the
//! daemon's directory: the client sends absolute paths and the daemon
//! refuses any other. A client that goes away: its line is cancelled at
//! once (its stages are dropped), not left to run to its deadline.
//! Taking a stdin no stage reads (`wbx run 'cat < f'` in a `while read`
//! loop): the client sends its stdin only once a stage reads the line's,
//! as a local run opens it only then.

use crate::options::{StageOptions as _, engine_with, runtime};
use crate::{exit, fail, run};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use workbooks::limits::PIPE_CAPACITY;
use workbooks::pipes::pipe;
use workbooks::state::Stdin;
use workbooks::{Engine, LineOptions, LineStdout, Preopen, SessionOutput, build_id};
use workbooks_wire::{self as wire, Request, lock, read_frame, write_frame};

/// Lines served at once; past it a client runs its line itself. Each line
/// holds a worker thread and, per stage, pooled instances (the engine's
/// pool has 256).
const MAX_LINES: usize = 16;

/// How long a connection may take to send its request: a client that
/// connects and says nothing holds a worker no longer than this.
const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// How long the daemon waits after a failed accept before the next.
const ACCEPT_BACKOFF: std::time::Duration = std::time::Duration::from_millis(100);

/// How long an idle worker thread waits for another line before it ends.
const WORKER_IDLE: std::time::Duration = std::time::Duration::from_secs(60);

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

/// Serves `home` until SIGINT or SIGTERM.
pub(crate) fn run(_args: Args, home: PathBuf) -> u8 {
    if let Err(e) = std::fs::create_dir_all(&home) {
        return fail("daemon", format!("{}: {e}", home.display()), exit::ENGINE);
    }
    let socket = match wire::socket_path(&home, true) {
        Ok(socket) => socket,
        Err(e) => return fail("daemon", e, exit::ENGINE),
    };
    if UnixStream::connect(&socket).is_ok() {
        let why = format!("a daemon already serves {}", home.display());
        return fail("daemon", why, exit::USAGE);
    }
    // A socket file nobody answers on is a dead daemon's.
    let _ = std::fs::remove_file(&socket);
    // Pooled: a long-lived engine reuses warm instance slots, which is
    // much of what a warm start saves.
    let engine = match engine_with(home, true, None) {
        Ok(engine) => engine,
        Err(code) => return code,
    };
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let served = rt.block_on(serve(&engine, &socket));
    let _ = std::fs::remove_file(&socket);
    match served {
        Ok(()) => 0,
        Err(e) => fail("daemon", format!("{}: {e}", socket.display()), exit::ENGINE),
    }
}

async fn serve(engine: &Engine, socket: &std::path::Path) -> io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let listener = tokio::net::UnixListener::bind(socket)?;
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
    let owner = std::fs::metadata(socket)?.uid();
    eprintln!(
        "{}: daemon: serving {} (build {})",
        crate::BIN,
        socket.display(),
        build_id()
    );
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let workers = Workers::new(engine.clone());
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => admit(&workers, stream, owner),
                Err(e) => {
                    // Out of descriptors, say: wait a little, never spin.
                    tracing::warn!(error = %e, "daemon: accept failed");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            _ = term.recv() => return Ok(()),
            _ = int.recv() => return Ok(()),
        }
    }
}

/// Hands a connection of the socket owner's to a worker.
fn admit(workers: &Workers, stream: tokio::net::UnixStream, owner: u32) {
    match stream.peer_cred() {
        Ok(peer) if peer.uid() == owner => {}
        _ => {
            tracing::warn!("daemon: closed a connection from another user");
            return;
        }
    }
    let Ok(stream) = stream.into_std() else {
        return;
    };
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    workers.hand(stream);
}

/// Worker threads that outlive their line: each keeps its runtime and
/// wasmtime's per-thread state warm for the next. A line goes to an idle
/// worker, else to a new one, up to [`MAX_LINES`].
struct Workers {
    engine: Engine,
    pool: Arc<Mutex<Pool>>,
}

#[derive(Default)]
struct Pool {
    /// How to reach each idle worker, by its number.
    idle: Vec<(u64, std::sync::mpsc::Sender<UnixStream>)>,
    alive: usize,
    started: u64,
}

fn pool(m: &Mutex<Pool>) -> std::sync::MutexGuard<'_, Pool> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Workers {
    fn new(engine: Engine) -> Self {
        Self {
            engine,
            pool: Arc::default(),
        }
    }

    fn hand(&self, mut stream: UnixStream) {
        let mut p = pool(&self.pool);
        // Sent under the lock: a worker giving up looks for its entry
        // under it too, so it either is handed this line or leaves.
        while let Some((_, to)) = p.idle.pop() {
            match to.send(stream) {
                Ok(()) => return,
                Err(returned) => stream = returned.0,
            }
        }
        if p.alive >= MAX_LINES {
            drop(p);
            let why = format!("the daemon is serving {MAX_LINES} lines already");
            let _ = write_frame(&mut stream, wire::REFUSED, why.as_bytes());
            return;
        }
        p.alive += 1;
        p.started += 1;
        let id = p.started;
        drop(p);
        let (engine, shared) = (self.engine.clone(), self.pool.clone());
        let spawned = std::thread::Builder::new()
            .name("wb-daemon-line".into())
            .spawn(move || work(&engine, id, stream, &shared));
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "daemon: cannot start a worker");
            pool(&self.pool).alive -= 1;
        }
    }
}

/// Worker `id`: `first`, then whatever it is handed, until idle too long.
fn work(engine: &Engine, id: u64, first: UnixStream, shared: &Mutex<Pool>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    let Ok(rt) = rt else {
        tracing::warn!("daemon: no runtime for a worker");
        pool(shared).alive -= 1;
        return;
    };
    let (to_me, mine) = std::sync::mpsc::channel();
    let mut next = Some(first);
    while let Some(stream) = next.take() {
        if let Err(e) = serve_line(engine, &rt, stream) {
            tracing::info!(error = %e, "daemon: a connection ended");
        }
        pool(shared).idle.push((id, to_me.clone()));
        next = mine.recv_timeout(WORKER_IDLE).ok();
        if next.is_none() {
            let mut p = pool(shared);
            match p.idle.iter().position(|(n, _)| *n == id) {
                Some(at) => {
                    p.idle.remove(at);
                    p.alive -= 1;
                }
                // Handed a line as it gave up: the line was sent already.
                None => match mine.try_recv() {
                    Ok(stream) => next = Some(stream),
                    Err(_) => p.alive -= 1,
                },
            }
        }
    }
}

/// One client's line, from its request to its exit code, on `rt`.
fn serve_line(engine: &Engine, rt: &tokio::runtime::Runtime, stream: UnixStream) -> io::Result<()> {
    let mut reader = stream.try_clone()?;
    let writer = Arc::new(Mutex::new(stream));
    let send = |tag: u8, bytes: &[u8]| write_frame(&mut *lock(&writer), tag, bytes);
    reader.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    let (tag, payload) = read_frame(&mut reader)?;
    reader.set_read_timeout(None)?;
    if tag != wire::REQUEST {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "no request"));
    }
    let request: Request = serde_json::from_slice(&payload)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    let mut opts = match options(&request, engine) {
        Ok(opts) => opts,
        Err(why) => {
            tracing::info!(%why, "daemon: refused a line");
            return send(wire::REFUSED, why.as_bytes());
        }
    };
    send(wire::ACCEPTED, b"")?;
    tracing::info!(line = %request.line, "daemon: serving a line");

    let closed = Arc::new(AtomicBool::new(false));
    let (stdin_writer, stdin_reader) = pipe(PIPE_CAPACITY, b"");
    if request.stdin {
        // Asked for once a stage reads it: a line that never reads leaves
        // the client's stdin to whatever reads it next. A client gone by
        // then is the reader thread's to see.
        let to_client = writer.clone();
        stdin_reader.on_first_read(move || {
            let _ = write_frame(&mut *lock(&to_client), wire::WANT_STDIN, b"");
        });
        opts.stdin = Stdin::Pipe(stdin_reader);
    }
    if !request.json {
        opts.stdout = LineStdout::Writer(SessionOutput::through(ClientStdout {
            writer: writer.clone(),
            closed: closed.clone(),
        }));
    }
    let (gone_tx, gone_rx) = tokio::sync::oneshot::channel::<()>();
    let closed_by_client = closed.clone();
    std::thread::Builder::new()
        .name("wb-daemon-in".into())
        .spawn(move || {
            use tokio::io::AsyncWriteExt;
            let mut stdin_writer = stdin_writer;
            loop {
                match read_frame(&mut reader) {
                    Ok((wire::STDIN, data)) => {
                        // A stage that stopped reading drops the rest.
                        let _ = futures::executor::block_on(stdin_writer.write_all(&data));
                    }
                    Ok((wire::STDIN_END, _)) => stdin_writer.close(),
                    Ok((wire::STDOUT_CLOSED, _)) => closed_by_client.store(true, Ordering::Release),
                    _ => {
                        stdin_writer.close();
                        closed_by_client.store(true, Ordering::Release);
                        let _ = gone_tx.send(());
                        return;
                    }
                }
            }
        })?;

    // Cancelling drops the line's future, and with it every stage's store.
    let outcome = rt.block_on(async {
        tokio::select! {
            outcome = engine.commands().run_line(&request.line, opts) => Some(outcome),
            _ = gone_rx => None,
        }
    });
    let Some(outcome) = outcome else {
        tracing::info!("daemon: the client went away; its line was stopped");
        return Ok(());
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = run::report(outcome, request.json, &request.bin, &mut out, &mut err);
    for chunk in out.chunks(wire::MAX_FRAME_BYTES) {
        send(wire::STDOUT, chunk)?;
    }
    for chunk in err.chunks(wire::MAX_FRAME_BYTES) {
        send(wire::STDERR, chunk)?;
    }
    send(wire::EXIT, &[code])
}

/// The line's options from a request, as the client's own `run` would make
/// them; why not, when the request is one no client of this build sends.
fn options(request: &Request, engine: &workbooks::Engine) -> Result<LineOptions, String> {
    let engine_memory = engine.max_memory();
    same_build(request)?;
    if request.env != own_env() {
        return Err(format!(
            "the client's environment ({}) is not the daemon's",
            wire::DAEMON_ENV.join(", ")
        ));
    }
    let mut opts = request.stage.granted_options(engine)?;
    for (host, guest, read_only) in &request.dirs {
        if !host.is_absolute() {
            return Err(format!("a preopen of a relative path {}", host.display()));
        }
        opts.dirs.push(Preopen {
            host: host.clone(),
            guest: guest.clone(),
            read_only: *read_only,
        });
    }
    if opts.stage_memory.is_some_and(|bytes| bytes > engine_memory) {
        return Err(format!(
            "--memory {} MiB is over the daemon's {} MiB per instance",
            request.stage.memory.unwrap_or_default(),
            engine_memory >> 20
        ));
    }
    Ok(opts)
}

/// Whether the client would run the line as this daemon does: it is a
/// full CLI of this build, or a thin client whose engine binary is the
/// very file this daemon runs.
fn same_build(request: &Request) -> Result<(), String> {
    if let Some(build) = &request.build {
        return match build == build_id() {
            true => Ok(()),
            false => Err(format!(
                "the client's build {build} is not the daemon's {}",
                build_id()
            )),
        };
    }
    let own = own_exe()
        .as_ref()
        .map_err(|e| format!("the daemon cannot identify its own executable: {e}"))?;
    match request.engine {
        Some(engine) if engine == *own => Ok(()),
        Some(_) => Err("the client's engine binary is not the daemon's executable".into()),
        None => Err("the request names neither a build nor an engine binary".into()),
    }
}

/// This daemon's environment digest, read once: its environment does not
/// change while it runs.
fn own_env() -> &'static str {
    static ENV: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    ENV.get_or_init(wire::env_digest)
}

/// This daemon's executable, identified once: a running executable cannot
/// be rewritten in place (the kernel refuses with `ETXTBSY`), only replaced.
fn own_exe() -> &'static Result<wire::FileId, String> {
    static EXE: std::sync::OnceLock<Result<wire::FileId, String>> = std::sync::OnceLock::new();
    EXE.get_or_init(|| {
        wire::FileId::of(std::path::Path::new("/proc/self/exe")).map_err(|e| e.to_string())
    })
}

/// The client's stdout, across the socket.
struct ClientStdout {
    writer: Arc<Mutex<UnixStream>>,
    closed: Arc<AtomicBool>,
}

impl Write for ClientStdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.closed.load(Ordering::Acquire) {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        let n = buf.len().min(wire::MAX_FRAME_BYTES);
        write_frame(&mut *lock(&self.writer), wire::STDOUT, &buf[..n]).map_err(|e| {
            match e.kind() {
                io::ErrorKind::ConnectionReset => io::ErrorKind::BrokenPipe.into(),
                _ => e,
            }
        })?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
