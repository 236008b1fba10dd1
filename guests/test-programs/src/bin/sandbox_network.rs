//! Tries to open a TCP connection to the address in argv[1] and to resolve
//! a name, through wasi:sockets.
use test_programs::wasi::sockets::{
    instance_network, ip_name_lookup,
    network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress},
    tcp_create_socket,
};

fn main() {
    let port: u16 = test_programs::args()
        .first()
        .and_then(|p| p.parse().ok())
        .unwrap_or(80);
    let net = instance_network::instance_network();
    match ip_name_lookup::resolve_addresses(&net, "localhost") {
        Ok(_) => println!("lookup: started"),
        Err(e) => println!("lookup: denied: {e:?}"),
    }
    let sock = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4).expect("socket");
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
