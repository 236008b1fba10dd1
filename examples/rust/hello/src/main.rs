//! A `wasi:cli` command: greets whoever its arguments name, else the
//! world. Built with `cargo build --release --target wasm32-wasip2`; `wbx
//! examples` writes the copy built with the engine as `hello.wasm`.

fn main() {
    let who: Vec<String> = std::env::args().skip(1).collect();
    if who.is_empty() {
        println!("hello, world");
    } else {
        println!("hello, {}", who.join(" "));
    }
}
