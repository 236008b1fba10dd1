//! `wbx daemon` serves the `run` lines of its home's clients: the same
//! output, stderr and exit code as a local run, stdin taken only when a
//! stage reads it, a line stopped when its client goes away, and every
//! request no client of this build would send refused.

use crate::common::text;
use std::io::{Read, Seek, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A `wbx daemon` on a home of its own, logging at info to a file; killed
/// Where the daemon of `home` listens: the user's runtime directory, not
/// the home.
fn socket_of(home: &Path) -> std::path::PathBuf {
    workbooks_wire::socket_path(home, false).unwrap()
}

/// when dropped.
struct Daemon {
    child: Child,
    home: tempfile::TempDir,
    log: PathBuf,
}

/// Waits (up to a minute, whatever the machine) for `done`.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(60), "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Daemon {
    fn start() -> Daemon {
        Daemon::start_from(Path::new(env!("CARGO_BIN_EXE_wbx")))
    }

    /// A daemon run by the binary at `wbx`.
    fn start_from(wbx: &Path) -> Daemon {
        let home = tempfile::tempdir().unwrap();
        let log = home.path().join("daemon.log");
        let child = Command::new(wbx)
            .args(["daemon"])
            .env("WB_HOME", home.path())
            .env("WB_LOG", "info")
            .env_remove("WB_NET_ALLOW")
            .env_remove("WB_OPERATOR_ALLOW")
            .envs(LLM_ENV)
            .env_remove("WB_LLM_API_KEY")
            .env_remove("OPENROUTER_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        eventually("the daemon listens", || {
            workbooks_wire::socket_path(home.path(), false)
                .is_ok_and(|socket| UnixStream::connect(socket).is_ok())
        });
        Daemon { child, home, log }
    }

    fn home(&self) -> &Path {
        self.home.path()
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }

    /// Waits (up to a minute) until `done` holds of the log, or fails
    /// showing it.
    fn until_logged(&self, what: &str, mut done: impl FnMut(&str) -> bool) {
        let start = Instant::now();
        loop {
            let log = self.log();
            if done(&log) {
                return;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "never: {what}; the daemon's log:\n{log}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn served(&self) -> usize {
        self.log().matches("daemon: serving a line").count()
    }

    fn refused(&self) -> usize {
        self.log().matches("daemon: refused a line").count()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `wbx` with `args` on `home` and `env` set, none of ours that matter,
/// its stdout and stderr piped.
fn wbx(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    cli(env!("CARGO_BIN_EXE_wbx"), home, args, env)
}

/// The program `bin` as [`wbx`] sets it up.
fn cli(bin: &str, home: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env("WB_HOME", home)
        .env_remove("WB_LOG")
        .env_remove("WB_NET_ALLOW")
        .env_remove("WB_OPERATOR_ALLOW")
        .env_remove("WB_DAEMON")
        .envs(LLM_ENV)
        .env_remove("WB_LLM_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// `wbx` with `args` on `home`, `stdin` fed, `env` set.
fn client(home: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    fed(wbx(home, args, env), stdin)
}

/// Runs `cmd` with `stdin` fed to it, to its end.
fn fed(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut child = cmd.stdin(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

const LOCAL: &[(&str, &str)] = &[("WB_DAEMON", "0")];

#[test]
fn lines_through_the_daemon_print_and_exit_as_they_do_locally() {
    let d = Daemon::start();
    let cases: &[(&[&str], &[u8])] = &[
        (&["run", "echo hi there | upper"], b""),
        (&["run", "cat | wc -c"], b"hello"),
        (&["run", "false || echo fell through"], b""),
        (&["run", "false"], b""),
        (&["run", "no-such-command"], b""),
        (&["run", "echo 'unterminated"], b""),
        (&["run", "--profile", "nonsense", "true"], b""),
        (&["run", "--json", "echo a; echo b"], b""),
    ];
    for (args, stdin) in cases {
        let local = client(d.home(), args, stdin, LOCAL);
        let served_before = d.served();
        let daemon = client(d.home(), args, stdin, &[]);
        assert_eq!(daemon.status.code(), local.status.code(), "{args:?}");
        assert_eq!(text(&daemon.stderr), text(&local.stderr), "{args:?}");
        if args.contains(&"--json") {
            let (a, b): (serde_json::Value, serde_json::Value) = (
                serde_json::from_slice(&daemon.stdout).unwrap(),
                serde_json::from_slice(&local.stdout).unwrap(),
            );
            for field in ["stdout", "stderr", "exit"] {
                assert_eq!(a[field], b[field], "{field}");
            }
            assert_eq!(a["stdout"], "a\nb\n");
        } else {
            assert_eq!(text(&daemon.stdout), text(&local.stdout), "{args:?}");
        }
        // The usage error never reaches the daemon; every other line is
        // served there.
        let expected = usize::from(!args.contains(&"nonsense"));
        assert_eq!(d.served(), served_before + expected, "{args:?}");
    }
    assert_eq!(
        text(&client(d.home(), &["run", "echo hi there | upper"], b"", &[]).stdout),
        "HI THERE\n"
    );
}

#[test]
fn a_wasi_03_command_runs_through_the_daemon_as_it_does_locally() {
    let d = Daemon::start();
    let registered = client(
        d.home(),
        &[
            "command",
            "register",
            "echo03",
            guest_artifacts::WASI03_ECHO,
        ],
        b"",
        LOCAL,
    );
    assert!(registered.status.success(), "{}", text(&registered.stderr));
    let args: &[&str] = &["run", "cat | echo03 x y"];
    let local = client(d.home(), args, b"piped\n", LOCAL);
    let served_before = d.served();
    let daemon = client(d.home(), args, b"piped\n", &[]);
    assert_eq!(d.served(), served_before + 1, "the daemon served it");
    assert_eq!(
        text(&daemon.stdout),
        "0.3 args=[\"x\", \"y\"] greeting=\nPIPED\n"
    );
    assert_eq!(text(&daemon.stdout), text(&local.stdout));
    assert_eq!(daemon.status.code(), Some(0));
}

#[test]
fn stdin_is_taken_as_a_local_run_takes_it_and_only_then() {
    let d = Daemon::start();
    let data = d.home().join("input.txt");
    std::fs::write(&data, "one\ntwo\n").unwrap();
    let mut file = std::fs::File::open(&data).unwrap();
    // What of our stdin a run of `line` takes (the child shares our file's
    // offset), and what it prints.
    let mut taken = |line: &str, env: &[(&str, &str)]| {
        file.rewind().unwrap();
        let run = wbx(d.home(), &["run", line], env)
            .stdin(file.try_clone().unwrap())
            .output()
            .unwrap();
        (file.stream_position().unwrap(), text(&run.stdout))
    };
    // No stage reads the line's stdin: none of it is taken, nor asked for,
    // whether no stage is wired to it or the one wired to it never reads
    // (`true`, `echo`), so a script's next command still gets all of it.
    for env in [&[][..], LOCAL] {
        assert_eq!(taken("cat < /dev/null", env), (0, String::new()));
        assert_eq!(taken("true", env), (0, String::new()));
        assert_eq!(taken("echo hi | cat", env), (0, "hi\n".into()));
        assert_eq!(taken("head -n 1", env), (8, "one\n".into()));
        assert_eq!(taken("cat | wc -l", env), (8, "2\n".into()));
    }
    assert_eq!(d.served(), 5);
}

#[test]
fn lines_that_never_read_their_stdin_leave_nothing_open_in_the_daemon() {
    let d = Daemon::start();
    let open = || {
        std::fs::read_dir(format!("/proc/{}/fd", d.child.id()))
            .unwrap()
            .count()
    };
    let warm = client(d.home(), &["run", "true"], b"unread", &[]);
    assert!(warm.status.success(), "{}", text(&warm.stderr));
    let before = open();
    for _ in 0..24 {
        let out = client(d.home(), &["run", "true"], b"unread", &[]);
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    assert_eq!(d.served(), 25);
    // What each line opened is closed once its client is done; a line
    // holding its client's socket would leave 24 behind.
    eventually("the lines' descriptors are closed", || open() < before + 4);
}

#[test]
fn a_client_that_goes_away_stops_its_line() {
    let d = Daemon::start();
    // Warm first: a cold cache compiles the stages before the line yields.
    let warm = client(d.home(), &["run", "seq 1 3 | wc -l"], b"", &[]);
    assert_eq!(text(&warm.stdout).trim(), "3");
    let args = ["run", "--timeout", "600000", "--fuel", "1000000000000000"];
    // Killed however the test ends: left running it would count for minutes.
    let mut run = Reaped(
        wbx(d.home(), &args, &[])
            .arg("seq 1 1000000000000 | wc -l")
            .stdin(Stdio::null())
            .spawn()
            .unwrap(),
    );
    d.until_logged("the line is served", |log| {
        if let Some(status) = run.0.try_wait().unwrap() {
            panic!(
                "the client ended ({status}) before the daemon served its line; its log:\n{log}"
            );
        }
        log.matches("daemon: serving a line").count() == 2
    });
    run.0.kill().unwrap();
    run.0.wait().unwrap();
    // Left alone the line would count for minutes: it is stopped instead.
    d.until_logged("the line is stopped", |log| {
        log.contains("the client went away; its line was stopped")
    });
}

/// A child killed when dropped.
struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_closed_stdout_ends_the_writing_stage_as_it_does_locally() {
    let d = Daemon::start();
    let first_line_then_close = |env: &[(&str, &str)]| {
        let mut run = wbx(d.home(), &["run", "seq 1 100000000; echo after"], env)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = run.stdout.take().unwrap();
        let mut first = [0u8; 2];
        stdout.read_exact(&mut first).unwrap();
        assert_eq!(&first, b"1\n");
        drop(stdout);
        run.wait_with_output().unwrap()
    };
    let local = first_line_then_close(LOCAL);
    let daemon = first_line_then_close(&[]);
    assert_eq!(daemon.status.code(), local.status.code());
    assert_eq!(text(&daemon.stderr), text(&local.stderr));
    assert_eq!(d.served(), 1);
}

/// One raw frame.
fn frame(tag: u8, payload: &[u8]) -> Vec<u8> {
    let mut bytes = vec![tag];
    bytes.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes
}

/// What the daemon answers `bytes` with: its first frame's tag and
/// payload, or `None` when it closes the connection.
fn answer(home: &Path, bytes: &[u8]) -> Option<(u8, String)> {
    let mut s = UnixStream::connect(socket_of(home)).unwrap();
    // The daemon may answer, and close, before it has read all of it.
    let _ = s.write_all(bytes);
    let mut head = [0u8; 5];
    s.read_exact(&mut head).ok()?;
    let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let mut payload = vec![0u8; len];
    s.read_exact(&mut payload).unwrap();
    Some((head[0], String::from_utf8_lossy(&payload).into_owned()))
}

/// The model endpoint every daemon and client here is given.
const LLM_ENV: [(&str, &str); 2] = [
    ("WB_LLM_BASE_URL", "http://127.0.0.1:9/v1"),
    ("WB_LLM_MODEL", "daemon-model"),
];

/// The environment digest of every daemon here.
fn daemon_env() -> String {
    workbooks_wire::env_digest_of(|name| {
        LLM_ENV
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.into())
    })
}

fn request(build: Option<&str>, dir: &str) -> Vec<u8> {
    let json = serde_json::json!({
        "build": build, "engine": null, "env": daemon_env(), "bin": "wbx", "line": "true",
        "json": false, "stdin": false, "dirs": [[dir, "/d", false]],
        "stage": {
            "profile": "posix", "caps": null, "timeout": null, "fuel": null,
            "memory": null, "tenant": "default", "env": []
        }
    });
    frame(b'Q', json.to_string().as_bytes())
}

#[test]
fn the_daemon_refuses_what_no_client_of_its_build_sends() {
    let d = Daemon::start();
    let ours = workbooks::build_id();
    let abs = d.home().join("data");
    std::fs::create_dir(&abs).unwrap();

    let (tag, why) = answer(
        d.home(),
        &request(Some("another-build"), abs.to_str().unwrap()),
    )
    .unwrap();
    assert_eq!(
        (tag, why.contains("is not the daemon's")),
        (b'R', true),
        "{why}"
    );
    let (tag, why) = answer(d.home(), &request(Some(ours), "data")).unwrap();
    assert_eq!(tag, b'R');
    assert!(why.contains("a preopen of a relative path data"), "{why}");
    // A frame claiming 4 GiB, a first frame that is not a request, and a
    // request that is not JSON each close their connection, and nothing
    // else: the daemon still serves.
    assert_eq!(answer(d.home(), &[b'Q', 0xff, 0xff, 0xff, 0xff]), None);
    assert_eq!(answer(d.home(), &frame(b'S', b"stdin first")), None);
    assert_eq!(answer(d.home(), &frame(b'Q', b"{not json")), None);
    // Neither a build nor an engine file: no client sends that.
    let (tag, why) = answer(d.home(), &request(None, abs.to_str().unwrap())).unwrap();
    assert_eq!(tag, b'R');
    assert!(
        why.contains("names neither a build nor an engine binary"),
        "{why}"
    );
    let (tag, _) = answer(d.home(), &request(Some(ours), abs.to_str().unwrap())).unwrap();
    assert_eq!(tag, b'A');
    let out = client(d.home(), &["run", "echo still here"], b"", &[]);
    assert_eq!(text(&out.stdout), "still here\n");
    assert_eq!(d.served(), 2);
}

#[test]
fn a_line_the_daemon_cannot_hold_runs_in_its_client() {
    let d = Daemon::start();
    // More memory per stage than a pool slot holds.
    let out = client(d.home(), &["run", "--memory", "1024", "echo big"], b"", &[]);
    assert_eq!(text(&out.stdout), "big\n");
    assert!(
        d.log()
            .contains("--memory 1024 MiB is over the daemon's 256 MiB")
    );
    // Sixteen connections that never send a request hold every worker:
    // the next line is refused by the daemon and runs in its client.
    let silent: Vec<UnixStream> = (0..16)
        .map(|_| UnixStream::connect(socket_of(d.home())).unwrap())
        .collect();
    let out = client(d.home(), &["run", "echo crowded"], b"", &[]);
    assert_eq!(text(&out.stdout), "crowded\n");
    eventually("the refusal is sent", || {
        answer(d.home(), &request(Some(workbooks::build_id()), "/"))
            .is_some_and(|(tag, why)| tag == b'R' && why.contains("serving 16 lines already"))
    });
    assert_eq!(d.served(), 0);
    // Once they hang up their workers are free, and idle workers take the
    // next lines, one after another.
    drop(silent);
    eventually("a line is served again", || {
        client(d.home(), &["run", "echo back"], b"", &[]).stdout == b"back\n" && d.served() == 1
    });
    for n in 2..=20 {
        let out = client(d.home(), &["run", "echo again"], b"", &[]);
        assert_eq!(text(&out.stdout), "again\n");
        assert_eq!(d.served(), n);
    }
}

#[test]
fn a_connection_that_never_sends_its_request_is_closed() {
    let d = Daemon::start();
    let mut silent = UnixStream::connect(socket_of(d.home())).unwrap();
    // The daemon gives up after its 5 s request timeout; a minute is only
    // a bound on the test.
    silent
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert_eq!(silent.read(&mut byte).unwrap(), 0, "closed, unanswered");
    let out = client(d.home(), &["run", "echo next"], b"", &[]);
    assert_eq!(text(&out.stdout), "next\n");
    assert_eq!(d.served(), 1);
}

#[test]
fn a_client_with_another_net_allow_or_model_endpoint_runs_the_line_itself() {
    let d = Daemon::start();
    for (var, value, why) in [
        (
            "WB_NET_ALLOW",
            "127.0.0.1/32",
            "the client's environment (WB_NET_ALLOW, ",
        ),
        (
            "WB_LLM_MODEL",
            "another/model",
            "WB_LLM_MODEL) is not the daemon's",
        ),
        (
            "WB_LLM_API_KEY",
            "sk-other",
            "WB_LLM_MODEL) is not the daemon's",
        ),
    ] {
        let refused_before = d.refused();
        let out = client(d.home(), &["run", "echo mine"], b"", &[(var, value)]);
        assert_eq!(text(&out.stdout), "mine\n", "{var}");
        assert!(d.log().contains(why), "{var}");
        // Offered once: the refusal before the full parse stands for it.
        assert_eq!(d.refused(), refused_before + 1, "{var}");
    }
    // A line the early reader leaves to the full parser (`--dir`) is
    // offered once too.
    let refused_before = d.refused();
    let dir = tempfile::tempdir().unwrap();
    let spec = format!("{}::/d", dir.path().display());
    let args = ["run", "--dir", &spec, "echo mine"];
    let out = client(d.home(), &args, b"", &[("WB_NET_ALLOW", "127.0.0.1/32")]);
    assert_eq!(text(&out.stdout), "mine\n", "{}", text(&out.stderr));
    assert_eq!(d.refused(), refused_before + 1);
    assert_eq!(d.served(), 0);
}

#[test]
fn the_socket_is_the_owners_alone_and_a_second_daemon_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let d = Daemon::start();
    let mode = std::fs::metadata(socket_of(d.home()))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let second = client(d.home(), &["daemon"], b"", &[]);
    assert_eq!(second.status.code(), Some(64));
    assert!(
        text(&second.stderr).contains("a daemon already serves"),
        "{}",
        text(&second.stderr)
    );
}

/// `wb` with `args` on `home`, `stdin` fed, `env` set; the `wbx` beside it
/// is the one the daemons here run.
fn thin(home: &Path, args: &[&str], stdin: &[u8], env: &[(&str, &str)]) -> Output {
    fed(cli(env!("CARGO_BIN_EXE_wb"), home, args, env), stdin)
}

#[test]
fn the_thin_client_prints_and_exits_as_wbx_does_and_its_lines_are_the_daemons() {
    let d = Daemon::start();
    let cases: &[(&[&str], &[u8], bool)] = &[
        (&["run", "echo hi there | upper"], b"", true),
        (&["run", "cat | wc -c"], b"hello", true),
        (
            &["run", "--profile=minimal", "false || echo fell through"],
            b"",
            true,
        ),
        (&["run", "no-such-command"], b"", true),
        (&["run", "--json", "echo a; echo b"], b"", true),
        // Refused by the daemon (a usage error), then read by wbx.
        (&["run", "--env", "no-equals", "true"], b"", false),
        // Not taken by wb at all: handed to wbx as they are.
        (
            &["run", "--stub", "wasi:sockets", "echo stubbed"],
            b"",
            false,
        ),
        (&["profiles", "--json"], b"", false),
    ];
    for (args, stdin, served) in cases {
        let local = client(d.home(), args, stdin, LOCAL);
        let served_before = d.served();
        let out = thin(d.home(), args, stdin, &[]);
        assert_eq!(out.status.code(), local.status.code(), "{args:?}");
        assert_eq!(text(&out.stderr), text(&local.stderr), "{args:?}");
        if args.contains(&"--json") && args.contains(&"run") {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["stdout"], "a\nb\n");
        } else {
            assert_eq!(text(&out.stdout), text(&local.stdout), "{args:?}");
        }
        assert_eq!(d.served(), served_before + usize::from(*served), "{args:?}");
    }
    // The daemon's log names why it refused the usage error.
    assert!(d.log().contains("no-equals"), "{}", d.log());
}

#[test]
fn the_thin_client_hands_its_line_to_wbx_when_the_daemon_runs_another_engine_file() {
    // Another environment: refused by the daemon, run by wbx itself.
    let d = Daemon::start();
    let out = thin(
        d.home(),
        &["run", "echo mine"],
        b"",
        &[("WB_NET_ALLOW", "10.0.0.0/8")],
    );
    assert_eq!(text(&out.stdout), "mine\n");
    assert!(d.log().contains("the client's environment"), "{}", d.log());
    // A daemon started from a copy of wbx: the same build but not the
    // file wb would run, so wb hands over; that wbx, of the daemon's
    // build, is then served.
    let copy = tempfile::tempdir().unwrap();
    let other = copy.path().join("wbx");
    std::fs::copy(env!("CARGO_BIN_EXE_wbx"), &other).unwrap();
    let d = Daemon::start_from(&other);
    let out = thin(d.home(), &["run", "echo via the copy"], b"", &[]);
    assert_eq!(text(&out.stdout), "via the copy\n");
    let said = d.log();
    assert!(
        said.contains("engine binary is not the daemon's executable"),
        "{said}"
    );
    assert_eq!(d.served(), 1, "{said}");
}

/// `tests/native/impostor.c`, built in `dir`.
fn impostor(dir: &Path) -> std::path::PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/native/impostor.c");
    let out = dir.join("impostor");
    let built = Command::new("cc")
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) builds the test's native program");
    assert!(built.success());
    out
}

#[test]
fn a_client_sends_nothing_to_a_socket_another_user_answers_on() {
    use std::io::BufRead;
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "this test listens as another user, which needs root"
    );
    let home = tempfile::tempdir().unwrap();
    let runtime = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    // The runtime directory as the user's own: only the listener's uid
    // can tell the client who answers.
    let dir = runtime.path().join("workbooks");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let socket = workbooks_wire::socket_path_in(&dir, home.path()).unwrap();
    let heard = bin.path().join("heard");
    let mut listening = Command::new(impostor(bin.path()))
        .arg(&socket)
        .arg(&heard)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(listening.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "listening\n");
    // The line, its stdin and an --env value a daemon would be handed.
    let runtime_dir = runtime.path().to_str().unwrap();
    let out = client(
        home.path(),
        &["run", "--env", "TOKEN=hunter2", "upper"],
        b"top secret",
        &[("XDG_RUNTIME_DIR", runtime_dir)],
    );
    let _ = listening.kill();
    let _ = listening.wait();
    assert_eq!(text(&out.stdout), "TOP SECRET", "{}", text(&out.stderr));
    let got = std::fs::read(&heard).unwrap_or_default();
    assert!(got.is_empty(), "the impostor heard {:?}", text(&got));
}
