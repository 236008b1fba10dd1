//! Imports wasi:sockets and asks for the network handle.
use test_programs::wasi::sockets::instance_network;

fn main() {
    let _network = instance_network::instance_network();
    println!("sockets answers");
}
