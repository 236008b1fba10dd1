//! WASI 0.3 listeners, as a guest that wants to serve would try them:
//! `wasi03_listen PORT` listens without binding (wasmtime-wasi would bind
//! the wildcard address) and prints `wildcard listen` with where the host
//! put it, at once; if it listens, takes one connection there and answers
//! `echo:` and what it read. Then binds the wildcard address at PORT, and
//! then `127.0.0.1:PORT`. Prints each outcome.

use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use wasip3::sockets::types::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, TcpSocket};
use wasip3::wit_bindgen::{StreamReader, StreamResult};
use wasip3::wit_stream;

struct Probe;

wasip3::cli::command::export!(Probe);

fn at(address: (u8, u8, u8, u8), port: u16) -> IpSocketAddress {
    IpSocketAddress::Ipv4(Ipv4SocketAddress { port, address })
}

/// Takes one connection from `accept`, reads what it sends and answers.
async fn serve_one(mut accept: StreamReader<TcpSocket>) -> String {
    let Some(peer) = accept.next().await else {
        return "accept ended".into();
    };
    let (mut rx, _received) = peer.receive();
    let (result, got) = rx.read(Vec::with_capacity(64)).await;
    if !matches!(result, StreamResult::Complete(_)) {
        return format!("read {result:?}");
    }
    let (mut tx, body) = wit_stream::new::<u8>();
    let sent = peer.send(body);
    let mut answer = b"echo:".to_vec();
    answer.extend_from_slice(&got);
    tx.write_all(answer).await;
    drop(tx);
    let _ = sent.await;
    format!("accepted {}", String::from_utf8_lossy(&got))
}

fn show(at: &IpSocketAddress) -> String {
    match at {
        IpSocketAddress::Ipv4(a) => {
            let (x, y, z, w) = a.address;
            format!("{x}.{y}.{z}.{w}:{}", a.port)
        }
        IpSocketAddress::Ipv6(a) => format!("[v6]:{}", a.port),
    }
}

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let Some(port) = args().first().and_then(|p| p.parse::<u16>().ok()) else {
            out(b"usage: wasi03_listen PORT\n").await;
            return Err(());
        };
        let socket = TcpSocket::create(IpAddressFamily::Ipv4).map_err(|_| ())?;
        match socket.listen() {
            Ok(accept) => {
                let at = socket.get_local_address().map(|a| show(&a));
                out(format!("wildcard listen Ok({})\n", at.unwrap_or_default()).as_bytes()).await;
                let served = serve_one(accept).await;
                out(format!("{served}\n").as_bytes()).await;
            }
            Err(e) => {
                out(format!("wildcard listen Err({e:?})\n").as_bytes()).await;
            }
        }
        drop(socket);
        let socket = TcpSocket::create(IpAddressFamily::Ipv4).map_err(|_| ())?;
        let bound = socket.bind(at((0, 0, 0, 0), port));
        let placed = socket.get_local_address().map(|a| show(&a));
        let placed = placed.unwrap_or_default();
        out(format!("wildcard port {:?} {placed}\n", bound).as_bytes()).await;
        drop(socket);
        let socket = TcpSocket::create(IpAddressFamily::Ipv4).map_err(|_| ())?;
        let bound = socket.bind(at((127, 0, 0, 1), port));
        out(format!("loopback port {bound:?}\n").as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
