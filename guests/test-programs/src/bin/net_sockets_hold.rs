//! Creates TCP sockets through wasi:sockets and holds every one: argv[1]
//! is how many; prints `created N`, then the first error if one stopped it.
use test_programs::wasi::sockets::{network::IpAddressFamily, tcp_create_socket};

fn main() {
    let want: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let mut held = Vec::with_capacity(want);
    let mut stopped = None;
    for _ in 0..want {
        match tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4) {
            Ok(socket) => held.push(socket),
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    println!("created {}", held.len());
    if let Some(e) = stopped {
        println!("error {e:?}");
    }
}
