use super::CommandsCtx;
use crate::bindings::workbooks::engine::commands::{CommandOutput, Error, Host};
use crate::commands::CommandError;
use crate::policy::Cap;

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

impl Host for CommandsCtx {
    async fn run_command(
        &mut self,
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    ) -> Result<CommandOutput, Error> {
        let Some((engine, env)) = &self.runner else {
            return Err(Error::Denied);
        };
        let out = engine
            .run_command_as(env, Cap::Commands, &name, argv, stdin.into())
            .await
            .map_err(to_wit_error)?;
        Ok(CommandOutput {
            stdout: out.stdout.into(),
            stderr: out.stderr.into(),
            exit_code: out.exit_code,
        })
    }
}
