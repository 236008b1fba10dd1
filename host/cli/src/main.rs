//! `wbx`: the command-line face of the workbooks engine.
//!
//! Every subcommand is a thin layer over the `workbooks` library. Failures
//! print one line on stderr (`wbx: <where>: <message>`), or under `--json`
//! one JSON object on stdout, and exit with a code from [`exit::TABLE`],
//! one table for every verb, generated into docs/environment.md. Stdout is
//! written through [`out`]: a closed pipe ends any verb quietly (141).

// First, so its `outln!` is in scope in every module after it.
#[macro_use]
mod out;

mod agent;
mod audit;
mod bundle;
mod cache;
mod call;
mod catalog;
mod command;
mod compose;
mod conformance;
mod daemon;
mod env;
#[cfg(feature = "examples")]
mod examples;
mod exec;
mod exit;
mod fabric;
mod grant;
mod inspect;
mod kernel;
#[cfg(test)]
mod layers;
mod ledger;
mod log;
#[cfg(feature = "mcp")]
mod mcp;
mod net;
mod oci;
// The page is of the full CLI: the runner (`wbr`) builds without these.
mod options;
mod precompile;
mod profiles;
mod provenance;
#[cfg(all(
    test,
    feature = "api",
    feature = "mcp",
    feature = "node",
    feature = "examples"
))]
mod reference;
mod run;
mod secret;
mod serve;
#[cfg(feature = "api")]
mod serve_api;
mod toolkit;
mod vfs;
mod warm;
#[cfg(feature = "node")]
mod worker;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// A plugin host for WebAssembly components, with capability profiles.
#[derive(Debug, Parser)]
#[command(
    name = BIN,
    version = workbooks::compiler::VERSION,
    long_version = workbooks::compiler::BUILD,
    about,
    long_about = None,
    after_long_help = exit::help()
)]
struct Cli {
    #[command(flatten)]
    globals: workbooks_wire::Globals,

    /// Serve a cap with this broker component instead of the shipped one
    /// (CAP=FILE.wasm; repeatable). It is checked like any broker.
    #[arg(long = "broker", global = true, value_name = "CAP=FILE")]
    brokers: Vec<String>,

    /// Serve a WASI family the grant lacks with its deny broker, which
    /// refuses every call (`wasi:sockets`; repeatable): for toolchains that
    /// import interfaces a program never uses.
    #[arg(long = "stub", global = true, value_name = "FAMILY")]
    stubs: Vec<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the capability profiles: memory, timeout, caps.
    Profiles(profiles::Args),
    /// Show a component's or core module's imports, the caps they need, and its receipt.
    Inspect(inspect::Args),
    /// Run a command component (or a wasip1 core module) in the sandbox;
    /// everything after FILE is its arguments.
    Exec(exec::Args),
    /// Run a pipeline of commands inside the sandbox (no shell process).
    Run(run::Args),
    /// Manage the command registry.
    #[command(subcommand)]
    Command(command::Command),
    /// Compile a component or core module into the home's compile cache.
    Precompile(precompile::Args),
    /// Keep one warm engine for the home and run the `run` lines of its
    /// clients (same build, same user) until SIGINT or SIGTERM.
    Daemon(daemon::Args),
    /// Run third-party test suites (jq, toybox, busybox) through the
    /// sandboxed built-ins and count pass / fail / skipped.
    Conformance(conformance::Args),
    /// Show denials by cap and reason, the latest ones, and revocations.
    Audit(audit::AuditArgs),
    /// Revoke a tenant: every call it makes to a cap is refused, in flight too.
    Revoke(audit::TenantArgs),
    /// Lift a revocation.
    Unrevoke(audit::TenantArgs),
    /// Network checks.
    #[command(subcommand)]
    Net(net::NetCommand),
    /// Fetch a URL through the broker (the SSRF floor, pinning, caps).
    Fetch(net::FetchArgs),
    /// Run the agent loop (the model at WB_LLM_BASE_URL, key WB_LLM_API_KEY).
    #[command(subcommand)]
    Agent(agent::AgentCommand),
    /// Check an agent run's signed ledger, or prove one of its lines.
    #[command(subcommand)]
    Ledger(ledger::LedgerCommand),
    /// Add, narrow, widen, revoke and show grants: scopes and expiry a
    /// session runs under (`exec --grant`, `run --grant`), changed while it
    /// runs.
    #[command(subcommand)]
    Grant(grant::GrantCommand),
    /// Manage the host's signing secrets.
    #[command(subcommand)]
    Secret(secret::SecretCommand),
    /// Serve the HTTP API of supervised agent runs (loopback by default)
    /// until SIGINT or SIGTERM.
    #[cfg(feature = "api")]
    ServeApi(serve_api::Args),
    /// Serve a component exporting wasi:http/incoming-handler until SIGINT
    /// or SIGTERM.
    Serve(serve::Args),
    /// List, show, search, verify and sign toolkits.
    Toolkit(toolkit::ToolkitArgs),
    /// Print a tenant's did:key (and its did:web document).
    Identity(provenance::IdentityArgs),
    /// Sign an HTML page with the tenant's did:key, or check one.
    #[command(subcommand)]
    Artifact(provenance::ArtifactCommand),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
    /// Compile every shipped component ahead of time, into the cache every
    /// later command of this home reads.
    Warm(warm::Args),
    /// Free the compile cache: what this build can never use (gc), or
    /// all of it (clean).
    #[command(subcommand)]
    Cache(cache::CacheCommand),
    /// Print the paths this home uses (home, cache, state, socket) and
    /// every WB_* variable in effect.
    Env(env::Args),
    /// Write the components the tour and the book run (hello.wasm,
    /// counter.wasm, math-cli.wasm) into a folder.
    #[cfg(feature = "examples")]
    Examples(examples::Args),
    /// Serve the engine's tools over the Model Context Protocol (stdio
    /// until its input ends, or streamable HTTP with --listen until SIGINT
    /// or SIGTERM).
    #[cfg(feature = "mcp")]
    Mcp(mcp::Args),
    /// The catalog of programs known by name and sha256 pin.
    #[command(subcommand)]
    Catalog(catalog::CatalogCommand),
    /// Call `run` of a `plugin`-world component once and print the answer.
    Call(call::Args),
    /// Compose components with a WAC file (built toolkits, --dep files).
    Compose(compose::Args),
    /// Publish a component to an OCI registry (oci://HOST/REPO:TAG),
    /// signed by the tenant's did:key.
    Push(oci::PushArgs),
    /// Fetch a component from an OCI registry into the store, checking
    /// every digest and, when signers are required, the signature.
    Pull(oci::PullArgs),
    /// Pack an instance's volumes into a signed `.wbundle`, or restore one.
    #[command(subcommand)]
    Bundle(bundle::BundleCommand),
    /// Register, list and call kernels (bytes in, bytes out, hot loop).
    #[command(subcommand)]
    Kernel(kernel::KernelCommand),
    /// Fan a command or kernel over many inputs at a width and tier.
    #[command(subcommand)]
    Fabric(fabric::FabricCommand),
    /// Run fabric tasks from NATS JetStream (the node tier) until stopped.
    #[cfg(feature = "node")]
    Worker(worker::Args),
    /// Settle vfs volumes written before volumes were scoped by tenant.
    #[command(subcommand)]
    Vfs(vfs::VfsCommand),
}

fn main() -> ExitCode {
    // Guests' sockets and files count against the hard limit, not a
    // service's usual soft 1 024.
    workbooks::cadence::raise_descriptor_limit();
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    // The child a tier starts (os_process, container, a plugin called at
    // os_process): its whole request comes on stdin.
    if workbooks::child::started_as_child(&args) {
        return ExitCode::from(workbooks::child::run());
    }
    // A plain `run` line skips building the parser of every verb, and one
    // a daemon serves needs no logging and no engine either.
    let early = run::early(&args);
    if let Some((run, globals)) = &early {
        out::set_json(globals.json);
        let home = home_of(globals);
        if let Some(code) = run::client::run_line(run, &home) {
            return ExitCode::from(code);
        }
    }
    // Wasmtime errors capture a backtrace whenever RUST_BACKTRACE is set,
    // and every dropped store makes one; keep panic backtraces but turn the
    // library ones off unless asked for.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        // SAFETY: no other thread exists yet.
        #[expect(unsafe_code, reason = "setting an env var before any thread starts")]
        unsafe {
            std::env::set_var("RUST_LIB_BACKTRACE", "0");
        }
    }
    // Likewise a plain `exec` line, as the os_process tier starts its
    // children.
    let early = match early {
        Some((run, globals)) => Some((Command::Run(run), globals)),
        None => exec::early(&args).map(|(exec, globals)| (Command::Exec(exec), globals)),
    };
    let cli = match early {
        Some((command, globals)) => Cli {
            globals,
            brokers: Vec::new(),
            stubs: Vec::new(),
            command,
        },
        None => match Cli::try_parse() {
            Ok(cli) => cli,
            Err(e) => return ExitCode::from(refused_line(&e, &args)),
        },
    };
    out::set_json(cli.globals.json);
    log::init();
    let home = home_of(&cli.globals);
    let code = out::guarded(|| dispatch(cli, home));
    // Denials coalesced in memory reach the audit file before the exit.
    options::flush_audit();
    ExitCode::from(code)
}

/// The home the flags name, else the default one; when that is a home
/// in this folder (from before homes were per user), says so.
fn home_of(globals: &workbooks_wire::Globals) -> std::path::PathBuf {
    if let Some(home) = &globals.home {
        return home.clone();
    }
    static NOTICE: std::sync::Once = std::sync::Once::new();
    NOTICE.call_once(|| {
        if let Some(notice) = workbooks_wire::home::folder_home_in_use() {
            eprintln!("{BIN}: {notice}");
        }
    });
    workbooks::default_home()
}

/// Prints clap's answer to a line it could not read (or help and the
/// version, which exit 0) and returns the exit code: a usage error is
/// JSON under `--json`, like every failure.
fn refused_line(e: &clap::Error, args: &[std::ffi::OsString]) -> u8 {
    if !e.use_stderr() {
        // Help and version: a closed stdout has nothing left to tell.
        let _ = e.print();
        return 0;
    }
    // The line did not parse, so `--json` is looked for by hand, before
    // any `--` that ends the flags.
    let json = args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--json");
    if json {
        out::set_json(true);
        let text = e.render().to_string();
        let first = text.lines().next().unwrap_or_default();
        out::report(
            &format!("usage: {}", first.trim_start_matches("error: ")),
            exit::USAGE,
        );
    } else {
        let _ = e.print();
    }
    exit::USAGE
}

/// Runs the verb.
fn dispatch(cli: Cli, home: std::path::PathBuf) -> u8 {
    if let Err(code) = options::set_brokers(&cli.brokers) {
        return code;
    }
    if let Err(code) = options::set_stubs(&cli.stubs) {
        return code;
    }
    match cli.command {
        Command::Profiles(args) => profiles::run(args),
        Command::Inspect(args) => inspect::run(args, home),
        Command::Exec(args) => exec::run(args, home),
        Command::Run(args) => run::run(args, home),
        Command::Command(cmd) => command::run(cmd, home),
        Command::Precompile(args) => precompile::run(args, home),
        Command::Daemon(args) => daemon::run(args, home),
        Command::Conformance(args) => conformance::run(args, home),
        Command::Audit(args) => audit::audit(args, home),
        Command::Revoke(args) => audit::revoke(args, home, true),
        Command::Unrevoke(args) => audit::revoke(args, home, false),
        Command::Net(cmd) => net::check(cmd, home),
        Command::Fetch(args) => net::fetch(args, home),
        Command::Secret(cmd) => secret::run(cmd, home),
        Command::Grant(cmd) => grant::run(cmd, home),
        Command::Agent(cmd) => agent::run(cmd, home),
        Command::Ledger(cmd) => ledger::run(cmd, home),
        Command::Serve(args) => serve::run(args, home),
        #[cfg(feature = "api")]
        Command::ServeApi(args) => serve_api::run(args, home),
        Command::Vfs(cmd) => vfs::run(cmd, home),
        Command::Kernel(cmd) => kernel::run(cmd, home),
        Command::Fabric(cmd) => fabric::run(cmd, home),
        #[cfg(feature = "node")]
        Command::Worker(args) => worker::run(args, home),
        Command::Bundle(cmd) => bundle::run(cmd, home),
        Command::Push(args) => oci::push(args, home),
        Command::Pull(args) => oci::pull(args, home),
        Command::Compose(args) => compose::run(args, home),
        Command::Call(args) => call::run(args, home),
        Command::Toolkit(args) => toolkit::run(args, home),
        Command::Catalog(cmd) => catalog::run(cmd, home),
        Command::Identity(args) => provenance::identity(args, home),
        Command::Artifact(cmd) => provenance::artifact(cmd, home),
        Command::Completions(args) => completions(args),
        Command::Warm(args) => warm::run(args, home),
        Command::Env(args) => env::run(args, home),
        Command::Cache(cmd) => cache::run(cmd, home),
        #[cfg(feature = "examples")]
        Command::Examples(args) => examples::run(args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => mcp::run(args, home),
    }
}

/// `completions <shell>`: the shell's completion script on stdout.
#[derive(Debug, clap::Args)]
struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    shell: clap_complete::Shell,
}

/// Prints the completion script of every command and flag for `shell`,
/// e.g. `wbx completions bash > ~/.local/share/bash-completion/completions/wbx`.
fn completions(args: CompletionsArgs) -> u8 {
    use clap::CommandFactory as _;
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), BIN, &mut script);
    out::write_bytes(&script);
    0
}

/// This binary's name (`wbx`, or `wbr` for the compiler-less runner),
/// which starts every message it prints.
pub(crate) const BIN: &str = env!("CARGO_BIN_NAME");

pub(crate) use out::fail;

/// For the tests of the early readers (`run::early`, the thin client's
/// reader; `exec::early`, clap's parser of that verb alone): reads each
/// shape both ways and, wherever `early` takes one, holds it to
/// the full parser's reading (`same` compares the two commands);
/// returns how many shapes `early` took.
#[cfg(test)]
fn taken_as_clap_takes<T>(
    shapes: &[&[&str]],
    early: impl Fn(&[std::ffi::OsString]) -> Option<(T, workbooks_wire::Globals)>,
    same: impl Fn(Command, T, &[&str]),
) -> usize {
    let mut taken = 0;
    for args in shapes {
        let os: Vec<std::ffi::OsString> = args.iter().map(Into::into).collect();
        let Some((read, globals)) = early(&os) else {
            continue;
        };
        taken += 1;
        let cli = Cli::try_parse_from(std::iter::once("wbx").chain(args.iter().copied()))
            .unwrap_or_else(|e| panic!("{args:?} is taken early but clap refuses it: {e}"));
        assert_eq!(cli.globals, globals, "{args:?}");
        assert!(cli.brokers.is_empty() && cli.stubs.is_empty(), "{args:?}");
        same(cli.command, read, args);
    }
    taken
}
