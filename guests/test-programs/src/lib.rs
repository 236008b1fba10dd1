//! Shared bindings for the probe guests. Each `src/bin/<suite>_<case>.rs` is
//! one test case; the host's tests reach it through the path constants of
//! the `guest-artifacts` crate. Interfaces a probe never calls do not become
//! imports of its component, so each probe asks for exactly what it uses.

wit_bindgen::generate!({
    inline: r#"
        package wb:test-programs;

        world probes {
            include workbooks:engine/imports@0.1.0;
            import wasi:cli/exit@0.2.12;
            import wasi:sockets/instance-network@0.2.12;
            import wasi:sockets/tcp-create-socket@0.2.12;
            import wasi:sockets/tcp@0.2.12;
            import wasi:sockets/ip-name-lookup@0.2.12;
            import wasi:sockets/udp-create-socket@0.2.12;
            import wasi:sockets/udp@0.2.12;
            import wasi:filesystem/preopens@0.2.12;
            import wasi:http/outgoing-handler@0.2.12;
            import wasi:clocks/monotonic-clock@0.2.12;
        }
    "#,
    path: ["../../wit", "../../wit/host"],
    world: "wb:test-programs/probes",
    generate_all,
});

/// Exits with `code` through `wasi:cli/exit#exit-with-code`, so the host
/// sees the real code (std's `process::exit` only carries ok/err on wasip2).
pub fn exit(code: u8) -> ! {
    wasi::cli::exit::exit_with_code(code);
    unreachable!("exit-with-code returned")
}

/// The program's arguments after argv[0].
pub fn args() -> Vec<String> {
    std::env::args().skip(1).collect()
}

/// A socket address as `A.B.C.D:PORT` (IPv6 as `[v6]:PORT`).
pub fn show(addr: &wasi::sockets::network::IpSocketAddress) -> String {
    use wasi::sockets::network::IpSocketAddress;
    match addr {
        IpSocketAddress::Ipv4(a) => {
            let (x, y, z, w) = a.address;
            format!("{x}.{y}.{z}.{w}:{}", a.port)
        }
        IpSocketAddress::Ipv6(a) => format!("[v6]:{}", a.port),
    }
}

/// Makes up to `want` things with `make` and hands every one back: prints
/// `VERB N`, then the first error if one stopped it.
pub fn hold<T, E: std::fmt::Debug>(
    want: usize,
    verb: &str,
    mut make: impl FnMut() -> Result<T, E>,
) -> Vec<T> {
    let mut held = Vec::with_capacity(want);
    let mut stopped = None;
    for _ in 0..want {
        match make() {
            Ok(thing) => held.push(thing),
            Err(e) => {
                stopped = Some(e);
                break;
            }
        }
    }
    println!("{verb} {}", held.len());
    if let Some(e) = stopped {
        println!("error {e:?}");
    }
    held
}

/// Waits until stdin ends (what a probe that keeps what it holds waits
/// on), with what it printed flushed first.
pub fn wait_for_stdin_end() {
    use std::io::{Read, Write};
    std::io::stdout().flush().expect("stdout");
    let mut rest = Vec::new();
    std::io::stdin().read_to_end(&mut rest).expect("stdin");
}
