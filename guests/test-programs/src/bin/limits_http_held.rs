//! Makes the host hold `wasi:http` values until it refuses. `fields` fills
//! header maps (seven values of 16 KiB each, under wasmtime-wasi-http's
//! 128 KiB per map) and keeps every one, printing how many it holds every
//! 64 maps; `bodies` opens outgoing-request bodies, writes into each until
//! it takes no more, keeps them all unsent, and prints where it was
//! refused.
use test_programs::wasi::http::types::{Fields, OutgoingRequest};

fn fields(value: &[u8]) {
    let mut maps = Vec::new();
    for n in 0..10_000usize {
        let map = Fields::new();
        for i in 0..7 {
            if let Err(e) = map.append(&format!("x-fill-{i}"), value) {
                println!("refused at map {n}: {e:?}");
                return;
            }
        }
        maps.push(map);
        if n % 64 == 0 {
            println!("held {} maps", maps.len());
        }
    }
    println!("never refused");
}

fn bodies(value: &[u8]) {
    let mut kept = Vec::new();
    let mut written = 0usize;
    for n in 0..2_000usize {
        let request = OutgoingRequest::new(Fields::new());
        let Ok(body) = request.body() else {
            println!("refused at body {n}, {written} bytes written");
            return;
        };
        let stream = body.write().expect("the body's stream");
        while let Ok(room) = stream.check_write() {
            let room = usize::try_from(room).unwrap_or(usize::MAX).min(value.len());
            if room == 0 || stream.write(&value[..room]).is_err() {
                break;
            }
            written += room;
        }
        // The stream before its body, the body before its request.
        kept.push((stream, body, request));
    }
    println!("never refused, {written} bytes written");
}

fn main() {
    let value = vec![b'a'; 16 << 10];
    match std::env::args().nth(1).as_deref() {
        Some("fields") => fields(&value),
        Some("bodies") => bodies(&value),
        _ => println!("usage: limits_http_held fields|bodies"),
    }
}
