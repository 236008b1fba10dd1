//! `wbx serve-api`: the HTTP API of supervised agent runs. Loopback by
//! default; any other address needs a bearer token (`WB_API_TOKEN`).
//! Without a token, a request whose `Host` is not a loopback name with the
//! bound port is refused (see [`workbooks_agent::api`]). A request's
//! `exec: true` is honoured only with `WB_AGENT_EXEC=1`.

use crate::options::engine_with;
use crate::{exit, fail};
use std::net::SocketAddr;
use std::path::PathBuf;
use workbooks_agent::Sessions;
use workbooks_agent::api::{self, ApiOptions};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Address to listen on; other than loopback it needs WB_API_TOKEN.
    #[arg(long, default_value = "127.0.0.1:8787")]
    listen: SocketAddr,
    /// The tenant every run acts as.
    #[arg(long, default_value = "default")]
    tenant: String,
    /// Tokens one run may spend on the model.
    #[arg(long, default_value_t = workbooks_agent::limits::AGENT_TOKEN_BUDGET, value_name = "N")]
    token_budget: u64,
    /// Tokens the tenant's runs may spend together per --tenant-window.
    #[arg(long, default_value_t = workbooks_agent::limits::AGENT_API_TENANT_TOKENS, value_name = "N")]
    tenant_tokens: u64,
    /// The window of --tenant-tokens, in seconds.
    #[arg(long, default_value_t = workbooks_agent::limits::AGENT_API_TENANT_WINDOW.as_secs(), value_name = "SECS")]
    tenant_window: u64,
    /// Model turns of a run that names none, and the most one may ask for.
    #[arg(long, default_value_t = workbooks_agent::limits::AGENT_API_MAX_STEPS)]
    max_steps: u32,
    /// Install the catalog's missing programs in the background at start
    /// (serving never waits on a fetch).
    #[arg(long)]
    seed_catalog: bool,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    let token = std::env::var("WB_API_TOKEN").ok().filter(|t| !t.is_empty());
    if !args.listen.ip().is_loopback() && token.is_none() {
        return fail(
            "usage",
            format!(
                "listening on {} (not loopback) needs a bearer token: set WB_API_TOKEN",
                args.listen
            ),
            exit::USAGE,
        );
    }
    let body = || -> Result<u8, u8> {
        let engine = engine_with(home, true, None)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| fail("engine", e, exit::ENGINE))?;
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind(args.listen)
                .await
                .map_err(|e| fail("listen", format!("{}: {e}", args.listen), exit::ENGINE))?;
            let addr = listener
                .local_addr()
                .map_err(|e| fail("listen", e, exit::ENGINE))?;
            if args.seed_catalog {
                workbooks_toolkit::catalog::Catalog::new(engine.clone()).seed();
            }
            let front = engine.clone();
            let sessions = Sessions::open(crate::options::agents(engine)?);
            let router = api::router(
                sessions,
                ApiOptions {
                    tenant: args.tenant.clone(),
                    token,
                    addr,
                    max_steps: args.max_steps,
                    allow_exec: std::env::var("WB_AGENT_EXEC").is_ok_and(|v| v == "1"),
                    run_tokens: Some(args.token_budget),
                    tenant_tokens: Some((
                        args.tenant_tokens,
                        std::time::Duration::from_secs(args.tenant_window),
                    )),
                },
            );
            eprintln!(
                "{}: serving agent runs on http://{addr}/api (tenant {})",
                crate::BIN,
                args.tenant
            );
            let stop = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            api::serve(&front, &args.tenant, listener, router, stop)
                .await
                .map_err(|e| fail("serve-api", e, exit::ENGINE))?;
            Ok(0)
        })
    };
    body().unwrap_or_else(|c| c)
}
