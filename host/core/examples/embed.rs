//! An app that embeds the engine as its plugin host: it loads a plugin,
//! reads what the plugin asks for, grants it a profile, calls it, and reads
//! its receipt; a plugin asking for more than its grant is refused before it
//! runs.
//!
//! ```sh
//! cargo run -p workbooks --example embed -- PLUGIN.wasm [INPUT]
//! ```
//!
//! `PLUGIN.wasm` is a `plugin` world component, e.g. the Rust guide's
//! counter (`docs/authors/rust.md`), which imports `kv`.

use workbooks::dock::analyse;
use workbooks::{Artifact, Engine, Grant, StartOptions, Stub, Supervisor};

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: embed PLUGIN.wasm [INPUT]"))?;
    let input = args.next().unwrap_or_else(|| "apple".into());

    // The host: its caches and the tenants' durable state live in `home`.
    // A plugin built by a toolchain that imports sockets it never uses gets
    // a deny broker for them rather than the network.
    let home = tempfile::tempdir()?;
    let engine = Engine::builder()
        .home(home.path())
        .stub(Stub::Sockets)
        .build()?;

    // What the plugin asks for, before anything runs.
    let plugin = Artifact::from_file(&path)?;
    let asks = analyse(&plugin)?;
    let profiles: Vec<&str> = asks.granted_by.iter().map(|p| p.name()).collect();
    println!(
        "{path} needs caps {} (granted by {})",
        asks.caps,
        profiles.join(", ")
    );

    // A plugin is refused under a grant that lacks what it imports.
    if let Err(refused) = engine.dock(&plugin, &Grant::profile("compute")) {
        println!("under compute: {refused}");
    }

    // Granted the narrowest profile that covers it, it runs for a tenant.
    let profile = asks.granted_by.first().map_or("compute", |p| p.name());
    let host = Supervisor::for_tenant(engine.clone(), "acme")?;
    let start = StartOptions {
        profile: profile.to_string(),
        ..StartOptions::default()
    };
    host.start("plugin", &plugin, start).await?;
    for _ in 0..2 {
        match host.call_run("plugin", &input).await? {
            Ok(answer) => println!("ok: {answer}"),
            Err(failure) => println!("err: {failure}"),
        }
    }
    let info = host.info("plugin")?;
    println!("calls {}, faults {}", info.calls, info.faults);
    host.stop("plugin")?;

    // The receipt: what it was granted and what serves each import.
    let docked = engine.dock(&plugin, &Grant::profile(profile))?;
    print!("{}", docked.receipt());
    for import in &docked.receipt().imports {
        println!(
            "  {} needs {}: {}",
            import.name, import.cap, import.served_by
        );
    }
    Ok(())
}
