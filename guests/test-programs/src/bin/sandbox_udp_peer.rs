//! Binds a UDP socket to 0.0.0.0:0 through wasi:sockets, sends `hello` to
//! 127.0.0.1:argv[1], then prints every datagram it receives (`from ADDR:
//! TEXT`) until one reads `done` or 3 s pass.
use test_programs::show;
use test_programs::wasi::sockets::network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress};
use test_programs::wasi::sockets::udp::OutgoingDatagram;
use test_programs::wasi::sockets::{instance_network, udp_create_socket};

fn main() {
    let port: u16 = test_programs::args()
        .first()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let net = instance_network::instance_network();
    let socket = udp_create_socket::create_udp_socket(IpAddressFamily::Ipv4).expect("socket");
    let any = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port: 0,
        address: (0, 0, 0, 0),
    });
    socket.start_bind(&net, any).expect("bind");
    socket.subscribe().block();
    socket.finish_bind().expect("bind");
    let (incoming, outgoing) = socket.stream(None).expect("stream");
    let server = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port,
        address: (127, 0, 0, 1),
    });
    outgoing.subscribe().block();
    outgoing.check_send().expect("check-send");
    let sent = outgoing.send(&[OutgoingDatagram {
        data: b"hello".to_vec(),
        remote_address: Some(server),
    }]);
    println!("sent: {sent:?}");
    let start = std::time::Instant::now();
    let pollable = incoming.subscribe();
    while start.elapsed() < std::time::Duration::from_secs(3) {
        pollable.block();
        for datagram in incoming.receive(16).unwrap_or_default() {
            let text = String::from_utf8_lossy(&datagram.data).into_owned();
            println!("from {}: {text}", show(&datagram.remote_address));
            if text == "done" {
                return;
            }
        }
    }
    println!("timed out");
}
