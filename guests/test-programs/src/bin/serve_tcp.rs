//! A raw-TCP service for `wbx serve --tcp`: replies `got N: <REQUEST>` (the
//! request's length and its bytes uppercased); `spin` computes for ever
//! without answering; `big` replies with 9 MiB (past the engine's cap).
wit_bindgen::generate!({
    inline: r#"
        package wb:serve-tcp;

        world service {
            export workbooks:engine/tcp-handler@0.1.0;
        }
    "#,
    path: "../../wit",
    world: "wb:serve-tcp/service",
    generate_all,
});

use exports::workbooks::engine::tcp_handler::Guest;

struct Service;

impl Guest for Service {
    fn handle(request: Vec<u8>) -> Vec<u8> {
        match request.as_slice() {
            b"spin" => {
                let mut n: u64 = 0;
                loop {
                    n = std::hint::black_box(n.wrapping_add(1));
                }
            }
            b"big" => vec![b'x'; 9 << 20],
            _ => {
                let mut reply = format!("got {}: ", request.len()).into_bytes();
                reply.extend(request.to_ascii_uppercase());
                reply
            }
        }
    }
}

export!(Service);

fn main() {}
