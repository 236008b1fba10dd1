//! Runs vfs operations named on the command line and prints one line each:
//! `write VOL PATH DATA`, `read VOL PATH`, `ls VOL DIR`, `rm VOL PATH`,
//! `stat VOL PATH`, `writen VOL PATH BYTES`.
use test_programs::workbooks::engine::vfs::{self, Volume};

fn volume(name: &str) -> Volume {
    match name {
        "workspace" => Volume::Workspace,
        "memory" => Volume::Memory,
        "tmp" => Volume::Tmp,
        other => panic!("unknown volume {other}"),
    }
}

fn main() {
    let args = test_programs::args();
    let mut it = args.iter().map(String::as_str);
    while let Some(op) = it.next() {
        let mut arg = || it.next().expect("missing operand").to_string();
        let vol = volume(&arg());
        let path = arg();
        let line = match op {
            "write" => format!("{:?}", vfs::write(vol, &path, arg().as_bytes())),
            "writen" => {
                let n: usize = arg().parse().expect("size");
                format!("{:?}", vfs::write(vol, &path, &vec![b'x'; n]))
            }
            "read" => match vfs::read(vol, &path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(e) => format!("{e:?}"),
            },
            "ls" => match vfs::list_dir(vol, &path) {
                Ok(entries) => entries
                    .iter()
                    .map(|e| format!("{}:{:?}:{}", e.name, e.kind, e.size))
                    .collect::<Vec<_>>()
                    .join(","),
                Err(e) => format!("{e:?}"),
            },
            "rm" => format!("{:?}", vfs::remove(vol, &path)),
            "stat" => match vfs::stat(vol, &path) {
                Ok(m) => format!("{:?} {}", m.kind, m.size),
                Err(e) => format!("{e:?}"),
            },
            other => panic!("unknown op {other}"),
        };
        println!("{line}");
    }
}
