//! The exec broker: serves the guest-facing `workbooks:engine/exec`
//! interface over the host's `workbooks:host/launch` primitive. Each
//! `process` the guest holds wraps one host `job`; dropping the process
//! drops the job, which stops the command.
//!
//! It owns the shape (the argv and stdin limits, in
//! `guests/launch_shape.rs`, shared with the commands broker). The host
//! owns what must be trusted: the deny ladder, the live-process limit per
//! tenant, the budgets, and the check that the caller holds `exec`, so
//! a swapped broker cannot keep more commands in flight than its guest may.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/exec-broker",
    generate_all,
});

use exports::workbooks::engine::exec::{Guest, GuestProcess, Process};
use workbooks::engine::command_types::{CommandOutput, Error};
use workbooks::host::launch::{self, Job};

include!("../../launch_shape.rs");

struct ExecBroker;

/// A guest's process: the host job it stands for.
struct Running {
    job: Job,
}

impl GuestProcess for Running {
    fn wait(&self) -> Result<CommandOutput, Error> {
        self.job.wait()
    }

    fn kill(&self) -> bool {
        self.job.kill()
    }
}

impl Guest for ExecBroker {
    type Process = Running;

    fn spawn(name: String, argv: Vec<String>, stdin: Vec<u8>) -> Result<Process, Error> {
        shaped(&name, &argv, &stdin)?;
        let job = launch::start(&name, &argv, &stdin)?;
        Ok(Process::new(Running { job }))
    }
}

export!(ExecBroker);
