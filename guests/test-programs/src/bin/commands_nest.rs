//! Runs the command named in argv[1] with argv[1..] again, through
//! run-command, and reports how deep the chain went: each level prints
//! `depth N ok` or the broker's error, and the innermost error wins.
use test_programs::workbooks::engine::commands;

fn main() {
    let args = test_programs::args();
    let Some(name) = args.first() else {
        println!("usage: commands_nest NAME");
        test_programs::exit(2);
    };
    match commands::run_command(name, &args, b"") {
        Ok(out) => {
            print!("{}", String::from_utf8_lossy(&out.stdout));
            test_programs::exit(u8::try_from(out.exit_code).unwrap_or(1));
        }
        Err(e) => {
            println!("refused: {e:?}");
            test_programs::exit(3);
        }
    }
}
