//! The commands broker: serves the guest-facing `workbooks:engine/commands`
//! interface over the host's `workbooks:host/launch` primitive.
//!
//! It owns the shape (the argv and stdin limits, in
//! `guests/launch_shape.rs`, shared with the exec broker). The host owns
//! what must be trusted: the deny ladder, the registry and its integrity
//! check, the grant and budgets each command runs under, and the check
//! that the caller holds `commands`, so a swapped broker cannot run what
//! its guest could not.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/commands-broker",
    generate_all,
});

use exports::workbooks::engine::commands::Guest;
use workbooks::engine::command_types::{CommandOutput, Error};
use workbooks::host::launch;

include!("../../launch_shape.rs");

struct CommandsBroker;

impl Guest for CommandsBroker {
    fn run_command(
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    ) -> Result<CommandOutput, Error> {
        shaped(&name, &argv, &stdin)?;
        launch::run(&name, &argv, &stdin)
    }
}

export!(CommandsBroker);
