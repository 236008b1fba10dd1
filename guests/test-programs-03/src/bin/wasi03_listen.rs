//! WASI 0.3 listeners, as a guest that wants to serve would try them:
//! `wasi03_listen PORT` listens on the wildcard address without binding,
//! binds the wildcard address at PORT, then binds `127.0.0.1:PORT`,
//! listens, takes one connection and answers `echo:` and what it read.
//! Prints each outcome.

use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use wasip3::sockets::types::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, TcpSocket};
use wasip3::wit_bindgen::StreamResult;
use wasip3::wit_stream;

struct Probe;

wasip3::cli::command::export!(Probe);

fn at(address: (u8, u8, u8, u8), port: u16) -> IpSocketAddress {
    IpSocketAddress::Ipv4(Ipv4SocketAddress { port, address })
}

/// Takes one connection on `listener`, reads what it sends and answers.
async fn serve_one(listener: &TcpSocket) -> String {
    let mut accept = match listener.listen() {
        Ok(accept) => accept,
        Err(e) => return format!("listen Err({e:?})"),
    };
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

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let Some(port) = args().first().and_then(|p| p.parse::<u16>().ok()) else {
            out(b"usage: wasi03_listen PORT\n").await;
            return Err(());
        };
        let mut report = String::new();
        let socket = TcpSocket::create(IpAddressFamily::Ipv4).map_err(|_| ())?;
        report.push_str(&format!(
            "wildcard listen {:?}\n",
            socket.listen().map(|_| ())
        ));
        let socket = TcpSocket::create(IpAddressFamily::Ipv4).map_err(|_| ())?;
        report.push_str(&format!(
            "wildcard port {:?}\n",
            socket.bind(at((0, 0, 0, 0), port))
        ));
        let socket = TcpSocket::create(IpAddressFamily::Ipv4).map_err(|_| ())?;
        let bound = socket.bind(at((127, 0, 0, 1), port));
        report.push_str(&format!("loopback port {bound:?}\n"));
        if bound.is_ok() {
            report.push_str(&serve_one(&socket).await);
            report.push('\n');
        }
        out(report.as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
