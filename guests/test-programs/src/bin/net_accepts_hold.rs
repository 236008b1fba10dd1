//! WASI 0.2 connections held: `net_accepts_hold [drop|release]` listens
//! on `127.0.0.1` at a port the system picks, prints `listening PORT`,
//! then accepts every connection its peers make and keeps each one (with
//! `drop`, drops each at once, as a server done with it would). Once at
//! least one came, it stops when none has come for three seconds (or
//! after a minute with none at all) and prints `accepted N`, and the
//! error that stopped an accept, if one did. With `release`, the first
//! three quiet seconds instead drop every connection held, print
//! `released N` and wait on for more, as a server that waits for its
//! listener to be ready before it accepts again.
use test_programs::wasi::clocks::monotonic_clock;
use test_programs::wasi::io::poll;
use test_programs::wasi::sockets::network::{
    ErrorCode, IpAddressFamily, IpSocketAddress, Ipv4SocketAddress,
};
use test_programs::wasi::sockets::{instance_network, tcp_create_socket};

/// How long a quiet listener waits for one more connection, in nanoseconds.
const QUIET_NS: u64 = 3_000_000_000;
/// How long it waits for the first.
const FIRST_NS: u64 = 60_000_000_000;

fn main() {
    let mode = test_programs::args().first().cloned().unwrap_or_default();
    let keep = mode != "drop";
    let mut release = mode == "release";
    let net = instance_network::instance_network();
    let socket = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4).expect("socket");
    let loopback = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port: 0,
        address: (127, 0, 0, 1),
    });
    let listening = socket
        .start_bind(&net, loopback)
        .and_then(|()| {
            socket.subscribe().block();
            socket.finish_bind()
        })
        .and_then(|()| socket.start_listen())
        .and_then(|()| {
            socket.subscribe().block();
            socket.finish_listen()
        });
    if let Err(e) = listening {
        println!("listen {e:?}");
        return;
    }
    let port = match socket.local_address() {
        Ok(IpSocketAddress::Ipv4(at)) => at.port,
        _ => 0,
    };
    println!("listening {port}");
    let ready = socket.subscribe();
    let mut held = Vec::new();
    let mut accepted = 0;
    let mut stopped = None;
    loop {
        let wait = if accepted == 0 { FIRST_NS } else { QUIET_NS };
        let timer = monotonic_clock::subscribe_duration(wait);
        if !poll::poll(&[&ready, &timer]).contains(&0) {
            if std::mem::take(&mut release) {
                let released = held.len();
                held.clear();
                println!("released {released}");
                continue;
            }
            break;
        }
        match socket.accept() {
            Ok((peer, input, output)) => {
                accepted += 1;
                // The streams go before their socket (a socket with live
                // streams cannot be dropped).
                let peer = (input, output, peer);
                if keep {
                    held.push(peer);
                }
            }
            Err(ErrorCode::WouldBlock) => {}
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    println!("accepted {accepted}");
    if let Some(e) = stopped {
        println!("error {e:?}");
    }
}
