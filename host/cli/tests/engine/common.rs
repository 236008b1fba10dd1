//! Shared fixtures: one engine per test binary, artifacts by probe path,
//! and a one-call runner.

use std::path::Path;
use std::sync::OnceLock;
use workbooks::{
    Artifact, CapSet, DockError, Engine, EngineBuilder, Grant, Profile, RunError, RunOutput,
    SessionOptions,
};

/// The wasmtime version the workspace's `Cargo.lock` pins.
pub fn locked_wasmtime() -> String {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    let text = std::fs::read_to_string(lock).unwrap();
    let key = "\nname = \"wasmtime\"\nversion = \"";
    let rest = &text[text.find(key).unwrap() + key.len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// The engine shared by the tests of this binary, homed in a temp dir that
/// lives as long as the process.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<(tempfile::TempDir, Engine)> = OnceLock::new();
    &ENGINE
        .get_or_init(|| {
            let home = tempfile::tempdir().expect("temp home");
            let engine = builder()
                .home(home.path())
                .max_instances(64)
                .build()
                .expect("engine");
            (home, engine)
        })
        .1
}

/// A builder for an engine a test owns, homed in `home`. On-demand
/// allocation: many such engines live at once in this binary, and pools
/// would reserve address space for each.
pub fn own_builder(home: &Path) -> EngineBuilder {
    builder().home(home).pooling(false)
}

/// A builder, once this process's descriptor soft limit is raised as
/// `wbx` raises its own: the tenant cap is a share of it, and the tests
/// run beside each other hold hundreds of descriptors each, which a
/// machine's usual soft 1 024 would not fit.
fn builder() -> EngineBuilder {
    static RAISED: std::sync::Once = std::sync::Once::new();
    RAISED.call_once(|| {
        workbooks::cadence::raise_descriptor_limit();
    });
    Engine::builder()
}

/// An engine a test owns, on the defaults, homed in `home`.
pub fn own_engine(home: &Path) -> Engine {
    own_builder(home).build().expect("engine")
}

/// The artifact of a probe.
pub fn artifact(path: &str) -> Artifact {
    Artifact::from_file(path).expect("probe artifact")
}

/// Why a run did not produce output.
#[derive(Debug)]
pub enum Failure {
    Dock(DockError),
    Run(RunError),
}

impl Failure {
    pub fn dock(self) -> DockError {
        match self {
            Failure::Dock(e) => e,
            Failure::Run(e) => panic!("expected a dock refusal, got run error: {e}"),
        }
    }

    pub fn run(self) -> RunError {
        match self {
            Failure::Run(e) => e,
            Failure::Dock(e) => panic!("expected a run error, got dock refusal: {e}"),
        }
    }
}

/// Docks `probe` under `grant` and runs it once with `opts`.
pub async fn run_with(
    probe: &str,
    grant: &Grant,
    opts: SessionOptions,
) -> Result<RunOutput, Failure> {
    let e = engine();
    let docked = e.dock(&artifact(probe), grant).map_err(Failure::Dock)?;
    e.run(&docked, opts).await.map_err(Failure::Run)
}

/// Runs `probe` under the full caps of `profile` with `args`.
pub async fn run(probe: &str, profile: Profile, args: &[&str]) -> Result<RunOutput, Failure> {
    let mut opts = SessionOptions::new("probe", "default");
    opts.args = args.iter().map(|a| a.to_string()).collect();
    run_with(probe, &Grant::profile(profile.name()), opts).await
}

/// Runs `probe` under `profile` narrowed to `caps`.
pub async fn run_narrowed(
    probe: &str,
    profile: Profile,
    caps: &[workbooks::Cap],
) -> Result<RunOutput, Failure> {
    let grant = Grant::narrowed(profile.name(), CapSet::of(caps)).expect("narrowing");
    run_with(probe, &grant, SessionOptions::new("probe", "default")).await
}

/// Stdout as text.
pub fn stdout(out: &RunOutput) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stdout as text, expecting success.
pub fn ok_stdout(result: Result<RunOutput, Failure>) -> String {
    match result {
        Ok(out) => {
            assert_eq!(
                out.exit_code,
                0,
                "stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            stdout(&out)
        }
        Err(Failure::Dock(e)) => panic!("refused: {e}"),
        Err(Failure::Run(e)) => panic!("run failed: {e}"),
    }
}

/// Runs the `wbx` binary homed in `home` with `args`, feeding it `stdin`;
/// no log or network allow-list leaks in from the test's environment.
pub fn wbx(home: &Path, args: &[&str], stdin: &[u8]) -> std::process::Output {
    wbx_env(home, args, stdin, &[])
}

/// [`wbx`] with `env` set besides.
pub fn wbx_env(
    home: &Path,
    args: &[&str],
    stdin: &[u8],
    env: &[(&str, &str)],
) -> std::process::Output {
    use std::io::Write;
    let mut child = wbx_command(home)
        .args(args)
        .envs(env.iter().copied())
        .spawn()
        .expect("spawn wbx");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wbx output")
}

/// `wbx` run with `args` in `home` until it has printed `lines` lines, and
/// measured while the guest holds what it made: those lines, its peak
/// resident memory in KiB (its `VmHWM`) read then, and its output once its
/// stdin is closed. It runs once to its end first, so the compile is not
/// in the peak.
pub fn wbx_peak(home: &Path, args: &[&str], lines: usize) -> (String, usize, std::process::Output) {
    use std::io::BufRead;
    let warm = wbx(home, args, b"");
    assert!(
        warm.status.success(),
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    let mut child = wbx_command(home).args(args).spawn().expect("spawn wbx");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut said = String::new();
    for _ in 0..lines {
        stdout.read_line(&mut said).expect("the probe's report");
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak_kib = status
        .lines()
        .find_map(|l| {
            l.strip_prefix("VmHWM:")?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse::<usize>()
                .ok()
        })
        .expect("VmHWM in /proc/PID/status");
    drop(child.stdin.take());
    let out = child
        .wait_with_output()
        .expect("wbx ends once its stdin closes");
    (said, peak_kib, out)
}

/// The `wbx` binary homed in `home`, its stdio piped, with no log,
/// allow-list, signer or registry credential from the test's environment.
pub fn wbx_command(home: &Path) -> std::process::Command {
    use std::process::{Command, Stdio};
    let mut command = Command::new(env!("CARGO_BIN_EXE_wbx"));
    command
        .env("WB_HOME", home)
        .env_remove("WB_LOG")
        .env_remove("WB_NET_ALLOW")
        .env_remove("WB_OPERATOR_ALLOW")
        .env_remove("WB_FIRST_PARTY_TOOLKITS")
        .env_remove("WB_TRUSTED_SIGNERS")
        .env_remove("WB_OCI_SIGNERS")
        .env_remove("WB_OCI_USERNAME")
        .env_remove("WB_OCI_PASSWORD")
        .env("DOCKER_CONFIG", home.join("no-docker-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Bytes as text, lossily.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An engine a test owns, homed in a fresh temp dir, with each `(name,
/// probe path)` registered as an in-process command.
pub fn engine_with_commands(commands: &[(&str, &str)]) -> (tempfile::TempDir, Engine) {
    let home = tempfile::tempdir().expect("temp home");
    // With `wbx`, so a command may also run at the process tier.
    let e = own_builder(home.path())
        .wbx_binary(env!("CARGO_BIN_EXE_wbx"))
        .build()
        .expect("engine");
    for (name, path) in commands {
        e.registry()
            .register(
                name,
                std::fs::read(path).expect("probe"),
                workbooks::commands::ArgMode::Argv,
                workbooks::commands::Tier::Instance,
            )
            .expect("register");
    }
    (home, e)
}

/// One HTTP/1.1 request to `addr` on a connection of its own: the status
/// (0 when the answer has none) and the body.
pub async fn http_request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await?;
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Ok((status, body))
}

/// Where the catalog's pinned programs are for the tests: `WB_CATALOG_DIR`,
/// else `target/catalog`, where `cargo xtask test` puts them.
pub fn catalog_dir() -> std::path::PathBuf {
    std::env::var_os("WB_CATALOG_DIR")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/catalog")
        })
}
