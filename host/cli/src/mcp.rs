//! `wbx mcp`: the engine's tools over the Model Context Protocol (rmcp),
//! on stdio or, with `--listen ADDR`, over streamable HTTP.
//!
//! The tools are the engine's catalogue ([`workbooks::Engine::tools`]):
//! the shell, the built-in and registered commands, the registered plugin
//! components. Every call runs under the server's profile and limits, as
//! its tenant; a non-zero exit, an `err`, a refusal or a broker denial is
//! a tool result with `isError`, never a protocol failure. A call that
//! runs longer than half a second reports progress every half second when the client
//! asked for it; a cancelled call drops its guest at once.
//!
//! Under `--grant ID` (a grant with no subject, or subject `mcp`) every
//! call runs under the stored grant as it is then: its tenant, profile and
//! caps, its commands and destinations; once it expires or is revoked a
//! call is a tool error naming it, and `wbx grant narrow` in another
//! process reaches the server at its next call.
//!
//! Threat: over HTTP anyone who reaches the port can run tools. The server
//! binds loopback by default and then checks the `Host` header (no DNS
//! rebinding); bound anywhere else it refuses to start without a bearer
//! token (`--token` or `WB_MCP_TOKEN`), and every request must carry it.

use crate::options::{StageArgs, StageOptions as _};
use crate::{exit, fail};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt as _};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use workbooks::{Engine, Grant, LineOptions};

/// How often a running call reports progress to a client that asked.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// The subject of a grant only `wbx mcp` may serve under.
pub(crate) const MCP_SUBJECT: &str = "mcp";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    stage: StageArgs,
    /// Serve streamable HTTP on this address instead of stdio (loopback
    /// unless a token is set).
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// The bearer token every HTTP request must carry; required off
    /// loopback.
    #[arg(
        long,
        env = "WB_MCP_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    token: Option<String>,
    /// Serve the operator's grant verbs for `--tenant` (`grant_list`,
    /// `grant_show`, `grant_add`, `grant_narrow`, `grant_widen`,
    /// `grant_revoke`) instead of the engine's tools; over HTTP a bearer
    /// token is required even on loopback.
    #[arg(long, conflicts_with = "grant")]
    operator: bool,
}

/// The server: one engine, the options every call runs with.
#[derive(Clone)]
struct Tools {
    engine: Engine,
    toolkits: workbooks_toolkit::Toolkits,
    opts: LineOptions,
    grant: Grant,
}

impl Tools {
    /// The engine's tool catalogue.
    fn catalogue(&self) -> workbooks_toolkit::tools::Tools {
        workbooks_toolkit::tools::Tools::new(self.engine.clone())
    }
}

impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("workbooks", workbooks::compiler::VERSION))
            .with_instructions(format!(
                "Sandboxed WebAssembly commands under profile {}. `shell` runs a command line; every other tool is one command or plugin.",
                self.grant.profile.effective
            ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = self
            .catalogue()
            .list(&self.grant, &self.toolkits)
            .into_iter()
            .map(|t| {
                let schema = match t.input_schema {
                    serde_json::Value::Object(map) => map,
                    _ => serde_json::Map::new(),
                };
                Tool::new(t.name, t.description, Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(kind) = self.catalogue().kind(&request.name) else {
            return Err(ErrorData::invalid_params(
                format!("no tool `{}`", request.name),
                None,
            ));
        };
        // A grant past its expiry or revoked runs nothing more.
        if let Some(scope) = &self.opts.scope
            && let Err(refused) = scope.now()
        {
            let content = vec![ContentBlock::text(refused.to_string())];
            return Ok(CallToolResult::error(content).into());
        }
        let arguments = request.arguments.unwrap_or_default();
        let progress = request
            .meta
            .as_ref()
            .and_then(|m| m.get_progress_token())
            .or_else(|| context.meta.get_progress_token());
        let catalogue = self.catalogue();
        let call = catalogue.call(&kind, &arguments, self.opts.clone());
        tokio::pin!(call);
        let mut tick = tokio::time::interval(PROGRESS_EVERY);
        tick.tick().await;
        let mut ticks = 0u32;
        let outcome = loop {
            tokio::select! {
                outcome = &mut call => break outcome,
                // Dropping the call drops its store: the guest stops.
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error("cancelled", None));
                }
                _ = tick.tick() => {
                    ticks += 1;
                    if let Some(token) = &progress {
                        let secs = PROGRESS_EVERY.as_secs_f64() * f64::from(ticks);
                        let note = ProgressNotificationParam::new(token.clone(), f64::from(ticks))
                            .with_message(format!("{} running for {secs:.1} s", request.name));
                        let _ = context.peer.notify_progress(note).await;
                    }
                }
            }
        };
        let content = vec![ContentBlock::text(outcome.text)];
        Ok(if outcome.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        }
        .into())
    }
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    let opts = match args.stage.ungranted_options() {
        Ok(o) => o,
        Err(code) => return code,
    };
    let engine = match crate::options::engine_with(home, true, opts.stage_memory) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if args.operator {
        let tools = operator::GrantTools {
            desk: workbooks::grants::GrantDesk::new(
                engine.grants().clone(),
                engine.cadence().clone(),
                &opts.tenant,
                operator::MCP_CHANGER,
            ),
            tenant: opts.tenant.clone(),
        };
        return served(tools, &engine, &opts.tenant, args.listen, args.token, true);
    }
    let opts = match crate::options::granted(&args.stage, &engine, opts, MCP_SUBJECT) {
        Ok(o) => o,
        Err(e) => return fail("grant", e, exit::REFUSED),
    };
    let grant = match opts.caps {
        Some(caps) => Grant::narrowed(&opts.profile, caps),
        None => Ok(Grant::profile(&opts.profile)),
    };
    let grant = match grant {
        Ok(g) => g,
        Err(e) => return fail("usage", e, exit::USAGE),
    };
    let tenant = opts.tenant.clone();
    let tools = Tools {
        grant: grant.with_stubs(engine.stubs()),
        engine: engine.clone(),
        toolkits: workbooks_toolkit::Toolkits::from_env(),
        opts,
    };
    served(tools, &engine, &tenant, args.listen, args.token, false)
}

/// Serves `handler` on stdio, or over HTTP on `listen` (with the token
/// required everywhere when `token_required`); the exit code.
fn served<H: ServerHandler + Clone + Send + Sync + 'static>(
    handler: H,
    engine: &Engine,
    tenant: &str,
    listen: Option<SocketAddr>,
    token: Option<String>,
    token_required: bool,
) -> u8 {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail("mcp", e, exit::ENGINE),
    };
    let served = match listen {
        None => runtime.block_on(async {
            let running = handler
                .serve(rmcp::transport::stdio())
                .await
                .map_err(|e| e.to_string())?;
            running.waiting().await.map_err(|e| e.to_string())?;
            Ok::<(), String>(())
        }),
        Some(addr) => {
            let gate = http::Gate {
                token,
                token_required,
            };
            runtime.block_on(http::serve(handler, engine, tenant, addr, gate))
        }
    };
    match served {
        Ok(()) => 0,
        Err(e) => fail("mcp", e, exit::ENGINE),
    }
}

mod http;
mod operator;
