//! Exercises exec: `spawn N NAME ARGS..` spawns N processes and waits for
//! each, printing one line per process; `hold N NAME ARGS..` spawns N and
//! keeps them all alive before waiting (to meet the live-process cap);
//! `kill NAME ARGS..` spawns one, kills it, then waits.
use test_programs::workbooks::engine::exec;

fn main() {
    let args = test_programs::args();
    let (mode, rest) = args.split_first().expect("mode");
    match mode.as_str() {
        "spawn" | "hold" => {
            let n: usize = rest[0].parse().expect("count");
            let (name, argv) = rest[1..].split_first().expect("name");
            let mut live = Vec::new();
            for i in 0..n {
                match exec::spawn(name, argv, format!("{i}\n").as_bytes()) {
                    Ok(p) if mode == "hold" => live.push(p),
                    Ok(p) => match p.wait() {
                        Ok(out) => print!("{}", String::from_utf8_lossy(&out.stdout)),
                        Err(e) => println!("wait {i}: {e:?}"),
                    },
                    Err(e) => {
                        println!("spawn {i}: {e:?}");
                        break;
                    }
                }
            }
            println!("held {}", live.len());
            for p in live {
                if let Err(e) = p.wait() {
                    println!("wait: {e:?}");
                }
            }
        }
        "kill" => {
            let (name, argv) = rest.split_first().expect("name");
            let p = exec::spawn(name, argv, b"").expect("spawn");
            println!("killed while running: {}", p.kill());
            println!("after kill: {:?}", p.wait().map(|o| o.exit_code));
            println!("second wait: {:?}", p.wait().map(|o| o.exit_code));
        }
        other => panic!("unknown mode {other}"),
    }
}
