//! Exit codes. A command's own exit code passes through unchanged; these
//! are for the engine's verdicts, chosen apart from the codes common tools
//! use (0, 1, 2) and documented in docs/running.md.

/// A `wbx run` line does not parse or uses syntax outside the subset.
pub(crate) const SYNTAX: u8 = 119;
/// No command is registered under the name (as sh's "not found").
pub(crate) const NOT_FOUND: u8 = 127;

/// The command line was wrong (unknown flag, unknown profile, bad --dir).
pub(crate) const USAGE: u8 = 64;
/// The component was refused at dock time: a capability not granted, a host
/// primitive, an unknown import, caps wider than the profile.
pub(crate) const REFUSED: u8 = 120;
/// The guest trapped.
pub(crate) const TRAP: u8 = 121;
/// The guest hit its memory cap.
pub(crate) const MEMORY: u8 = 122;
/// The guest used all its fuel.
pub(crate) const FUEL: u8 = 123;
/// The guest ran out of time.
pub(crate) const TIMEOUT: u8 = 124;
/// The engine itself failed (storage locked, output cap, internal error);
/// the thin client `wb` exits with the same code.
pub(crate) const ENGINE: u8 = workbooks_wire::ENGINE_EXIT;
/// The artifact could not be loaded (missing, not wasm, invalid, not a
/// component).
pub(crate) const LOAD: u8 = 126;

/// Whether a session was refused for a preopen it may not have.
fn refused_preopen(e: &workbooks::SessionError) -> bool {
    matches!(
        e,
        workbooks::SessionError::Preopen(
            workbooks::PreopenError::WithoutVfs(_) | workbooks::PreopenError::ReachesHome { .. }
        )
    )
}

/// The exit code for a run failure.
pub(crate) fn for_run_error(e: &workbooks::RunError) -> u8 {
    use workbooks::RunError as E;
    match e {
        E::Timeout { .. } => TIMEOUT,
        E::Memory { .. } => MEMORY,
        E::Fuel { .. } => FUEL,
        // A full task table traps the guest, as a stack overflow does.
        E::StackOverflow | E::Trap(_) | E::AsyncTasks { .. } => TRAP,
        E::NotACommand => LOAD,
        E::Session(s) if refused_preopen(s) => REFUSED,
        E::Session(_) | E::OutputLimit { .. } => ENGINE,
    }
}

/// The flag that raises a budget a guest ran out of, as a suffix for the
/// error line of `wbx run` and `wbx exec` (both take all three flags).
pub(crate) fn raise_hint(code: u8) -> &'static str {
    match code {
        MEMORY => " (raise the cap with --memory MIB)",
        FUEL => " (raise it with --fuel N)",
        TIMEOUT => " (raise it with --timeout MS)",
        _ => "",
    }
}

/// The exit code for a dock failure.
pub(crate) fn for_dock_error(e: &workbooks::DockError) -> u8 {
    use workbooks::DockError as E;
    match e {
        E::NotAComponent | E::Unreadable(_) | E::Compile(_) => LOAD,
        E::HostPrimitive { .. }
        | E::UnknownImports { .. }
        | E::NotGranted { .. }
        | E::NotServed { .. }
        | E::ComposedImport { .. } => REFUSED,
        E::Compose(_) | E::Link(_) => ENGINE,
    }
}

/// The exit code for a failed command line or command.
pub(crate) fn for_line_error(e: &workbooks::LineError) -> u8 {
    use workbooks::CommandError as C;
    use workbooks::LineError as E;
    match e {
        E::Policy(_) | E::OutsideSandbox(_) => REFUSED,
        E::Dock(d) => for_dock_error(d),
        E::Session(s) if refused_preopen(s) => REFUSED,
        E::Session(_) => ENGINE,
        E::Run(r) => for_run_error(r),
        E::Syntax(_) | E::Unsupported(_) => SYNTAX,
        E::Redirect(_) => 1,
        E::Command { error, .. } => match error {
            C::Unknown(_) => NOT_FOUND,
            C::Timeout(_) => TIMEOUT,
            C::Memory(_) => MEMORY,
            C::Fuel => FUEL,
            C::Trap(_) => TRAP,
            C::Integrity(_) => LOAD,
            C::ArgvTooLarge(_) | C::StdinTooLarge(_) | C::OutputTooLarge(_) => ENGINE,
            C::Revoked
            | C::RateLimited
            | C::Denied
            | C::MaxDepth(_)
            | C::NotGranted(_)
            | C::TooManyRunning(_)
            | C::Refused(_) => REFUSED,
        },
    }
}
