//! Runs one command through run-command: argv[1] is the name, the rest its
//! arguments, stdin passed through. Prints the child's stdout, then a line
//! `exit N` or `error E`.
use std::io::Read;
use test_programs::workbooks::engine::commands;

fn main() {
    let args = test_programs::args();
    let mut stdin = Vec::new();
    std::io::stdin().read_to_end(&mut stdin).expect("stdin");
    match commands::run_command(&args[0], &args[1..], &stdin) {
        Ok(out) => {
            print!("{}", String::from_utf8_lossy(&out.stdout));
            println!("exit {}", out.exit_code);
        }
        Err(e) => println!("error {e:?}"),
    }
}
