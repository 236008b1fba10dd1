//! Entry point of the `jq` command: wires the standard streams to [`jq::run`].

fn main() {
    wb_cmd::main(jq::run);
}
