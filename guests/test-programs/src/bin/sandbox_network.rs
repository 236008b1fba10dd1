//! Tries to resolve `localhost` (printing how many addresses the host gave
//! back) and to open a TCP connection to 127.0.0.1:argv[1], through
//! wasi:sockets.
use test_programs::wasi::sockets::{
    instance_network, ip_name_lookup,
    network::{self, IpAddressFamily, IpSocketAddress, Ipv4SocketAddress},
    tcp_create_socket,
};

fn main() {
    let port: u16 = test_programs::args()
        .first()
        .and_then(|p| p.parse().ok())
        .unwrap_or(80);
    let net = instance_network::instance_network();
    match ip_name_lookup::resolve_addresses(&net, "localhost") {
        Ok(stream) => {
            let mut found = 0;
            loop {
                match stream.resolve_next_address() {
                    Ok(Some(_)) => found += 1,
                    Ok(None) => break,
                    Err(network::ErrorCode::WouldBlock) => stream.subscribe().block(),
                    Err(e) => {
                        println!("lookup: failed: {e:?}");
                        break;
                    }
                }
            }
            println!("lookup: {found} addresses");
        }
        Err(e) => println!("lookup: denied: {e:?}"),
    }
    let sock = match tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4) {
        Ok(sock) => sock,
        Err(e) => {
            println!("socket: denied: {e:?}");
            return;
        }
    };
    let addr = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port,
        address: (127, 0, 0, 1),
    });
    match sock.start_connect(&net, addr) {
        Ok(()) => {
            sock.subscribe().block();
            match sock.finish_connect() {
                Ok(_) => println!("connect: connected"),
                Err(e) => println!("connect: denied: {e:?}"),
            }
        }
        Err(e) => println!("connect: denied: {e:?}"),
    }
}
