//! WASI 0.3 sockets: `wasi03_connect A.B.C.D:PORT [NAME]` connects a TCP
//! socket there and, given a name, looks it up; prints each outcome.

use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use wasip3::sockets::ip_name_lookup::resolve_addresses;
use wasip3::sockets::types::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, TcpSocket};

struct Probe;

wasip3::cli::command::export!(Probe);

fn parse(addr: &str) -> Option<Ipv4SocketAddress> {
    let (ip, port) = addr.split_once(':')?;
    let mut octets = ip.split('.').map(|o| o.parse::<u8>().ok());
    let address = (
        octets.next()??,
        octets.next()??,
        octets.next()??,
        octets.next()??,
    );
    Some(Ipv4SocketAddress {
        port: port.parse().ok()?,
        address,
    })
}

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let args = args();
        let mut report = String::new();
        let Some(target) = args.first().and_then(|a| parse(a)) else {
            out(b"usage: wasi03_connect A.B.C.D:PORT [NAME]\n").await;
            return Err(());
        };
        let connected = match TcpSocket::create(IpAddressFamily::Ipv4) {
            Ok(socket) => socket.connect(IpSocketAddress::Ipv4(target)).await,
            Err(e) => Err(e),
        };
        report.push_str(&format!("connect {connected:?}\n"));
        if let Some(name) = args.get(1) {
            let found = resolve_addresses(name.clone()).await;
            report.push_str(&format!("lookup {found:?}\n"));
        }
        out(report.as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
