use super::{ExecView, Process};
use crate::bindings::workbooks::engine::commands::{CommandOutput, Error};
use crate::bindings::workbooks::engine::exec::{Host, HostProcess};
use crate::broker::Denial;
use crate::cap::commands::to_wit_error;
use crate::commands::{CommandError, MAX_LIVE_PROCESSES_PER_PRINCIPAL};
use crate::policy::Cap;
use wasmtime::component::Resource;

impl Host for ExecView<'_> {
    fn spawn(
        &mut self,
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    ) -> wasmtime::Result<Result<Resource<Process>, Error>> {
        let Some((engine, env)) = self.ctx.runner.clone() else {
            return Ok(Err(Error::Denied));
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
        let process = Process {
            task: Some(task),
            _live: live,
        };
        Ok(Ok(self.table.push(process)?))
    }
}

impl HostProcess for ExecView<'_> {
    async fn wait(
        &mut self,
        this: Resource<Process>,
    ) -> wasmtime::Result<Result<CommandOutput, Error>> {
        let process = self.table.get_mut(&this)?;
        let Some(task) = process.task.take() else {
            return Ok(Err(Error::UnknownCommand("process already awaited".into())));
        };
        let result = match task.await {
            Ok(r) => r,
            Err(e) if e.is_cancelled() => Err(CommandError::Trap("killed".into())),
            Err(e) => Err(CommandError::Trap(format!("process task failed: {e}"))),
        };
        Ok(result.map_err(to_wit_error).map(|out| CommandOutput {
            stdout: out.stdout.into(),
            stderr: out.stderr.into(),
            exit_code: out.exit_code,
        }))
    }

    fn kill(&mut self, this: Resource<Process>) -> wasmtime::Result<bool> {
        let process = self.table.get_mut(&this)?;
        Ok(match &process.task {
            Some(task) if !task.is_finished() => {
                task.abort();
                true
            }
            _ => false,
        })
    }

    fn drop(&mut self, this: Resource<Process>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}
