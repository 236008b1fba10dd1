//! Holds one `wasi:sockets` 0.2 TCP connection to 127.0.0.1:argv[1] and
//! talks on it argv[2] times, 50 ms apart: writes `ping\n`, reads the
//! answer. Prints `connected`, then `round N: ok` per answered round, or
//! `round N: failed: WHY` (and stops) when a write or read fails.
use test_programs::wasi::clocks::monotonic_clock;
use test_programs::wasi::io::streams::StreamError;
use test_programs::wasi::sockets::{
    instance_network,
    network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress},
    tcp_create_socket,
};

fn why(e: StreamError) -> String {
    match e {
        StreamError::Closed => "closed".into(),
        // Its first line: a host built with backtraces adds one.
        StreamError::LastOperationFailed(e) => {
            let why = e.to_debug_string();
            why.lines().next().unwrap_or_default().to_string()
        }
    }
}

fn main() {
    let args = test_programs::args();
    let port: u16 = args.first().and_then(|p| p.parse().ok()).unwrap_or(80);
    let rounds: u32 = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1);
    let net = instance_network::instance_network();
    let sock = tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4).expect("socket");
    let addr = IpSocketAddress::Ipv4(Ipv4SocketAddress {
        port,
        address: (127, 0, 0, 1),
    });
    if let Err(e) = sock.start_connect(&net, addr) {
        println!("connect: denied: {e:?}");
        return;
    }
    sock.subscribe().block();
    let (input, output) = match sock.finish_connect() {
        Ok(streams) => streams,
        Err(e) => {
            println!("connect: denied: {e:?}");
            return;
        }
    };
    println!("connected");
    for round in 0..rounds {
        let answered = output
            .blocking_write_and_flush(b"ping\n")
            .and_then(|()| input.blocking_read(64));
        match answered {
            Ok(_) => println!("round {round}: ok"),
            Err(e) => {
                println!("round {round}: failed: {}", why(e));
                return;
            }
        }
        monotonic_clock::subscribe_duration(50_000_000).block();
    }
}
