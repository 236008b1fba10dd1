//! Entry point of the `wat` command: wires the standard streams to
//! [`wat_lane::run`].

fn main() {
    wb_cmd::main(wat_lane::run);
}
