//! A plugin that fetches: `run(URL)` answers `STATUS BYTES` for a GET of
//! URL through the engine's `net` interface, or the refusal as an `err`.
wit_bindgen::generate!({
    inline: r#"
        package wb:instance-fetch;
        world instance-fetch {
            include workbooks:engine/plugin@0.1.0;
            import workbooks:engine/net@0.1.0;
        }
    "#,
    path: ["../../wit", "../../wit/host"],
    world: "wb:instance-fetch/instance-fetch",
    generate_all,
});

use workbooks::engine::net;

struct Plugin;

impl Guest for Plugin {
    fn run(url: String) -> Result<String, String> {
        match net::fetch(&url) {
            Ok(r) => Ok(format!("{} {}", r.status, r.body.len())),
            Err(e) => Err(format!("{e:?}")),
        }
    }
}

export!(Plugin);

fn main() {}
