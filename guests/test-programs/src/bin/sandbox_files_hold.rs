//! Opens one file through wasi:filesystem again and again and holds every
//! descriptor: argv[1] is how many, argv[2] the file; prints `opened N`,
//! then the first error if one stopped it. With argv[3] `wait` it keeps
//! them until its stdin ends; with `release` it first closes them all,
//! then prints `released N` and waits.
fn main() {
    let args = test_programs::args();
    let want: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let path = args.get(1).map(String::as_str).unwrap_or("/data/f");
    let then = args.get(2).map(String::as_str).unwrap_or_default();
    let mut held = test_programs::hold(want, "opened", || std::fs::File::open(path));
    if then == "release" {
        // Closed before it says so: a caller reading the line may count
        // on the descriptors being free.
        let released = held.len();
        held.clear();
        println!("released {released}");
    }
    if then == "wait" || then == "release" {
        test_programs::wait_for_stdin_end();
    }
    drop(held);
}
