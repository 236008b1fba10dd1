//! Component kernels: a component exporting
//! `process: func(input: list<u8>) -> list<u8>`, run as one persistent
//! instance under `compute` with no cap at all (base WASI only), so a
//! kernel reaches nothing but its own memory.

use super::{KERNEL_MAX_OUTPUT_BYTES, KernelError, KernelOptions};
use crate::artifact::Artifact;
use crate::engine::Engine;
use crate::engine::run::RunError;
use crate::instance::{InstanceError, StartOptions, Supervisor};
use crate::policy::{CapSet, Profile};

/// The export every component kernel has.
const PROCESS: &str = "process";
/// The id of the kernel's instance within its own supervisor.
const INSTANCE: &str = "kernel";
/// The tenant kernels run as: a kernel holds no cap, so it reaches no
/// tenant's data whatever this is.
const KERNEL_TENANT: &str = "kernel";

/// A component kernel: instantiated once, called many times, re-instantiated
/// only after a faulted call.
pub struct ComponentKernel {
    supervisor: Supervisor,
    opts: KernelOptions,
    calls: u64,
}

impl ComponentKernel {
    /// Docks `artifact` under `compute` with no caps and starts it.
    pub async fn load(
        engine: &Engine,
        artifact: &Artifact,
        opts: KernelOptions,
    ) -> Result<ComponentKernel, KernelError> {
        check_component(artifact)?;
        let supervisor = Supervisor::for_tenant(engine.clone(), KERNEL_TENANT)
            .map_err(|e| KernelError::Refused(e.to_string()))?;
        let start = StartOptions {
            profile: Profile::Compute.name().to_string(),
            caps: Some(CapSet::EMPTY),
            timeout: Some(opts.timeout),
            fuel: Some(opts.fuel),
            memory: Some(opts.memory),
            ..StartOptions::default()
        };
        supervisor
            .start(INSTANCE, artifact, start)
            .await
            .map_err(|e| KernelError::Refused(e.to_string()))?;
        Ok(ComponentKernel {
            supervisor,
            opts,
            calls: 0,
        })
    }

    /// Calls made so far, faulted or not.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    /// Calls `process(input)`.
    pub async fn call(&mut self, input: &[u8]) -> Result<Vec<u8>, KernelError> {
        super::check_input(input)?;
        self.calls += 1;
        let call = self.calls;
        let out = self
            .supervisor
            .call_bytes(INSTANCE, PROCESS, input)
            .await
            .map_err(|e| self.fault(call, e))?;
        if out.len() > KERNEL_MAX_OUTPUT_BYTES {
            return Err(KernelError::BadOutput {
                call,
                why: format!(
                    "answered {} bytes, over {KERNEL_MAX_OUTPUT_BYTES}",
                    out.len()
                ),
            });
        }
        Ok(out)
    }

    fn fault(&self, call: u64, e: InstanceError) -> KernelError {
        match e {
            InstanceError::Run(RunError::Timeout { budget }) => {
                KernelError::Timeout { call, budget }
            }
            InstanceError::Run(RunError::Fuel { .. }) => KernelError::Fuel {
                call,
                fuel: self.opts.fuel,
            },
            InstanceError::Run(RunError::Memory { limit, requested }) => KernelError::Memory {
                call,
                needed: requested,
                limit,
            },
            InstanceError::Run(run) => KernelError::Trap {
                call,
                why: run.to_string(),
            },
            InstanceError::BadCall { message, .. } => KernelError::NotAKernel(message),
            other => KernelError::Refused(other.to_string()),
        }
    }
}

/// Checks that a component exports `process`.
pub(super) fn check_component(artifact: &Artifact) -> Result<(), KernelError> {
    let surface = crate::dock::imports::surface(artifact.bytes())
        .map_err(KernelError::NotAKernel)?
        .ok_or_else(|| KernelError::NotAKernel("a core module, not a component".into()))?;
    if surface.exports.iter().any(|e| e == PROCESS) {
        Ok(())
    } else {
        Err(KernelError::NotAKernel(format!(
            "a component kernel exports `process: func(input: list<u8>) -> list<u8>`; this one exports {}",
            if surface.exports.is_empty() {
                "nothing".to_string()
            } else {
                surface.exports.join(", ")
            }
        )))
    }
}
