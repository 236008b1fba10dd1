//! `wbx worker`: the node tier's worker. It runs only tasks signed by the
//! submitters it pins (`--trust`, `--trust-file`), for the tenants and
//! profiles each may use, within its own ceilings on time, fuel and
//! memory, and signs every result with its home's key (tenant `default`,
//! or `WB_SIGNING_KEY`); submitters pin the DID it prints at start.

use crate::options::engine;
use crate::{exit, fail};
use std::path::PathBuf;
use std::time::Duration;
use workbooks::identity::Identity;
use workbooks_fabric::node::{Trust, WorkerPolicy};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The NATS server (JetStream enabled), e.g. nats://127.0.0.1:4222;
    /// credentials in the URL (nats://user:password@host:port).
    #[arg(long, value_name = "URL")]
    nats: String,
    /// Tasks run at once.
    #[arg(long, default_value_t = 4, value_name = "N")]
    concurrency: usize,
    /// A submitter whose tasks run here: DID@TENANT[,TENANT…][/PROFILE[,PROFILE…]]
    /// (repeatable; `*` for any tenant or profile; compute alone when no
    /// profile is named).
    #[arg(long = "trust", value_name = "DID@TENANTS[/PROFILES]")]
    trust: Vec<String>,
    /// A file of submitters: {"submitters": [{"did", "tenants", "profiles"}]}.
    #[arg(long, value_name = "FILE")]
    trust_file: Option<PathBuf>,
    /// The longest a task may run here, whatever it asks, in milliseconds.
    #[arg(long, default_value_t = 60_000, value_name = "MS")]
    max_timeout: u64,
    /// The most fuel a task may burn here.
    #[arg(long, default_value_t = workbooks::limits::COMMAND_FUEL, value_name = "N")]
    max_fuel: u64,
    /// The most memory a task may take here, in MiB.
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    max_memory: usize,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let mut trust = match &args.trust_file {
            Some(path) => Trust::from_file(path).map_err(|e| fail("usage", e, exit::USAGE))?,
            None => Trust::default(),
        };
        for spec in &args.trust {
            trust
                .add_spec(spec)
                .map_err(|e| fail("usage", e, exit::USAGE))?;
        }
        if trust.submitters.is_empty() {
            return Err(fail(
                "usage",
                "a worker runs only signed tasks: pin their submitters with --trust DID@TENANTS[/PROFILES] or --trust-file FILE (`wbx identity --tenant T` prints a tenant's DID)",
                exit::USAGE,
            ));
        }
        let engine = engine(home)?;
        let identity = Identity::of_tenant(
            engine.keyring(),
            "default",
            crate::toolkit::seed().as_deref(),
        )
        .map_err(|e| fail("worker", e, exit::ENGINE))?;
        let policy = WorkerPolicy {
            trust,
            identity,
            max_timeout: Duration::from_millis(args.max_timeout),
            max_fuel: args.max_fuel,
            max_memory: args.max_memory << 20,
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| fail("engine", e, exit::ENGINE))?;
        eprintln!(
            "{}: worker {} pulling from {} ({} at a time, {} submitter(s) pinned)",
            crate::BIN,
            policy.identity.did,
            workbooks_fabric::node::redacted(&args.nats),
            args.concurrency,
            policy.trust.submitters.len()
        );
        let stopped = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let stats = rt
            .block_on(workbooks_fabric::node::run_worker(
                &engine,
                &args.nats,
                args.concurrency,
                &policy,
                stopped,
            ))
            .map_err(|e| fail("worker", e, exit::ENGINE))?;
        eprintln!(
            "{}: worker done: {} recorded, {} duplicates, {} refused",
            crate::BIN,
            stats.recorded,
            stats.duplicates,
            stats.refused
        );
        Ok(0)
    };
    body().unwrap_or_else(|code| code)
}
