//! A plugin for the Instance API: `run(input)` dispatches on a verb.
//! `echo:TEXT`, `count` (calls so far in this instance), `spin`,
//! `hold:MIB` (allocates and keeps MIB more), `recurse`, `sleep:MS`,
//! `session`, `kv-set:K=V`, `kv-get:K`, `vfs-read:PATH`, `vfs-write:PATH=DATA`,
//! `try-hold:MIB` (asks for MIB more and handles a refusal), `panic`.
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

wit_bindgen::generate!({
    inline: r#"
        package wb:instance-plugin;
        world instance-plugin {
            include workbooks:engine/plugin@0.1.0;
            include workbooks:engine/imports@0.1.0;
        }
    "#,
    path: ["../../wit", "../../wit/host"],
    world: "wb:instance-plugin/instance-plugin",
    generate_all,
});

use workbooks::engine::{kv, session_info, vfs};

static CALLS: AtomicU64 = AtomicU64::new(0);
static HOARD: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

#[expect(
    unconditional_recursion,
    reason = "the probe exists to overflow the stack"
)]
fn dive(pad: [u64; 4]) -> u64 {
    let next = std::hint::black_box(pad);
    std::hint::black_box(dive(next)) + next[0]
}

struct Plugin;

impl Guest for Plugin {
    fn run(input: String) -> Result<String, String> {
        let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        let (verb, arg) = input.split_once(':').unwrap_or((input.as_str(), ""));
        match verb {
            "echo" => Ok(arg.to_string()),
            "count" => Ok(calls.to_string()),
            "spin" => {
                let mut x = 0u64;
                loop {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            }
            "hold" => {
                let mib: usize = arg.parse().map_err(|_| "bad size".to_string())?;
                let mut hoard = HOARD.lock().map_err(|_| "poisoned".to_string())?;
                for _ in 0..mib {
                    hoard.push(vec![0x5A; 1 << 20]);
                }
                Ok(format!("holding {} MiB", hoard.len()))
            }
            "try-hold" => {
                let mib: usize = arg.parse().map_err(|_| "bad size".to_string())?;
                let mut v: Vec<u8> = Vec::new();
                match v.try_reserve_exact(mib << 20) {
                    Ok(()) => Ok(format!("got {mib} MiB")),
                    Err(_) => Ok("refused".into()),
                }
            }
            "panic" => panic!("a fault that has nothing to do with memory"),
            "recurse" => Ok(dive([1; 4]).to_string()),
            "sleep" => {
                let ms: u64 = arg.parse().map_err(|_| "bad ms".to_string())?;
                std::thread::sleep(std::time::Duration::from_millis(ms));
                Ok("slept".into())
            }
            "session" => {
                let s = session_info::get();
                Ok(format!("{} {} {}", s.id, s.tenant, s.profile))
            }
            "kv-set" => {
                let (k, v) = arg.split_once('=').ok_or("want K=V")?;
                kv::set(k, v.as_bytes()).map_err(|e| format!("{e:?}"))?;
                Ok("ok".into())
            }
            "kv-get" => match kv::get(arg).map_err(|e| format!("{e:?}"))? {
                Some(v) => Ok(String::from_utf8_lossy(&v).into_owned()),
                None => Err("absent".into()),
            },
            "vfs-read" => vfs::read(vfs::Volume::Workspace, arg)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .map_err(|e| format!("{e:?}")),
            "vfs-write" => {
                let (p, d) = arg.split_once('=').ok_or("want PATH=DATA")?;
                vfs::write(vfs::Volume::Workspace, p, d.as_bytes())
                    .map_err(|e| format!("{e:?}"))?;
                Ok("ok".into())
            }
            other => Err(format!("unknown verb {other}")),
        }
    }
}

export!(Plugin);

fn main() {}
