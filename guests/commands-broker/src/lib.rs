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
use workbooks::engine::command_types::{
    CommandOutput, Error, PipelineStage, StageFailure, StageInput, StageOutput,
};
use workbooks::host::launch;

include!("../../launch_shape.rs");

/// The most stages in one pipeline (the host holds the same limit).
const MAX_PIPELINE_STAGES: usize = 32;

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

    fn run_pipeline(stages: Vec<PipelineStage>) -> Result<Vec<StageOutput>, StageFailure> {
        if stages.len() > MAX_PIPELINE_STAGES {
            return Err(StageFailure {
                index: MAX_PIPELINE_STAGES as u32,
                error: Error::Refused(format!(
                    "a pipeline has at most {MAX_PIPELINE_STAGES} stages; this one has {}",
                    stages.len()
                )),
            });
        }
        for (index, stage) in stages.iter().enumerate() {
            let stdin = match &stage.input {
                StageInput::Bytes(bytes) => &bytes[..],
                StageInput::Pipe | StageInput::Session => &[],
            };
            shaped(&stage.name, &stage.argv, stdin).map_err(|error| StageFailure {
                index: index as u32,
                error,
            })?;
        }
        launch::pipeline(&stages)
    }
}

export!(CommandsBroker);
