//! Fans one command over inputs through run-command-many: argv[1] is the
//! name, argv[2] the width, the rest every input's arguments, each stdin
//! line one input's stdin; `--inputs N` sends N empty inputs instead. Prints one line
//! per result, `I exit N <stdout>` or `I error E`, or `refused E` when the
//! call itself fails.
use std::io::Read;
use test_programs::workbooks::engine::parallel::{self, TaskInput};

fn main() {
    let args = test_programs::args();
    let (name, width) = (&args[0], args[1].parse::<u32>().expect("width"));
    let inputs: Vec<TaskInput> = match args.get(2).map(String::as_str) {
        Some("--inputs") => {
            let n = args[3].parse::<usize>().expect("count");
            (0..n)
                .map(|_| TaskInput {
                    argv: Vec::new(),
                    stdin: Vec::new(),
                })
                .collect()
        }
        _ => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).expect("stdin");
            text.lines()
                .map(|line| TaskInput {
                    argv: args[2..].to_vec(),
                    stdin: line.as_bytes().to_vec(),
                })
                .collect()
        }
    };
    match parallel::run_command_many(name, &inputs, width) {
        Ok(results) => {
            for (i, r) in results.iter().enumerate() {
                match &r.outcome {
                    Ok(out) => println!(
                        "{i} exit {} {}",
                        out.exit_code,
                        String::from_utf8_lossy(&out.stdout).trim_end()
                    ),
                    Err(e) => println!("{i} error {e:?}"),
                }
            }
        }
        Err(e) => println!("refused {e:?}"),
    }
}
