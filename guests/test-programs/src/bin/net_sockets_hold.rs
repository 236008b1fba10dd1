//! Creates sockets through wasi:sockets and holds every one: argv[1] is
//! how many, argv[2] `udp` for UDP sockets (TCP otherwise); prints
//! `created N`, then the first error if one stopped it. With argv[3]
//! `wait` it keeps them until its stdin ends.
use test_programs::wasi::sockets::{
    network::IpAddressFamily, tcp_create_socket, udp_create_socket,
};

/// A socket of either kind, kept open.
enum Held {
    Tcp(#[expect(dead_code, reason = "held, never used")] tcp_create_socket::TcpSocket),
    Udp(#[expect(dead_code, reason = "held, never used")] udp_create_socket::UdpSocket),
}

fn main() {
    let want: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let udp = std::env::args().nth(2).as_deref() == Some("udp");
    let wait = std::env::args().nth(3).as_deref() == Some("wait");
    let held = test_programs::hold(want, "created", || {
        if udp {
            udp_create_socket::create_udp_socket(IpAddressFamily::Ipv4).map(Held::Udp)
        } else {
            tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4).map(Held::Tcp)
        }
    });
    if wait {
        test_programs::wait_for_stdin_end();
    }
    drop(held);
}
