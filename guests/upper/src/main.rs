//! Entry point of the `upper` command: wires the standard streams to [`upper::run`].

fn main() {
    wb_cmd::main(upper::run);
}
