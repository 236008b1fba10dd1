//! A `plugin-async`-world component: its `run` is an async export (the
//! component model's async ABI, as a WASI 0.3 toolchain lifts it) that
//! awaits a 0.3 host timer before answering, so `wbx call` must drive its
//! event loop.
//! `sleep:MS` awaits that long; anything else is echoed after 1 ms.

wit_bindgen::generate!({
    inline: r#"
        package wb:plugin-03;
        world plugin-03 {
            include workbooks:engine/plugin-async@0.1.0;
        }
    "#,
    path: ["../../wit"],
    world: "wb:plugin-03/plugin-03",
    generate_all,
});

struct Plugin;

export!(Plugin);

impl Guest for Plugin {
    async fn run(input: String) -> Result<String, String> {
        let ms = input
            .strip_prefix("sleep:")
            .and_then(|ms| ms.parse::<u64>().ok())
            .unwrap_or(1);
        wasip3::clocks::monotonic_clock::wait_for(ms * 1_000_000).await;
        Ok(format!("async run after {ms} ms: {input}"))
    }
}

fn main() {
    unreachable!("a plugin is called through its `run` export");
}
