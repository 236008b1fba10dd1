//! `wbx serve`: serve a component exporting wasi:http/incoming-handler, or
//! with `--tcp` one exporting workbooks:engine/tcp-handler over raw TCP.

use crate::options::engine_with;
use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::{Artifact, CapSet, ServeOptions};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Capability profile each request's instance runs under.
    #[arg(long, default_value = "compute", value_name = "P")]
    profile: String,
    /// Narrow the profile to these caps (comma-separated).
    #[arg(long, value_name = "CAPS")]
    caps: Option<String>,
    /// Serve raw TCP: each connection's request bytes go to the
    /// component's workbooks:engine/tcp-handler export.
    #[arg(long)]
    tcp: bool,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    listen: String,
    /// Tenant the handler runs as.
    #[arg(long, default_value = "default")]
    tenant: String,
    /// Set NAME=VALUE in each request's environment (repeatable).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// Requests per minute one client address may make.
    #[arg(long, default_value_t = 600, value_name = "N")]
    per_client: u64,
    /// Wall-clock budget of one request in milliseconds.
    #[arg(long, value_name = "MS")]
    timeout: Option<u64>,
    /// Fuel of one request (default 5e9).
    #[arg(long, value_name = "N")]
    fuel: Option<u64>,
    /// Connections open at once, from all clients; at the cap the one
    /// waiting longest for its request headers is shed for a new one.
    #[arg(long, default_value_t = workbooks::limits::SERVE_MAX_CONNECTIONS, value_name = "N")]
    max_connections: usize,
    /// Connections open at once from one client (an IPv4 address or an
    /// IPv6 /64).
    #[arg(long, default_value_t = workbooks::limits::SERVE_MAX_CONNECTIONS_PER_CLIENT, value_name = "N")]
    max_connections_per_client: usize,
    /// Milliseconds a client has to send a request's headers; also how long
    /// an idle keep-alive connection stays open.
    #[arg(long, default_value_t = 10_000, value_name = "MS")]
    header_timeout: u64,
    /// A fresh instance for every request, even for a WASI 0.3 handler,
    /// whose instances otherwise serve several requests at once.
    #[arg(long)]
    instance_per_request: bool,
    /// Serve under stored grant ID (`wbx grant add`): its tenant (unless
    /// --tenant is given), profile, caps and host variables in place of the
    /// flags, its scopes judged at every call; once it expires or is
    /// revoked every request is refused (403) and one in flight is cut
    /// off. A grant's directories are not opened: serve preopens none.
    #[arg(long, value_name = "ID")]
    grant: Option<String>,
    /// The component.
    file: PathBuf,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        workbooks::Profile::parse(&args.profile).map_err(|e| fail("usage", e, exit::USAGE))?;
        let caps = match &args.caps {
            Some(w) => Some(CapSet::parse(w).map_err(|e| fail("usage", e, exit::USAGE))?),
            None => None,
        };
        let (file, _) = crate::oci::local(&args.file, &home)?;
        let artifact = Artifact::from_file(&file).map_err(|e| fail("load", e, exit::LOAD))?;
        let engine = engine_with(home, true, None)?;
        let mut under = workbooks::shell::LineOptions {
            profile: args.profile.clone(),
            caps,
            tenant: args.tenant.clone(),
            env: crate::options::parse_env(&args.env)?,
            ..Default::default()
        };
        if let Some(id) = &args.grant {
            let subject = format!("sha256:{}", artifact.sha256_hex());
            let tenant_given = args.tenant != workbooks_wire::DEFAULT_TENANT;
            crate::options::under_grant(&engine, id, &subject, tenant_given, false, &mut under)
                .map_err(|e| fail("refused", e, exit::REFUSED))?;
        }
        let profile = under.profile.clone();
        let opts = ServeOptions {
            profile: under.profile,
            caps: under.caps,
            tenant: under.tenant,
            per_client_per_minute: args.per_client,
            timeout: args.timeout.map(std::time::Duration::from_millis),
            fuel: args.fuel,
            max_connections: args.max_connections,
            max_connections_per_client: args.max_connections_per_client,
            header_timeout: std::time::Duration::from_millis(args.header_timeout),
            env: under.env,
            instance_per_request: args.instance_per_request,
            scope: under.scope,
            ..ServeOptions::default()
        };
        let refused = |e: workbooks::ServeError| {
            let code = match &e {
                workbooks::ServeError::Dock(d) => exit::for_dock_error(d),
                workbooks::ServeError::NotAHandler | workbooks::ServeError::NotATcpHandler => {
                    exit::LOAD
                }
                workbooks::ServeError::Policy(_) => exit::REFUSED,
                workbooks::ServeError::Env(_) => exit::USAGE,
            };
            fail("refused", e, code)
        };
        let server = if args.tcp {
            Served::Tcp(workbooks::TcpServer::new(&engine, &artifact, opts).map_err(refused)?)
        } else {
            Served::Http(workbooks::Server::new(&engine, &artifact, opts).map_err(refused)?)
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| fail("engine", e, exit::ENGINE))?;
        rt.block_on(async {
            let listener = tokio::net::TcpListener::bind(&args.listen)
                .await
                .map_err(|e| fail("listen", format!("{}: {e}", args.listen), exit::ENGINE))?;
            let addr = listener
                .local_addr()
                .map_err(|e| fail("listen", e, exit::ENGINE))?;
            let (scheme, handler, mode) = match &server {
                Served::Tcp(_) => (
                    "tcp",
                    "workbooks:engine/tcp-handler",
                    "a fresh instance per connection".to_string(),
                ),
                Served::Http(s) => ("http", s.handler(), s.mode()),
            };
            let grant = args
                .grant
                .as_ref()
                .map_or_else(String::new, |id| format!(", grant {id}"));
            eprintln!(
                "wbx: serving {} on {scheme}://{addr} (profile {profile}{grant}; {handler}, {mode})",
                args.file.display(),
            );
            // Stop on SIGINT or SIGTERM; main then writes out the audit
            // denials still being coalesced.
            let mut terminate =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                    .map_err(|e| fail("serve", e, exit::ENGINE))?;
            let run = async move {
                match server {
                    Served::Http(s) => s.run(listener).await,
                    Served::Tcp(s) => s.run(listener).await,
                }
            };
            tokio::select! {
                served = run => {
                    served.map_err(|e| fail("serve", e, exit::ENGINE))
                }
                _ = tokio::signal::ctrl_c() => Ok(()),
                _ = terminate.recv() => Ok(()),
            }
        })?;
        eprintln!("{}: serve: stopped", crate::BIN);
        Ok(0)
    };
    body().unwrap_or_else(|c| c)
}

/// What `wbx serve` runs.
enum Served {
    Http(workbooks::Server),
    Tcp(workbooks::TcpServer),
}
