//! Kernels: bytes → bytes functions, instantiated once and called many
//! times, the hot-loop shape of `#+EXEC: kernel` toolkits and of the
//! fabric.
//!
//! Two shapes. A **core kernel** is a core module with the reference ABI:
//! it exports `memory` and an entry (`process` by default) typed
//! `(i32) -> i32`; per call the host writes the input at
//! [`KERNEL_INPUT_OFFSET`], calls `process(in_len)` and reads `out_len`
//! bytes back from [`KERNEL_OUTPUT_OFFSET`]. A **component kernel** exports
//! `process: func(input: list<u8>) -> list<u8>` (world
//! `workbooks:engine/kernel`) and runs as a persistent instance under
//! `compute`.
//!
//! Invariant: the limits stay on across calls. A kernel holds its memory
//! cap for its whole life; fuel is refilled and the deadline re-armed for
//! every call; a call that traps, runs out of fuel or time, or answers
//! outside its memory retires the instance, so the next call starts from a
//! fresh one and no state of the faulted call survives. A core kernel
//! imports nothing at all: it is a function, not a guest with reach.
//! Kernels are registered by content like commands
//! ([`crate::commands::Registry::kernels`]) and verified before each load.

mod component;
mod core;

pub use self::component::ComponentKernel;
pub use self::core::CoreKernel;

use crate::artifact::{Artifact, ArtifactKind};
use crate::engine::Engine;
use std::time::Duration;

/// Where a core kernel's input is written.
pub const KERNEL_INPUT_OFFSET: usize = 1024;
/// Where a core kernel's output is read from.
pub const KERNEL_OUTPUT_OFFSET: usize = 65_536;
/// A core kernel's entry when none is named.
pub const KERNEL_ENTRY: &str = "process";
/// Wall-clock budget of one kernel call: a kernel that loops is stopped
/// here, not left holding a worker.
pub const KERNEL_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Fuel of one kernel call (refilled before each).
pub const KERNEL_CALL_FUEL: u64 = crate::limits::COMMAND_FUEL;
/// Largest input one call takes: stops a caller from making the host grow
/// a kernel's memory without bound.
pub const KERNEL_MAX_INPUT_BYTES: usize = 64 << 20;
/// Largest output one call may return: stops a kernel from making the host
/// copy out its whole memory.
pub const KERNEL_MAX_OUTPUT_BYTES: usize = 64 << 20;
/// A kernel's memory cap when the caller sets none (the `compute`
/// profile's).
pub const KERNEL_MEMORY: usize = 64 << 20;

/// How a kernel runs.
#[derive(Debug, Clone)]
pub struct KernelOptions {
    /// The core entry's name ([`KERNEL_ENTRY`] by default).
    pub entry: String,
    /// Budget of each call.
    pub timeout: Duration,
    /// Fuel of each call.
    pub fuel: u64,
    /// Memory cap for the kernel's whole life.
    pub memory: usize,
}

/// The kernels registered in an engine's home: each registered by
/// content once it has a kernel's shape, and verified before each load.
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use workbooks::{Engine, kernel::{KERNEL_ENTRY, Kernels}};
/// let engine = Engine::builder().build()?;
/// let kernels = Kernels::of(&engine);
/// kernels.register("double", std::fs::read("double.wasm")?, KERNEL_ENTRY, false)?;
/// let artifact = kernels.load("double")?;
/// # let _ = artifact;
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Kernels<'e>(&'e Engine);

impl<'e> Kernels<'e> {
    /// The kernels of `engine`'s home.
    pub fn of(engine: &'e Engine) -> Self {
        Self(engine)
    }

    /// Registers `bytes` as kernel `name` once they have a kernel's shape
    /// (with `entry` for a core kernel); over another kernel of that name
    /// only when `replace`.
    pub fn register(
        &self,
        name: &str,
        bytes: Vec<u8>,
        entry: &str,
        replace: bool,
    ) -> Result<crate::commands::Entry, KernelError> {
        let artifact =
            Artifact::from_bytes(bytes).map_err(|e| KernelError::NotAKernel(e.to_string()))?;
        check_shape(&artifact, entry)?;
        let (mode, tier) = (
            crate::commands::ArgMode::Argv,
            crate::commands::Tier::Instance,
        );
        let kernels = self.0.kernels();
        let bytes = artifact.bytes().to_vec();
        match replace {
            true => kernels.replace(name, bytes, mode, tier).map(|(e, _)| e),
            false => kernels.register(name, bytes, mode, tier),
        }
        .map_err(|e| KernelError::Refused(e.to_string()))
    }

    /// The registered kernel `name`, verified against its sha256.
    pub fn load(&self, name: &str) -> Result<Artifact, KernelError> {
        let refused = |e: crate::commands::RegistryError| KernelError::Refused(e.to_string());
        let entry = self
            .0
            .kernels()
            .get(name)
            .map_err(refused)?
            .ok_or_else(|| KernelError::Refused(format!("unknown_kernel: `{name}`")))?;
        self.0.kernels().load(&entry).map_err(refused)
    }
}

impl Default for KernelOptions {
    fn default() -> Self {
        Self {
            entry: KERNEL_ENTRY.to_string(),
            timeout: KERNEL_CALL_TIMEOUT,
            fuel: KERNEL_CALL_FUEL,
            memory: KERNEL_MEMORY,
        }
    }
}

/// Why a kernel could not be loaded or a call failed. A call error names
/// the call (counted from 1 over the kernel's life).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    /// The bytes are not a kernel of either shape.
    #[error("not_a_kernel: {0}")]
    NotAKernel(String),
    /// The kernel could not be compiled or instantiated.
    #[error("kernel_refused: {0}")]
    Refused(String),
    /// The input is past [`KERNEL_MAX_INPUT_BYTES`].
    #[error("input_too_large: {len} bytes, over {max}")]
    InputTooLarge {
        /// Its length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// The kernel answered a length past its memory or the output cap.
    #[error("bad_output: call {call}: {why}")]
    BadOutput {
        /// The call.
        call: u64,
        /// What was wrong.
        why: String,
    },
    /// The call trapped; the instance was retired.
    #[error("trap: call {call}: {why}")]
    Trap {
        /// The call.
        call: u64,
        /// The trap.
        why: String,
    },
    /// The call ran out of fuel; the instance was retired.
    #[error("fuel_exhausted: call {call}: over {fuel} fuel")]
    Fuel {
        /// The call.
        call: u64,
        /// The per-call fuel.
        fuel: u64,
    },
    /// The call ran past its budget; the instance was retired.
    #[error("timeout: call {call}: over its {} ms budget", budget.as_millis())]
    Timeout {
        /// The call.
        call: u64,
        /// The budget.
        budget: Duration,
    },
    /// The input did not fit under the memory cap.
    #[error("memory_limit: call {call}: needs {needed} bytes, cap {limit}")]
    Memory {
        /// The call.
        call: u64,
        /// Bytes the call needed.
        needed: usize,
        /// The cap.
        limit: usize,
    },
}

impl KernelError {
    /// The snake_case name of the failure.
    pub fn reason(&self) -> &'static str {
        match self {
            KernelError::NotAKernel(_) => "not_a_kernel",
            KernelError::Refused(_) => "kernel_refused",
            KernelError::InputTooLarge { .. } => "input_too_large",
            KernelError::BadOutput { .. } => "bad_output",
            KernelError::Trap { .. } => "trap",
            KernelError::Fuel { .. } => "fuel_exhausted",
            KernelError::Timeout { .. } => "timeout",
            KernelError::Memory { .. } => "memory_limit",
        }
    }
}

/// Refuses an input past [`KERNEL_MAX_INPUT_BYTES`] before any call.
fn check_input(input: &[u8]) -> Result<(), KernelError> {
    if input.len() > KERNEL_MAX_INPUT_BYTES {
        return Err(KernelError::InputTooLarge {
            len: input.len(),
            max: KERNEL_MAX_INPUT_BYTES,
        });
    }
    Ok(())
}

/// A kernel of either shape.
pub enum Kernel {
    /// A core module with the reference ABI.
    Core(CoreKernel),
    /// A component exporting `process`.
    Component(ComponentKernel),
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kernel::Core(_) => f.write_str("Kernel::Core"),
            Kernel::Component(_) => f.write_str("Kernel::Component"),
        }
    }
}

impl Kernel {
    /// Loads `artifact` as a kernel of its shape, checked against the
    /// shape's ABI, ready for its first call.
    pub async fn load(
        engine: &Engine,
        artifact: &Artifact,
        opts: KernelOptions,
    ) -> Result<Kernel, KernelError> {
        match artifact.kind() {
            ArtifactKind::Module => Ok(Kernel::Core(CoreKernel::load(engine, artifact, opts)?)),
            ArtifactKind::Component => Ok(Kernel::Component(
                ComponentKernel::load(engine, artifact, opts).await?,
            )),
        }
    }

    /// Calls the kernel once. A core kernel runs on this thread (bounded by
    /// its deadline); run it where blocking is allowed.
    pub async fn call(&mut self, input: &[u8]) -> Result<Vec<u8>, KernelError> {
        match self {
            Kernel::Core(k) => k.call(input),
            Kernel::Component(k) => k.call(input).await,
        }
    }

    /// Calls made so far, faulted or not.
    pub fn calls(&self) -> u64 {
        match self {
            Kernel::Core(k) => k.calls(),
            Kernel::Component(k) => k.calls(),
        }
    }
}

/// Checks that `artifact` has a kernel's shape without running it: a core
/// module importing nothing and exporting `memory` and `entry` as
/// `(i32) -> i32`, or a component exporting `process`.
pub(crate) fn check_shape(artifact: &Artifact, entry: &str) -> Result<(), KernelError> {
    match artifact.kind() {
        ArtifactKind::Module => self::core::check_module(artifact.bytes(), entry),
        ArtifactKind::Component => self::component::check_component(artifact),
    }
}

#[cfg(test)]
mod tests;
