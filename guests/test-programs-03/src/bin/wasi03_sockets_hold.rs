//! WASI 0.3 sockets held: `wasi03_sockets_hold N [udp]` makes N TCP (or
//! UDP) sockets and keeps every one; prints `created N`, then the error
//! that stopped it.

use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use wasip3::sockets::types::{IpAddressFamily, TcpSocket, UdpSocket};

/// A socket of either kind, kept open.
enum Held {
    Tcp(#[expect(dead_code, reason = "held, never used")] TcpSocket),
    Udp(#[expect(dead_code, reason = "held, never used")] UdpSocket),
}

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let args = args();
        let want: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
        let udp = args.get(1).map(String::as_str) == Some("udp");
        let mut held = Vec::with_capacity(want);
        let mut stopped = None;
        for _ in 0..want {
            let made = if udp {
                UdpSocket::create(IpAddressFamily::Ipv4).map(Held::Udp)
            } else {
                TcpSocket::create(IpAddressFamily::Ipv4).map(Held::Tcp)
            };
            match made {
                Ok(socket) => held.push(socket),
                Err(e) => {
                    stopped = Some(e);
                    break;
                }
            }
        }
        let mut report = format!("created {}\n", held.len());
        if let Some(e) = stopped {
            report.push_str(&format!("error {e:?}\n"));
        }
        out(report.as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
