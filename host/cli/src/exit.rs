//! Exit codes: one table for every verb ([`TABLE`]), generated into
//! docs/environment.md and held to each verb by the CLI tests. A command's
//! own exit code passes through unchanged; the engine's verdicts are
//! chosen apart from the codes common tools use (0, 1, 2), and each has a
//! name, the `kind` of a `--json` error.

/// A verb's subject said no: a check found problems, a plugin answered
/// `err`, a ledger does not verify, a proof fails.
pub(crate) const FAILED: u8 = 1;
/// The command line was wrong (unknown flag, unknown profile, bad --dir).
pub(crate) const USAGE: u8 = 64;
/// A `wbx run` line does not parse or uses syntax outside the subset.
pub(crate) const SYNTAX: u8 = 119;
/// Refused: a capability not granted, a host primitive, an unknown
/// import, caps wider than the profile, a revoked tenant, a command not
/// on the allow-list, a signer not trusted, a destination the floor
/// refuses.
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
/// component, altered).
pub(crate) const LOAD: u8 = 126;
/// No command is registered under the name (as sh's "not found").
pub(crate) const NOT_FOUND: u8 = 127;
/// Stdout was closed by its reader (128 + SIGPIPE, as a shell reports a
/// process its pipe ended): the verb stopped quietly.
pub(crate) const CLOSED_PIPE: u8 = 141;

/// One exit code: its number, its name (the `kind` of a JSON error) and
/// what it means.
pub(crate) struct Code {
    pub(crate) code: u8,
    pub(crate) kind: &'static str,
    pub(crate) means: &'static str,
}

/// Every exit code `wbx` gives, for every verb.
pub(crate) const TABLE: &[Code] = &[
    Code {
        code: 0,
        kind: "ok",
        means: "done; `exec` and `run` pass the command's own exit code through",
    },
    Code {
        code: FAILED,
        kind: "failed",
        means: "the verb's subject said no: a check found problems, a plugin answered `err`, a ledger or proof does not verify",
    },
    Code {
        code: USAGE,
        kind: "usage",
        means: "the command line was wrong: an unknown flag, profile or cap word, a bad value, a missing file or folder argument",
    },
    Code {
        code: SYNTAX,
        kind: "syntax",
        means: "a `run` line does not parse, or uses syntax outside the shell's subset",
    },
    Code {
        code: REFUSED,
        kind: "refused",
        means: "refused by policy: a cap not granted, a host primitive imported, a revoked tenant, a command not allowed, a signer not trusted, a destination the floor refuses",
    },
    Code {
        code: TRAP,
        kind: "trap",
        means: "the guest trapped",
    },
    Code {
        code: MEMORY,
        kind: "memory_limit",
        means: "the guest hit its memory cap (raise it with --memory)",
    },
    Code {
        code: FUEL,
        kind: "fuel_exhausted",
        means: "the guest used all its fuel (raise it with --fuel)",
    },
    Code {
        code: TIMEOUT,
        kind: "timeout",
        means: "the guest ran out of time (raise it with --timeout)",
    },
    Code {
        code: ENGINE,
        kind: "engine",
        means: "the engine failed: storage locked or unwritable, an output cap, a network or registry error, an internal error",
    },
    Code {
        code: LOAD,
        kind: "load",
        means: "the component could not be loaded: missing, not wasm, invalid, altered, not a command",
    },
    Code {
        code: NOT_FOUND,
        kind: "not_found",
        means: "nothing is registered or installed under that name",
    },
    Code {
        code: CLOSED_PIPE,
        kind: "closed_pipe",
        means: "stdout was closed by its reader (`| head`): the verb stopped quietly",
    },
];

/// The table as `wbx --help` ends with it (and so the CLI reference).
pub(crate) fn help() -> String {
    let mut text = String::from(
        "Exit codes (every verb; under --json a failure is {\"error\": {\"kind\", \"message\", \"exit\"}} on stdout):\n",
    );
    for c in TABLE {
        text.push_str(&format!(
            "  {:>3}  {:<15} {}\n",
            c.code,
            c.kind,
            c.means.replace('`', "")
        ));
    }
    text
}

/// The name of `code` in [`TABLE`]; a command's own code is `exit`.
pub(crate) fn kind(code: u8) -> &'static str {
    TABLE
        .iter()
        .find(|c| c.code == code)
        .map_or("exit", |c| c.kind)
}

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
    use workbooks::LineError as E;
    match e {
        E::Policy(_) | E::OutsideSandbox(_) => REFUSED,
        E::Dock(d) => for_dock_error(d),
        E::Session(s) if refused_preopen(s) => REFUSED,
        E::Session(_) => ENGINE,
        E::Run(r) => for_run_error(r),
        E::Syntax(_) | E::Unsupported(_) => SYNTAX,
        E::Redirect(_) => FAILED,
        E::Command { error, .. } => for_command_error(error),
    }
}

/// The exit code for a failed registered command.
pub(crate) fn for_command_error(e: &workbooks::CommandError) -> u8 {
    use workbooks::CommandError as C;
    match e {
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
    }
}

/// The exit code for a failed instance operation (`wbx call`).
pub(crate) fn for_instance_error(e: &workbooks::InstanceError) -> u8 {
    use workbooks::InstanceError as E;
    match e {
        E::InvalidId(_) | E::BadCall { .. } => USAGE,
        E::NoSuchExport(_) => LOAD,
        E::NotFound(_) => NOT_FOUND,
        E::Policy(_) | E::Grant(_) => REFUSED,
        E::Dock(d) => for_dock_error(d),
        E::Session(s) if refused_preopen(s) => REFUSED,
        E::Run(r) => for_run_error(r),
        E::AlreadyRunning(_) | E::Session(_) | E::Vfs(_) | E::Storage(_) => ENGINE,
    }
}
