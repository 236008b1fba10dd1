//! The parallel broker: serves the guest-facing `workbooks:engine/parallel`
//! interface over the host's `workbooks:host/launch` primitive.
//!
//! It owns the request's shape: at most 1024 inputs, a width within
//! 1..=64 (0 asks for the default), and each input within the argv and
//! stdin limits (`guests/launch_shape.rs`). The host owns what must be
//! trusted: the check that the caller holds `parallel`, the same input and
//! width caps again, and the deny ladder, envelope and budgets of every
//! run, so a swapped broker cannot fan out what its guest could not.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/parallel-broker",
    generate_all,
});

use exports::workbooks::engine::parallel::Guest;
use workbooks::engine::command_types::{Error, TaskInput, TaskResult};
use workbooks::host::launch;

include!("../../launch_shape.rs");

/// The most inputs in one call (the host holds the same limit).
const MAX_INPUTS: usize = 1024;
/// The widest fan-out (the host holds the same limit).
const MAX_WIDTH: u32 = 64;
/// The width when the guest asks for 0.
const DEFAULT_WIDTH: u32 = 16;

struct ParallelBroker;

impl Guest for ParallelBroker {
    fn run_command_many(
        name: String,
        inputs: Vec<TaskInput>,
        width: u32,
    ) -> Result<Vec<TaskResult>, Error> {
        if inputs.len() > MAX_INPUTS {
            return Err(Error::Refused(format!(
                "run-command-many takes at most {MAX_INPUTS} inputs; this call has {}",
                inputs.len()
            )));
        }
        let width = match width {
            0 => DEFAULT_WIDTH,
            w if w > MAX_WIDTH => {
                return Err(Error::Refused(format!(
                    "run-command-many runs at most {MAX_WIDTH} at once; width {w} asked"
                )));
            }
            w => w,
        };
        for input in &inputs {
            shaped(&name, &input.argv, &input.stdin)?;
        }
        launch::run_many(&name, &inputs, width)
    }
}

export!(ParallelBroker);
