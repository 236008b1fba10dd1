//! One-shot sockets: `tcp|udp|tls HOST PORT DATA` prints the reply or the
//! error.
use test_programs::workbooks::engine::{tcp, tls, udp};

fn main() {
    let args = test_programs::args();
    let port: u16 = args[2].parse().expect("port");
    let data = args.get(3).cloned().unwrap_or_default().into_bytes();
    let reply = match args[0].as_str() {
        "tcp" => tcp::request(&args[1], port, &data),
        "udp" => udp::request(&args[1], port, &data),
        "tls" => tls::request(&args[1], port, &data),
        other => panic!("unknown proto {other}"),
    };
    match reply {
        Ok(bytes) => println!(
            "reply {} bytes: {}",
            bytes.len(),
            String::from_utf8_lossy(&bytes[..bytes.len().min(60)])
        ),
        Err(e) => println!("error {e:?}"),
    }
}
