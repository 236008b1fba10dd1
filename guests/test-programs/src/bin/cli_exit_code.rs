//! Writes to stdout and stderr, then exits with the code in argv[1].
fn main() {
    let code: u8 = test_programs::args()
        .first()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    println!("out");
    eprintln!("err");
    test_programs::exit(code);
}
