//! Queue operations named on the command line, one line each:
//! `push Q MSG`, `pushn Q BYTES`, `pop Q`, `wait Q MS`, `len Q`,
//! `fill Q N` (pushes N, stops at the first error).
use test_programs::workbooks::engine::queue;

fn main() {
    let args = test_programs::args();
    let mut it = args.iter().map(String::as_str);
    while let Some(op) = it.next() {
        let q = it.next().expect("queue");
        let line = match op {
            "push" => format!("{:?}", queue::push(q, it.next().expect("msg").as_bytes())),
            "pushn" => {
                let n: usize = it.next().expect("size").parse().expect("size");
                format!("{:?}", queue::push(q, &vec![b'm'; n]))
            }
            "pop" => match queue::pop(q) {
                Ok(Some(m)) => String::from_utf8_lossy(&m).into_owned(),
                other => format!("{other:?}"),
            },
            "wait" => {
                let ms: u32 = it.next().expect("ms").parse().expect("ms");
                match queue::pop_wait(q, ms) {
                    Ok(Some(m)) => String::from_utf8_lossy(&m).into_owned(),
                    other => format!("{other:?}"),
                }
            }
            "len" => format!("{:?}", queue::len(q)),
            "fill" => {
                let n: usize = it.next().expect("count").parse().expect("count");
                let mut line = format!("filled {n}");
                for i in 0..n {
                    if let Err(e) = queue::push(q, format!("{i}").as_bytes()) {
                        line = format!("stopped at {i}: {e:?}");
                        break;
                    }
                }
                line
            }
            other => panic!("unknown op {other}"),
        };
        println!("{line}");
    }
}
