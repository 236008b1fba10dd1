//! The fabric's limits: a fan-out's inputs and a task's time. The width
//! a fan-out runs at is the engine's (`workbooks::limits`), shared with
//! `parallel`.

use std::time::Duration;

/// Wall-clock budget of each task when the caller names none.
pub const FABRIC_TASK_TIMEOUT: Duration = Duration::from_secs(60);

/// Most inputs in one `wbx fabric run`: bounds the results held in memory.
pub const FABRIC_MAX_INPUTS: usize = 1_000_000;
