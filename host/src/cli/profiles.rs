//! `wbx profiles`: the policy table.

use workbooks::{Profile, policy};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(args: Args) -> u8 {
    if args.json {
        let rows: Vec<serde_json::Value> = Profile::ALL
            .iter()
            .map(|p| {
                serde_json::json!({
                    "profile": p.name(),
                    "memory_bytes": p.memory_bytes(),
                    "timeout_ms": p.timeout().as_millis() as u64,
                    "caps": p.caps().words(),
                    "allow_http": policy::allow_http(p.caps()),
                })
            })
            .collect();
        println!("{}", serde_json::Value::Array(rows));
        return 0;
    }
    println!(
        "{:<8}  {:>8}  {:>7}  {:<4}  caps",
        "profile", "memory", "timeout", "http"
    );
    for p in Profile::ALL {
        println!(
            "{:<8}  {:>4} MiB  {:>5} s  {:<4}  {}",
            p.name(),
            p.memory_bytes() >> 20,
            p.timeout().as_secs(),
            if policy::allow_http(p.caps()) {
                "yes"
            } else {
                "no"
            },
            p.caps()
        );
    }
    0
}
