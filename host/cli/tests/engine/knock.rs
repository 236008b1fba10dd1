//! A client that knocks on a guest's listener the way a peer would: from
//! the loopback address the operator opened, and, while the guest is
//! listening, at this host's other addresses, where another host would
//! come from.

use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// What one knock saw.
#[derive(Debug, Default)]
pub struct Knocked {
    /// The guest's answer to `hello` on `127.0.0.1`; `None` if no
    /// connection got through before the stop.
    pub answer: Option<String>,
    /// For each other address of this host, how a connection to the
    /// guest's port there ended, tried while the guest was listening.
    pub elsewhere: Vec<(IpAddr, Result<(), ErrorKind>)>,
}

/// A loopback port nothing listens on now.
pub fn unused_loopback_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    probe.local_addr().unwrap().port()
}

/// This host's addresses other than `127.0.0.1`: `127.0.0.2`, always
/// there on Linux, and the address of the interface a packet out would
/// leave by, when this host has a route out (no packet is sent to find it).
pub fn other_addresses() -> Vec<IpAddr> {
    let mut found = vec![IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))];
    let outward = std::net::UdpSocket::bind("0.0.0.0:0")
        .and_then(|s| s.connect("192.0.2.1:9").map(|()| s))
        .and_then(|s| s.local_addr());
    if let Ok(at) = outward
        && !at.ip().is_loopback()
        && !at.ip().is_unspecified()
    {
        found.push(at.ip());
    }
    found
}

/// Connects to `127.0.0.1:port` (retrying while nothing listens, for up
/// to `patience`); once the guest listens, tries each of
/// [`other_addresses`] at the same port, then sends `hello` and reads the
/// answer.
pub fn knock(port: u16, patience: Duration) -> Knocked {
    let start = Instant::now();
    while start.elapsed() < patience {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        };
        let elsewhere = other_addresses()
            .into_iter()
            .map(|ip| {
                let tried =
                    TcpStream::connect_timeout(&SocketAddr::new(ip, port), Duration::from_secs(2));
                (ip, tried.map(drop).map_err(|e| e.kind()))
            })
            .collect();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        stream.write_all(b"hello").unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        return Knocked {
            answer: Some(answer),
            elsewhere,
        };
    }
    Knocked::default()
}

/// Asserts that no address but the opened loopback reached the guest's
/// port: each was refused by the system, as a port nobody listens on is.
pub fn assert_seen_only_on_loopback(knocked: &Knocked) {
    assert!(!knocked.elsewhere.is_empty(), "no other address was tried");
    for (ip, tried) in &knocked.elsewhere {
        assert_eq!(
            *tried,
            Err(ErrorKind::ConnectionRefused),
            "the guest's port answered at {ip}"
        );
    }
}

/// What a listening probe run by `wbx exec` said, and what the knock saw.
#[derive(Debug)]
pub struct Listened {
    /// The probe's first line, printed as soon as it listens: it ends
    /// with the address the host gave the listener.
    pub first: String,
    pub knocked: Knocked,
    /// Everything it printed after, then its stderr.
    pub rest: String,
}

/// Runs `probe ARGS` under `wbx exec --profile network` with the
/// operator's allow-list `allow` (none if empty), reads the first line (the address it
/// listens at, `…ADDR:PORT` or `…ADDR:PORT)`), knocks on that port, and
/// collects the rest. A probe that does not listen is not knocked on.
pub fn listen_in_wbx(probe: &str, args: &[&str], allow: &str) -> Listened {
    let (_home, child, mut stdout, first) = spawn_listening(probe, args, allow);
    let port = first
        .trim_end()
        .trim_end_matches(')')
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<u16>().ok())
        .filter(|p| *p != 0);
    let knocked = match port {
        Some(port) => knock(port, Duration::from_secs(30)),
        None => Knocked::default(),
    };
    let mut rest = String::new();
    let _ = stdout.read_to_string(&mut rest);
    let output = child.wait_with_output().unwrap();
    rest.push_str(&String::from_utf8_lossy(&output.stderr));
    Listened {
        first,
        knocked,
        rest,
    }
}

/// Starts `probe ARGS` under `wbx exec --profile network` in a fresh home
/// (returned, to keep it) with the operator's allow-list `allow` (none if
/// empty), and reads its first line.
fn spawn_listening(
    probe: &str,
    args: &[&str],
    allow: &str,
) -> (
    tempfile::TempDir,
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
    String,
) {
    use std::io::BufRead;
    let home = tempfile::tempdir().unwrap();
    let mut command = crate::common::wbx_command(home.path());
    command
        .args(["exec", "--profile", "network", probe, "--"])
        .args(args);
    if !allow.is_empty() {
        command.env("WB_NET_ALLOW", allow);
    }
    let mut child = command.spawn().expect("spawn wbx");
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    (home, child, stdout, first)
}

/// The attack of a listening `probe` (`*_accepts_hold`) that keeps every
/// connection 300 peers make: it gets 255 beside its listener (the store's
/// 256 sockets); run with `drop`, dropping each, it takes all 300; run
/// with `release`, it drops the 255 it held once they stop coming and
/// waits on its listener (not in `accept`, which counts the store's
/// sockets again), and the next 10 are taken: a socket dropped leaves the
/// count the host admits a connection by.
pub fn assert_accepts_hold_at_the_socket_cap(probe: &str) {
    assert_eq!(accepted_of_300(probe, &[], 0), "accepted 255\n");
    assert_eq!(accepted_of_300(probe, &["drop"], 0), "accepted 300\n");
    assert_eq!(
        accepted_of_300(probe, &["release"], 10),
        "released 255\naccepted 265\n",
        "the sockets it dropped left the count: the next 10 are taken"
    );
}

/// `count` peers connected to `port` on loopback, held. A peer the host
/// resets (one past the guest's cap) is not held: on a busy machine the
/// reset can come before `connect` returns, which then fails with it.
/// What the guest took is what it prints, asserted by the caller.
fn peers(port: u16, count: usize) -> Vec<TcpStream> {
    (0..count)
        .filter_map(|_| match TcpStream::connect(("127.0.0.1", port)) {
            Ok(peer) => Some(peer),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => None,
            Err(e) => panic!("connect: {e}"),
        })
        .collect()
}

/// Runs the listening `probe` with `args` (loopback opened), connects 300
/// peers to the port of its first line (`listening PORT`) and holds them
/// until it ends; with `more`, that many more connect once it prints its
/// next line (`released N`). What it printed after its first line.
fn accepted_of_300(probe: &str, args: &[&str], more: usize) -> String {
    use std::io::BufRead;
    let (_home, child, mut stdout, first) = spawn_listening(probe, args, "127.0.0.1/32");
    let port: u16 = first
        .trim_end()
        .strip_prefix("listening ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{first}"));
    let first_wave = peers(port, 300);
    let mut rest = String::new();
    let mut second_wave = Vec::new();
    if more > 0 {
        stdout.read_line(&mut rest).unwrap();
        second_wave = peers(port, more);
    }
    stdout.read_to_string(&mut rest).unwrap();
    let output = child.wait_with_output().unwrap();
    drop((first_wave, second_wave));
    assert!(
        output.status.success(),
        "{rest}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    rest
}
