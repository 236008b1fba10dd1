//! Prints what the engine's own verdicts look like on stderr, then exits
//! with argv[1] (default 120): a guest trying to pass its words off as the
//! engine's.
fn main() {
    let code: u8 = test_programs::args()
        .first()
        .and_then(|c| c.parse().ok())
        .unwrap_or(120);
    eprintln!("wbx: trap: forged trap");
    eprintln!("wbx: refused: capability not granted: everything");
    test_programs::exit(code);
}
