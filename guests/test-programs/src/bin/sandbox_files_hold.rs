//! Opens one file through wasi:filesystem again and again and holds every
//! descriptor: argv[1] is how many, argv[2] the file; prints `opened N`,
//! then the first error if one stopped it.
fn main() {
    let args = test_programs::args();
    let want: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let path = args.get(1).map(String::as_str).unwrap_or("/data/f");
    test_programs::hold(want, "opened", || std::fs::File::open(path));
}
