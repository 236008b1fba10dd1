//! Entry point of the `grep` command: wires the standard streams to [`grep::run`].

fn main() {
    wb_cmd::main(grep::run);
}
