//! A WASI 0.3 command that imports an engine interface a broker serves:
//! `wasi03_kv KEY VALUE` stores VALUE under KEY through
//! `workbooks:engine/kv` (the kv broker, composed in), reads it back and
//! prints both outcomes.

wit_bindgen::generate!({
    inline: r#"
        package wb:kv-03;
        world kv-03 {
            import workbooks:engine/kv@0.1.0;
        }
    "#,
    path: ["../../wit"],
    world: "wb:kv-03/kv-03",
    generate_all,
});

use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use workbooks::engine::kv;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let [key, value] = args().try_into().map_err(|_| ())?;
        let set = kv::set(&key, value.as_bytes());
        let got =
            kv::get(&key).map(|v| v.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()));
        out(format!("set {set:?}\nget {got:?}\n").as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
