//! Builds the agent loop component (`guests/agent`) to wasm32-wasip2 and
//! copies it into OUT_DIR, where `src/host.rs` embeds it: the service
//! ships its own component, which the core does not name.

#[path = "../../guests/build_support.rs"]
mod build_support;

fn main() {
    let manifest =
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let root = build_support::repo_root(&manifest);
    let dir = build_support::build_guests(&root, &["agent"]);
    std::fs::copy(dir.join("agent.wasm"), out.join("agent.wasm"))
        .unwrap_or_else(|e| panic!("copying agent.wasm: {e}"));
}
