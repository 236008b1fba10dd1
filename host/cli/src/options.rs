//! Options shared by the subcommands that run commands.

use crate::{exit, fail};
use std::io::IsTerminal;
use std::path::PathBuf;
use workbooks::grants::{Scope, Scoped};
use workbooks::state::Stdin;
use workbooks::{CapSet, LineOptions, Preopen, Profile};

pub(crate) use workbooks_wire::StageArgs;

/// The library options the stage flags make.
pub(crate) trait StageOptions {
    /// The library options, or the exit code of a usage error.
    fn to_options(&self) -> Result<LineOptions, u8>;
    /// The library options, or why they are a usage error; `--grant` is
    /// refused (a verb that runs under it calls `granted_options`).
    fn line_options(&self) -> Result<LineOptions, String>;
    /// The library options of every flag but `--grant`, or the exit code
    /// of a usage error: what a verb that runs under `--grant` starts from
    /// before the grant is resolved ([`granted`]).
    fn ungranted_options(&self) -> Result<LineOptions, u8>;
    /// The library options under `--grant` when it names one, resolved in
    /// `engine`'s home ([`granted`]).
    fn granted_options(&self, engine: &workbooks::Engine) -> Result<LineOptions, String>;
}

impl StageOptions for StageArgs {
    fn to_options(&self) -> Result<LineOptions, u8> {
        self.line_options()
            .map_err(|e| fail("usage", e, exit::USAGE))
    }

    fn line_options(&self) -> Result<LineOptions, String> {
        // A verb that resolves `--grant` calls `granted`; one that does not
        // refuses it rather than run the line unscoped.
        if let Some(id) = &self.grant {
            return Err(format!(
                "--grant {id}: this verb does not run under a stored grant yet \
                 (exec, run, call, serve, fabric run and mcp do)"
            ));
        }
        base_options(self)
    }

    fn ungranted_options(&self) -> Result<LineOptions, u8> {
        base_options(self).map_err(|e| fail("usage", e, exit::USAGE))
    }

    fn granted_options(&self, engine: &workbooks::Engine) -> Result<LineOptions, String> {
        granted(self, engine, base_options(self)?, LINE_SUBJECT)
    }
}

/// The library options of every flag but `--grant`.
fn base_options(stage: &StageArgs) -> Result<LineOptions, String> {
    Profile::parse(&stage.profile).map_err(|e| e.to_string())?;
    let caps = match &stage.caps {
        None => None,
        Some(words) => Some(CapSet::parse(words).map_err(|e| e.to_string())?),
    };
    let dirs = stage
        .dirs
        .iter()
        .map(|d| Preopen::parse(d))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(LineOptions {
        profile: stage.profile.clone(),
        caps,
        tenant: stage.tenant.clone(),
        dirs,
        stage_timeout: stage.timeout.map(std::time::Duration::from_millis),
        stage_fuel: stage.fuel,
        stage_memory: stage.memory.map(|m| m << 20),
        env: env_pairs(&stage.env)?,
        scope: scope(&stage.allow_hosts)?,
        ..LineOptions::default()
    })
}

/// The `--allow-host` patterns as a scope (none: unscoped), or why one
/// cannot be read.
pub(crate) fn scope(patterns: &[String]) -> Result<Option<workbooks::grants::Scope>, String> {
    if patterns.is_empty() {
        return Ok(None);
    }
    workbooks::egress::Destinations::parse(patterns)
        .map(|d| Some(Scope::fixed(Scoped::destinations(d))))
        .map_err(|e| format!("--allow-host {e}"))
}

/// The subject a command line runs as, for a grant that names one.
pub(crate) const LINE_SUBJECT: &str = "line";

/// `opts` under `stage`'s `--grant` (when it names one) for a session
/// running `subject` (`sha256:<hex>` of a component, or
/// [`LINE_SUBJECT`]): the grant's tenant (in place of the default), profile and caps when it names them,
/// its directories (in place of `--dir`, which is refused beside them),
/// the variables it names from this process's environment, and its scope,
/// read again at every call. A grant another tenant's, for a component,
/// expired or unknown refuses the line.
pub(crate) fn granted(
    stage: &StageArgs,
    engine: &workbooks::Engine,
    mut opts: LineOptions,
    subject: &str,
) -> Result<LineOptions, String> {
    if let Some(id) = &stage.grant {
        let tenant_given = stage.tenant != workbooks_wire::DEFAULT_TENANT;
        under_grant(
            engine,
            id,
            subject,
            tenant_given,
            !stage.dirs.is_empty(),
            &mut opts,
        )?;
    }
    Ok(opts)
}

/// `opts` put under stored grant `id` for a session running `subject`:
/// its tenant unless one was given, its profile and caps when it names
/// them, what [`reach_of`] opens, and its scope.
pub(crate) fn under_grant(
    engine: &workbooks::Engine,
    id: &str,
    subject: &str,
    tenant_given: bool,
    dir_given: bool,
    opts: &mut LineOptions,
) -> Result<(), String> {
    let record = engine
        .grants()
        .get(id)
        .ok_or_else(|| workbooks::grants::GrantUseError::Unknown(id.to_string()).to_string())?;
    if !tenant_given {
        opts.tenant = record.tenant.clone();
    }
    if let Some(profile) = &record.profile {
        Profile::parse(profile).map_err(|e| e.to_string())?;
        opts.profile = profile.clone();
    }
    if let Some(caps) = &record.caps {
        opts.caps = Some(CapSet::parse(caps).map_err(|e| e.to_string())?);
    }
    reach_of(&record, dir_given, &mut opts.dirs, &mut opts.env)?;
    opts.scope = Some(
        engine
            .granted_scope(id, &opts.tenant, subject)
            .map_err(|e| e.to_string())?,
    );
    Ok(())
}

/// What grant `record` opens besides its scope: its directories in place
/// of `dirs` (`--dir` given beside them is refused: the grant names what a
/// session sees), and the variables it names, read from this process's
/// environment, added to `env` (a variable `--env` sets stays as given).
pub(crate) fn reach_of(
    record: &workbooks::grants::GrantRecord,
    dir_given: bool,
    dirs: &mut Vec<Preopen>,
    env: &mut Vec<(String, String)>,
) -> Result<(), String> {
    let id = &record.id;
    if let Some(granted) = &record.dirs {
        if dir_given {
            return Err(format!(
                "--dir: grant {id} names the directories sessions under it see \
                 ({}); narrow it with `wbx grant narrow {id} --only-dir` instead",
                match granted.is_empty() {
                    true => "none".to_string(),
                    false => granted.join(", "),
                }
            ));
        }
        *dirs = granted
            .iter()
            .map(|d| Preopen::parse(d))
            .collect::<Result<_, _>>()?;
    }
    for name in record.env.iter().flatten() {
        if let Ok(value) = std::env::var(name)
            && !env.iter().any(|(n, _)| n == name)
        {
            env.push((name.clone(), value));
        }
    }
    workbooks::environ::check(env).map_err(|e| format!("grant {id}: {e}"))
}

/// The bytes of `file`, or the exit code of a load error naming it.
pub(crate) fn read_file(file: &std::path::Path) -> Result<Vec<u8>, u8> {
    std::fs::read(file).map_err(|e| {
        fail(
            "load",
            format!("cannot read {}: {e}", file.display()),
            exit::LOAD,
        )
    })
}

/// The `--env NAME=VALUE` pairs, or the exit code of a usage error.
pub(crate) fn parse_env(specs: &[String]) -> Result<Vec<(String, String)>, u8> {
    env_pairs(specs).map_err(|e| fail("usage", e, exit::USAGE))
}

/// The `--env NAME=VALUE` pairs, or why they are a usage error.
fn env_pairs(specs: &[String]) -> Result<Vec<(String, String)>, String> {
    let pairs = specs
        .iter()
        .map(|s| workbooks::environ::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    workbooks::environ::check(&pairs).map_err(|e| e.to_string())?;
    Ok(pairs)
}

/// The host's stdin as a stream the line reads as it goes (nothing when it
/// is a terminal): no up-front read, so `wbx run` holds at most a pipe's
/// worth of it at a time.
pub(crate) fn stdin_stream() -> Stdin {
    if std::io::stdin().is_terminal() {
        Stdin::Empty
    } else {
        Stdin::Inherit
    }
}

/// What the engine shows while it compiles an artifact its cache lacks:
/// a spinner on stderr when it is a terminal (nothing otherwise), for as
/// long as the compile takes, saying where the code is kept after.
fn compile_watch(cache: PathBuf) -> workbooks::CompileWatch {
    std::sync::Arc::new(move |bytes| {
        if !std::io::stderr().is_terminal() {
            return Box::new(());
        }
        let size = if bytes >= 1 << 20 {
            format!("{} MB", bytes >> 20)
        } else {
            format!("{} KB", (bytes >> 10).max(1))
        };
        // A first compile can take seconds (an interpreter-sized
        // component): say so rather than sit silent.
        let shown = spinner(format!(
            "compiling a {size} component, once: its code is kept in {}",
            cache.display()
        ));
        Box::new(Finished(shown))
    })
}

/// A spinner cleared when dropped.
struct Finished(indicatif::ProgressBar);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// A bar on stderr, when it is a terminal, saying `what` is under way
/// with the bytes `count` gives and their rate, read ten times a second
/// until it is dropped; hidden otherwise.
pub(crate) fn byte_progress(
    what: String,
    count: impl Fn() -> u64 + Send + 'static,
) -> ByteProgress {
    if !std::io::stderr().is_terminal() {
        return ByteProgress {
            bar: indicatif::ProgressBar::hidden(),
            poll: None,
        };
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} {msg} {binary_bytes} ({binary_bytes_per_sec}, {elapsed})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.set_message(what);
    bar.enable_steady_tick(std::time::Duration::from_millis(100));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (shown, stopped) = (bar.clone(), stop.clone());
    let poll = std::thread::spawn(move || {
        while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
            shown.set_position(count());
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    ByteProgress {
        bar,
        poll: Some((stop, poll)),
    }
}

/// A bar of bytes and rate; cleared when dropped.
pub(crate) struct ByteProgress {
    pub(crate) bar: indicatif::ProgressBar,
    poll: Option<(
        std::sync::Arc<std::sync::atomic::AtomicBool>,
        std::thread::JoinHandle<()>,
    )>,
}

impl Drop for ByteProgress {
    fn drop(&mut self) {
        if let Some((stop, poll)) = self.poll.take() {
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            let _ = poll.join();
        }
        self.bar.finish_and_clear();
    }
}

/// A spinner on stderr saying `what` is under way, with the time spent,
/// when stderr is a terminal; hidden (silent) otherwise.
pub(crate) fn spinner(what: String) -> indicatif::ProgressBar {
    if !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let spinner = indicatif::ProgressBar::new_spinner();
    spinner.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    spinner.set_message(what);
    spinner.enable_steady_tick(std::time::Duration::from_millis(100));
    spinner
}

/// The engine for `home`, with the guests' `WB_NET_ALLOW` CIDRs and the
/// operator's own `WB_OPERATOR_ALLOW`, or the
/// exit code of the failure. One-shot commands run a handful of instances,
/// so they use the on-demand allocator (no pool to set up or tear down).
pub(crate) fn engine(home: PathBuf) -> Result<workbooks::Engine, u8> {
    engine_with(home, false, None)
}

/// The engine of this process, kept until it exits: tearing it down would
/// only delay the exit.
static KEEP: std::sync::OnceLock<workbooks::Engine> = std::sync::OnceLock::new();

/// Writes out the audit denials the engine is still coalescing.
pub(crate) fn flush_audit() {
    if let Some(engine) = KEEP.get() {
        engine.cadence().audit().flush();
    }
}

/// The brokers given with `--broker CAP=FILE`, read once.
static BROKERS: std::sync::OnceLock<Vec<(workbooks::Cap, Vec<u8>)>> = std::sync::OnceLock::new();

/// Whether any `--broker CAP=FILE` or `--stub` was given (a daemon
/// serves only its own brokers, so such a line runs here).
pub(crate) fn brokers_given() -> bool {
    BROKERS.get().is_some_and(|b| !b.is_empty()) || STUBS.get().is_some_and(|s| !s.is_empty())
}

/// Reads every `--broker CAP=FILE`, or returns the exit code of a usage
/// error. The engine checks each when it is built.
pub(crate) fn set_brokers(specs: &[String]) -> Result<(), u8> {
    let mut brokers = Vec::with_capacity(specs.len());
    for spec in specs {
        let usage = |why: String| fail("usage", format!("--broker {spec}: {why}"), exit::USAGE);
        let (word, file) = spec
            .split_once('=')
            .ok_or_else(|| usage("expected CAP=FILE.wasm".into()))?;
        let cap = workbooks::Cap::from_word(word).map_err(|e| usage(e.to_string()))?;
        let bytes = std::fs::read(file).map_err(|e| usage(format!("cannot read {file}: {e}")))?;
        brokers.push((cap, bytes));
    }
    let _ = BROKERS.set(brokers);
    Ok(())
}

/// The WASI families given with `--stub`, served by their deny brokers.
static STUBS: std::sync::OnceLock<workbooks::Stubs> = std::sync::OnceLock::new();

/// The families given with `--stub`.
pub(crate) fn stubs_given() -> workbooks::Stubs {
    STUBS.get().copied().unwrap_or_default()
}

/// Reads every `--stub FAMILY[,FAMILY]`, or returns the exit code of a usage error
/// naming the families that have a deny broker.
pub(crate) fn set_stubs(names: &[String]) -> Result<(), u8> {
    let mut stubs = workbooks::Stubs::NONE;
    for name in names {
        let named = workbooks::Stubs::parse(name)
            .map_err(|e| fail("usage", format!("--stub {name}: {e}"), exit::USAGE))?;
        stubs = stubs.union(named);
    }
    let _ = STUBS.set(stubs);
    Ok(())
}

/// An engine for `home`: pooled or not, with room for `memory` bytes.
pub(crate) fn engine_with(
    home: PathBuf,
    pooling: bool,
    memory: Option<usize>,
) -> Result<workbooks::Engine, u8> {
    engine_built(home, pooling, memory, Ok)
}

/// [`engine_with`], with `finish` applied to the builder last.
pub(crate) fn engine_built(
    home: PathBuf,
    pooling: bool,
    memory: Option<usize>,
    finish: impl FnOnce(workbooks::EngineBuilder) -> Result<workbooks::EngineBuilder, u8>,
) -> Result<workbooks::Engine, u8> {
    let allow = net_allow()?;
    let operator = operator_allow()?;
    let cache = workbooks_wire::cache_dir(&home);
    let mut builder = workbooks::Engine::builder()
        .on_compile(compile_watch(cache))
        .home(home)
        .net_allow(allow)
        .operator_allow(operator)
        .llm(llm_endpoint())
        .pooling(pooling)
        .ships(&workbooks_agent::LOOP)
        .ships(&workbooks_toolkit::BUILDER);
    if let Some(path) = tls_roots_file() {
        builder = builder.tls_roots_file(path);
    }
    if let Some(bytes) = memory {
        builder = builder.max_memory(bytes.max(workbooks::Profile::Posix.memory_bytes()));
    }
    for (cap, bytes) in BROKERS.get().into_iter().flatten() {
        builder = builder.broker(*cap, bytes.clone());
    }
    for stub in STUBS.get().copied().unwrap_or_default().iter() {
        builder = builder.stub(stub);
    }
    let engine = finish(builder)?
        .build()
        .map_err(|e| fail("engine", e, exit::ENGINE))?;
    let _ = KEEP.set(engine.clone());
    Ok(engine)
}

/// The exceptions to the egress floor the operator opens to guests,
/// `WB_NET_ALLOW`.
pub(crate) fn net_allow() -> Result<Vec<workbooks::Cidr>, u8> {
    cidrs(workbooks_wire::NET_ALLOW_ENV)
}

/// The exceptions to the egress floor for the operator's own endpoints
/// (registries, catalog downloads), `WB_OPERATOR_ALLOW`: never a guest's.
pub(crate) fn operator_allow() -> Result<Vec<workbooks::Cidr>, u8> {
    cidrs(workbooks_wire::OPERATOR_ALLOW_ENV)
}

fn cidrs(var: &str) -> Result<Vec<workbooks::Cidr>, u8> {
    match std::env::var(var) {
        Ok(list) => workbooks::Cidr::parse_list(&list)
            .map_err(|e| fail("usage", format!("{var}: {e}"), exit::USAGE)),
        Err(_) => Ok(Vec::new()),
    }
}

/// The OpenAI-compatible endpoint from the environment: `WB_LLM_BASE_URL`
/// (OpenRouter's by default), the key from `WB_LLM_API_KEY` or
/// `OPENROUTER_API_KEY`, the model from `WB_LLM_MODEL`, the most tokens
/// one completion may answer with from `WB_LLM_MAX_TOKENS` (4096).
pub(crate) fn llm_endpoint() -> workbooks::LlmEndpoint {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let base = var("WB_LLM_BASE_URL").unwrap_or_else(|| DEFAULT_LLM_BASE_URL.into());
    let key = var("WB_LLM_API_KEY").or_else(|| var("OPENROUTER_API_KEY"));
    let model = var("WB_LLM_MODEL").unwrap_or_else(|| DEFAULT_LLM_MODEL.into());
    let mut endpoint = workbooks::LlmEndpoint::new(&base, key, model);
    if let Some(n) = var("WB_LLM_MAX_TOKENS").and_then(|v| v.parse().ok()) {
        endpoint.max_tokens = n;
    }
    endpoint
}

/// The PEM file of extra TLS roots beside the web's, `WB_TLS_CA_FILE`
/// (for a network behind an inspecting proxy). Nothing reads it until a
/// connection needs TLS: the engine's (a guest's, the model's, a
/// download's) or a push or pull's.
pub(crate) fn tls_roots_file() -> Option<PathBuf> {
    std::env::var_os("WB_TLS_CA_FILE")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
}

/// The agent service on `engine`, with the outside services the
/// environment names ([`agent_services`]) and the toolkits this process
/// finds; a place that is not usable is an error naming it.
pub(crate) fn agents(engine: workbooks::Engine) -> Result<workbooks_agent::Agents, u8> {
    workbooks_agent::Agents::new(engine)
        .with_services(agent_services())
        .map_err(|e| fail("engine", e, exit::ENGINE))
}

/// Where the agent's outside tools go, from the environment:
/// `WB_SEARCH_URL` (a SearXNG-compatible endpoint), and for runs granted
/// exec `WB_AGENT_GIT_REMOTE` (naming `{tenant}`) with
/// `WB_AGENT_GIT_BRANCH` (`main`), `WB_AGENT_WEB_ROOT` (naming `{tenant}`),
/// `WB_IMAGE_BASE_URL` with `WB_IMAGE_API_KEY` and `WB_IMAGE_MODEL`.
pub(crate) fn agent_services() -> workbooks_agent::AgentServices {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    workbooks_agent::AgentServices {
        web_search: var("WB_SEARCH_URL"),
        git: var("WB_AGENT_GIT_REMOTE").map(|url| workbooks_agent::GitRemote {
            url,
            branch: var("WB_AGENT_GIT_BRANCH").unwrap_or_else(|| "main".into()),
        }),
        web_root: var("WB_AGENT_WEB_ROOT"),
        image: var("WB_IMAGE_BASE_URL").map(|base| {
            workbooks_agent::ImageEndpoint::new(
                &base,
                var("WB_IMAGE_API_KEY"),
                var("WB_IMAGE_MODEL"),
            )
        }),
    }
}

/// The endpoint when `WB_LLM_BASE_URL` is not set.
const DEFAULT_LLM_BASE_URL: &str = "https://openrouter.ai/api/v1";

/// The model when `WB_LLM_MODEL` is not set.
const DEFAULT_LLM_MODEL: &str = "xiaomi/mimo-v2.5";

/// A current-thread runtime, or the exit code of the failure.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, u8> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail("engine", e, exit::ENGINE))
}

/// The keyring of `home`'s tenants.
pub(crate) fn keyring(home: &std::path::Path) -> workbooks::Keyring {
    workbooks::Keyring::new(Some(home.join(workbooks::SECRETS_DIR)), Default::default())
}

/// The operator's pinned signing seed, `WB_SIGNING_KEY`.
pub(crate) fn seed() -> Option<String> {
    std::env::var("WB_SIGNING_KEY")
        .ok()
        .filter(|s| !s.is_empty())
}
