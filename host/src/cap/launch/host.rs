use super::{Job, LaunchView};
use crate::bindings::workbooks::engine::command_types::{CommandOutput, Error};
use crate::bindings::workbooks::host::launch::{Host, HostJob};
use crate::cadence::Denial;
use crate::commands::{self, CommandError, MAX_LIVE_PROCESSES_PER_PRINCIPAL};
use crate::policy::Cap;
use wasmtime::component::Resource;

/// The guest-visible form of a command error.
pub(crate) fn to_wit_error(e: CommandError) -> Error {
    match e {
        CommandError::Revoked => Error::Revoked,
        CommandError::RateLimited => Error::RateLimited,
        CommandError::Denied => Error::Denied,
        CommandError::MaxDepth(n) => Error::MaxDepth(n),
        CommandError::NotGranted(n) => Error::CommandNotGranted(n),
        CommandError::Unknown(n) => Error::UnknownCommand(n),
        CommandError::TooManyRunning(n) => Error::TooManyRunning(n),
        CommandError::Integrity(s) => Error::ArtifactIntegrity(s),
        CommandError::ArgvTooLarge(n) => Error::ArgvTooLarge(n),
        CommandError::StdinTooLarge(n) => Error::StdinTooLarge(n),
        CommandError::OutputTooLarge(n) => Error::OutputTooLarge(n),
        CommandError::Timeout(d) => Error::Timeout(d.as_millis() as u64),
        CommandError::Memory(n) => Error::MemoryLimit(n),
        CommandError::Fuel => Error::FuelExhausted,
        CommandError::Trap(s) => Error::Trap(s),
        CommandError::Refused(s) => Error::Refused(s),
    }
}

fn output(out: commands::CommandOutput) -> CommandOutput {
    CommandOutput {
        stdout: out.stdout.into(),
        stderr: out.stderr.into(),
        exit_code: out.exit_code,
    }
}

impl LaunchView<'_> {
    /// The runner, if the caller holds `cap`.
    fn runner(&self, cap: Cap) -> Result<(crate::Engine, commands::CommandEnv), Error> {
        match &self.ctx.runner {
            Some(runner) if self.ctx.granted.contains(cap) => Ok(runner.clone()),
            _ => Err(Error::Denied),
        }
    }
}

impl Host for LaunchView<'_> {
    async fn run(
        &mut self,
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    ) -> wasmtime::Result<Result<CommandOutput, Error>> {
        let (engine, env) = match self.runner(Cap::Commands) {
            Ok(r) => r,
            Err(e) => return Ok(Err(e)),
        };
        let out = engine
            .run_command_as(&env, Cap::Commands, &name, argv, stdin.into())
            .await;
        Ok(out.map(output).map_err(to_wit_error))
    }

    async fn start(
        &mut self,
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    ) -> wasmtime::Result<Result<Resource<Job>, Error>> {
        let (engine, env) = match self.runner(Cap::Exec) {
            Ok(r) => r,
            Err(e) => return Ok(Err(e)),
        };
        // The ladder runs now, so a refusal is immediate rather than found
        // at `wait`.
        let (resolved, slot) = match engine.admit_command(&env, Cap::Exec, &name) {
            Ok(r) => r,
            Err(e) => return Ok(Err(to_wit_error(e))),
        };
        let Some(live) = engine
            .process_slots()
            .take(&env.principal, MAX_LIVE_PROCESSES_PER_PRINCIPAL)
        else {
            engine.cadence().deny(
                &env.principal,
                "exec",
                Denial::Guard("too_many_live_processes"),
                &name,
            );
            return Ok(Err(to_wit_error(CommandError::TooManyRunning(
                MAX_LIVE_PROCESSES_PER_PRINCIPAL,
            ))));
        };
        let task = tokio::spawn(async move {
            let _running = slot;
            let start = std::time::Instant::now();
            let mut out = engine
                .run_resolved(&env, &resolved, argv, stdin.into())
                .await?;
            out.elapsed = start.elapsed();
            Ok(out)
        });
        let job = Job {
            task: Some(task),
            _live: live,
        };
        Ok(Ok(self.table.push(job)?))
    }
}

impl HostJob for LaunchView<'_> {
    async fn wait(
        &mut self,
        this: Resource<Job>,
    ) -> wasmtime::Result<Result<CommandOutput, Error>> {
        let job = self.table.get_mut(&this)?;
        let Some(task) = job.task.take() else {
            return Ok(Err(Error::UnknownCommand("process already awaited".into())));
        };
        let result = match task.await {
            Ok(r) => r,
            Err(e) if e.is_cancelled() => Err(CommandError::Trap("killed".into())),
            Err(e) => Err(CommandError::Trap(format!("process task failed: {e}"))),
        };
        Ok(result.map(output).map_err(to_wit_error))
    }

    fn kill(&mut self, this: Resource<Job>) -> wasmtime::Result<bool> {
        let job = self.table.get_mut(&this)?;
        Ok(match &job.task {
            Some(task) if !task.is_finished() => {
                task.abort();
                true
            }
            _ => false,
        })
    }

    fn drop(&mut self, this: Resource<Job>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{CommandEnv, CommandPolicy};
    use crate::policy::{CapSet, Grant};
    use wasmtime::component::ResourceTable;

    fn ctx(engine: &crate::Engine, caps: &[Cap]) -> super::super::LaunchCtx {
        let caps = CapSet::of(caps);
        let env = CommandEnv {
            principal: "t".into(),
            session_id: "s".into(),
            caller_caps: caps,
            grant: Grant::profile("minimal"),
            dirs: Vec::new(),
            policy: CommandPolicy::default(),
        };
        super::super::LaunchCtx::new(engine.clone(), env, caps)
    }

    #[tokio::test]
    async fn each_operation_needs_its_own_cap_whatever_the_broker_asks() {
        let (_home, engine) = crate::engine::for_tests();
        let mut table = ResourceTable::new();
        let mut commands_only = ctx(&engine, &[Cap::Commands]);
        let mut view = LaunchView {
            ctx: &mut commands_only,
            table: &mut table,
        };
        let started = view
            .start("echo".into(), Vec::new(), Vec::new())
            .await
            .unwrap();
        assert!(
            matches!(started, Err(Error::Denied)),
            "a commands broker spawned"
        );
        let ran = view
            .run("no-such".into(), Vec::new(), Vec::new())
            .await
            .unwrap();
        assert!(matches!(ran, Err(Error::UnknownCommand(_))), "{ran:?}");
        let mut exec_only = ctx(&engine, &[Cap::Exec]);
        let mut view = LaunchView {
            ctx: &mut exec_only,
            table: &mut table,
        };
        let ran = view
            .run("echo".into(), Vec::new(), Vec::new())
            .await
            .unwrap();
        assert!(
            matches!(ran, Err(Error::Denied)),
            "an exec broker ran to completion"
        );
        let mut nothing = super::super::LaunchCtx::default();
        let mut view = LaunchView {
            ctx: &mut nothing,
            table: &mut table,
        };
        let ran = view
            .run("echo".into(), Vec::new(), Vec::new())
            .await
            .unwrap();
        assert!(matches!(ran, Err(Error::Denied)));
    }
}
