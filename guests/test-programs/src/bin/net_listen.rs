//! A WASI 0.2 listener as a guest that wants to serve would open it:
//! `net_listen [PORT]` binds the wildcard address `0.0.0.0:PORT` (port 0,
//! the system's choice, by default), listens, prints `bound ADDR` (where
//! the host put it) at once, takes one connection and answers `echo:` and
//! what it read, then prints `accepted TEXT`. A refusal prints
//! `bind ERROR` or `listen ERROR`.
use test_programs::show;
use test_programs::wasi::sockets::network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress};
use test_programs::wasi::sockets::{instance_network, tcp_create_socket};

fn main() {
    let port: u16 = match test_programs::args().first() {
        Some(p) => p.parse().expect("usage: net_listen [PORT]"),
        None => 0,
    };
    let net = instance_network::instance_network();
    let socket = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4).expect("socket");
    let wildcard = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port,
        address: (0, 0, 0, 0),
    });
    let bound = socket.start_bind(&net, wildcard).and_then(|()| {
        socket.subscribe().block();
        socket.finish_bind()
    });
    if let Err(e) = bound {
        println!("bind {e:?}");
        return;
    }
    let listening = socket.start_listen().and_then(|()| {
        socket.subscribe().block();
        socket.finish_listen()
    });
    if let Err(e) = listening {
        println!("listen {e:?}");
        return;
    }
    match socket.local_address() {
        Ok(at) => println!("bound {}", show(&at)),
        Err(e) => println!("bound {e:?}"),
    }
    socket.subscribe().block();
    let (_peer, rx, tx) = socket.accept().expect("accept");
    // A stream can report ready and read nothing yet; the peer's bytes
    // come after.
    let got = loop {
        let got = rx.blocking_read(64).expect("read");
        if !got.is_empty() {
            break got;
        }
    };
    let mut answer = b"echo:".to_vec();
    answer.extend_from_slice(&got);
    tx.blocking_write_and_flush(&answer).expect("write");
    println!("accepted {}", String::from_utf8_lossy(&got));
}
