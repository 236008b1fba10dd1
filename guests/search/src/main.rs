//! Entry point of the `search` command: wires the standard streams to
//! [`search::run`].

fn main() {
    wb_cmd::main(search::run);
}
