//! `wbx grant`: grants as values in the home (`grants.json`), added,
//! narrowed, widened, revoked and shown by the operator. A change reaches
//! every engine sharing the home at its next call under the grant (within
//! `workbooks::limits::GRANT_REFRESH_INTERVAL`). Every change is kept in the
//! grant's own history (before, after, who) and written to the audit log.
//!
//! A session runs under a grant with `wbx exec --grant ID` or
//! `wbx run --grant ID`.

use crate::audit::escape;
use crate::{exit, fail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use workbooks::grants::import::ImportFor;
use workbooks::grants::{BookError, Expiry, GRANTS_FILE, GrantBook, GrantRecord, Lists};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum GrantCommand {
    /// Add a grant for a tenant; prints its id.
    Add(AddArgs),
    /// Show one grant, its scopes and what changed it.
    Show {
        /// The grant's id (`g-…`).
        id: String,
    },
    /// List the grants, one per line.
    List {
        /// Only this tenant's.
        #[arg(long)]
        tenant: Option<String>,
    },
    /// Take reach away: keep only some destinations, drop some, or expire
    /// sooner. Anything that would widen is refused.
    Narrow(NarrowArgs),
    /// Add reach: more destinations, or a later expiry (or none).
    /// Anything that would narrow is refused.
    Widen(WidenArgs),
    /// Remove a grant: every call under it is refused from the next one.
    Revoke {
        /// The grant's id.
        id: String,
    },
    /// Add the grants a file describes: a Wassette policy (`.yaml`), a
    /// Spin manifest (`.toml`, one grant per component) or grants
    /// `wbx grant export` wrote (`.json`). What a grant cannot hold is
    /// refused, naming it, and nothing is added.
    Import(ImportArgs),
    /// Write grants as JSON (one by id, or all of a tenant's), which
    /// `wbx grant import` reads back.
    Export {
        /// The grant's id; all of `--tenant`'s (or all) when absent.
        id: Option<String>,
        /// Only this tenant's.
        #[arg(long, conflicts_with = "id")]
        tenant: Option<String>,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct ImportArgs {
    /// The file.
    file: PathBuf,
    /// The tenant the grants are for (required for a Wassette policy or a
    /// Spin manifest; in place of an exported grant's own).
    #[arg(long)]
    tenant: Option<String>,
    /// What the grants are for (`sha256:<hex>`), in place of what the file
    /// implies.
    #[arg(long)]
    subject: Option<String>,
    /// Only this component of a Spin manifest.
    #[arg(long)]
    component: Option<String>,
    /// Show the grants without adding them.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct AddArgs {
    /// The tenant sessions under the grant run as.
    #[arg(long)]
    tenant: String,
    /// What the grant is for: `sha256:<hex>` of a component (only it may
    /// run under the grant) or `line` (only `wbx run` lines); any when
    /// absent.
    #[arg(long)]
    subject: Option<String>,
    /// The profile sessions under the grant dock with (in place of
    /// `--profile`).
    #[arg(long)]
    profile: Option<String>,
    /// The caps within the profile, as cap words (in place of `--caps`).
    #[arg(long)]
    caps: Option<String>,
    #[command(flatten)]
    reach: Reach,
    #[command(flatten)]
    until: Until,
}

/// What a grant reaches, as `add` sets it and `widen` adds to it.
#[derive(Debug, clap::Args)]
pub(crate) struct Reach {
    /// A network destination (repeatable), in Spin's
    /// `allowed_outbound_hosts` syntax; a grant with none reaches every
    /// destination the floor allows.
    #[arg(long = "allow-host", value_name = "DEST")]
    allow_hosts: Vec<String>,
    /// A key prefix `kv` reaches (repeatable); a grant with none reaches
    /// every key of the tenant.
    #[arg(long = "kv-prefix", value_name = "PREFIX")]
    kv_prefixes: Vec<String>,
    /// A queue-name prefix `queue` reaches (repeatable); a grant with none
    /// reaches every queue of the tenant.
    #[arg(long = "queue-prefix", value_name = "PREFIX")]
    queue_prefixes: Vec<String>,
    /// A secret `secrets` may sign with (repeatable); a grant with none
    /// reaches every secret of the tenant.
    #[arg(long = "secret", value_name = "NAME")]
    secrets: Vec<String>,
    /// A command `commands` and `exec` may run (repeatable); a grant with
    /// none reaches every command.
    #[arg(long = "command", value_name = "NAME")]
    commands: Vec<String>,
    /// A model `llm` may ask (repeatable); a grant with none reaches every
    /// model the operator's endpoint serves.
    #[arg(long = "model", value_name = "NAME")]
    models: Vec<String>,
    /// A host directory sessions under the grant see (repeatable),
    /// `HOST::GUEST[::ro]`; with a list, a session sees these and no other.
    #[arg(long = "dir", value_name = "HOST::GUEST[::ro]")]
    dirs: Vec<String>,
    /// A host environment variable passed to sessions under the grant
    /// (repeatable), by name.
    #[arg(long = "env", value_name = "NAME")]
    env: Vec<String>,
    /// The tokens every session under the grant may spend on the model in
    /// all, counted from each reply's usage (widen: a larger allowance).
    #[arg(long = "llm-tokens", value_name = "N")]
    llm_tokens: Option<u64>,
}

impl Reach {
    fn lists(self) -> Lists {
        let llm_tokens = self.llm_tokens;
        let mut lists = lists(Named {
            net: self.allow_hosts,
            kv: self.kv_prefixes,
            queue: self.queue_prefixes,
            secrets: self.secrets,
            commands: self.commands,
            models: self.models,
            dirs: self.dirs,
            env: self.env,
        });
        lists.llm_tokens = llm_tokens;
        lists
    }
}

/// What a narrowing keeps (`--only-…`) or drops (`--drop-…`).
#[derive(Debug, clap::Args)]
pub(crate) struct NarrowArgs {
    /// The grant's id.
    id: String,
    /// Keep only these destinations (repeatable; each one the grant has,
    /// or any when it has no list).
    #[arg(long = "only-host", value_name = "DEST")]
    only_hosts: Vec<String>,
    /// Drop this destination (repeatable).
    #[arg(long = "drop-host", value_name = "DEST")]
    drop_hosts: Vec<String>,
    /// Keep only these kv prefixes (repeatable; each within one the grant
    /// has, or any when it has no list).
    #[arg(long = "only-kv-prefix", value_name = "PREFIX")]
    only_kv: Vec<String>,
    /// Drop this kv prefix (repeatable).
    #[arg(long = "drop-kv-prefix", value_name = "PREFIX")]
    drop_kv: Vec<String>,
    /// Keep only these queue prefixes (repeatable).
    #[arg(long = "only-queue-prefix", value_name = "PREFIX")]
    only_queue: Vec<String>,
    /// Drop this queue prefix (repeatable).
    #[arg(long = "drop-queue-prefix", value_name = "PREFIX")]
    drop_queue: Vec<String>,
    /// Keep only these secrets (repeatable).
    #[arg(long = "only-secret", value_name = "NAME")]
    only_secrets: Vec<String>,
    /// Drop this secret (repeatable).
    #[arg(long = "drop-secret", value_name = "NAME")]
    drop_secrets: Vec<String>,
    /// Keep only these commands (repeatable).
    #[arg(long = "only-command", value_name = "NAME")]
    only_commands: Vec<String>,
    /// Drop this command (repeatable).
    #[arg(long = "drop-command", value_name = "NAME")]
    drop_commands: Vec<String>,
    /// Keep only these models (repeatable).
    #[arg(long = "only-model", value_name = "NAME")]
    only_models: Vec<String>,
    /// Drop this model (repeatable).
    #[arg(long = "drop-model", value_name = "NAME")]
    drop_models: Vec<String>,
    /// Keep only these directories (repeatable; one the grant opens, or
    /// its `::ro` form).
    #[arg(long = "only-dir", value_name = "HOST::GUEST[::ro]")]
    only_dirs: Vec<String>,
    /// Drop this directory (repeatable).
    #[arg(long = "drop-dir", value_name = "HOST::GUEST[::ro]")]
    drop_dirs: Vec<String>,
    /// Keep only these variables (repeatable).
    #[arg(long = "only-env", value_name = "NAME")]
    only_env: Vec<String>,
    /// Drop this variable (repeatable).
    #[arg(long = "drop-env", value_name = "NAME")]
    drop_env: Vec<String>,
    /// Lower the token allowance to this many (at most the grant's).
    #[arg(long = "llm-tokens", value_name = "N")]
    llm_tokens: Option<u64>,
    #[command(flatten)]
    until: Until,
}

impl NarrowArgs {
    /// What to keep and what to drop.
    fn lists(&self) -> (Lists, Lists) {
        let mut only = lists(Named {
            net: self.only_hosts.clone(),
            kv: self.only_kv.clone(),
            queue: self.only_queue.clone(),
            secrets: self.only_secrets.clone(),
            commands: self.only_commands.clone(),
            models: self.only_models.clone(),
            dirs: self.only_dirs.clone(),
            env: self.only_env.clone(),
        });
        only.llm_tokens = self.llm_tokens;
        let drop = lists(Named {
            net: self.drop_hosts.clone(),
            kv: self.drop_kv.clone(),
            queue: self.drop_queue.clone(),
            secrets: self.drop_secrets.clone(),
            commands: self.drop_commands.clone(),
            models: self.drop_models.clone(),
            dirs: self.drop_dirs.clone(),
            env: self.drop_env.clone(),
        });
        (only, drop)
    }
}

#[derive(Debug, clap::Args)]
pub(crate) struct WidenArgs {
    /// The grant's id.
    id: String,
    /// What to add.
    #[command(flatten)]
    reach: Reach,
    #[command(flatten)]
    until: Until,
    /// Never expire.
    #[arg(long, conflicts_with_all = ["for_", "until"])]
    forever: bool,
}

/// An expiry: `--for 10m` from now, or `--until` a time.
#[derive(Debug, clap::Args)]
pub(crate) struct Until {
    /// Expire this long from now (`90s`, `10m`, `2h`, `7days`).
    #[arg(
        long = "for",
        id = "for_",
        value_name = "DURATION",
        conflicts_with = "until"
    )]
    for_: Option<String>,
    /// Expire at this time (RFC 3339, UTC: `2026-12-31T23:00:00Z`).
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
}

impl Until {
    fn expiry(&self) -> Result<Expiry, String> {
        Expiry::asked(self.for_.as_deref(), self.until.as_deref()).map_err(|e| format!("--{e}"))
    }
}

/// The home's grant book.
pub(crate) fn book(home: &Path) -> GrantBook {
    GrantBook::new(Some(home.join(GRANTS_FILE)))
}

pub(crate) fn run(cmd: GrantCommand, home: PathBuf) -> u8 {
    let book = book(&home);
    let by = operator();
    let changed = match cmd {
        GrantCommand::Add(args) => add(&book, args, &by),
        GrantCommand::Show { id } => {
            return match book.get(&id) {
                Some(r) => {
                    show(&r);
                    0
                }
                None => fail("grant", BookError::Unknown(id), exit::NOT_FOUND),
            };
        }
        GrantCommand::List { tenant } => return list(&book, tenant.as_deref()),
        GrantCommand::Import(args) => return import(&book, &home, args, &by),
        GrantCommand::Export { id, tenant } => return export(&book, id, tenant.as_deref()),
        GrantCommand::Narrow(a) => a.until.expiry().map_err(usage).and_then(|e| {
            let (only, drop) = a.lists();
            book.narrow(&a.id, &only, &drop, e, &by)
                .map(|r| ("grant_narrowed", r))
                .map_err(refused)
        }),
        GrantCommand::Widen(a) => {
            let expiry = match a.forever {
                true => Ok(Expiry::Never),
                false => a.until.expiry().map_err(usage),
            };
            let add = a.reach.lists();
            expiry.and_then(|e| {
                book.widen(&a.id, &add, e, &by)
                    .map(|r| ("grant_widened", r))
                    .map_err(refused)
            })
        }
        GrantCommand::Revoke { id } => book
            .revoke(&id)
            .map(|r| ("grant_revoked", r))
            .map_err(refused),
    };
    match changed {
        Ok((what, record)) => {
            audit(&home, what, &record, &by);
            show(&record);
            0
        }
        Err(code) => code,
    }
}

fn add(book: &GrantBook, args: AddArgs, by: &str) -> Result<(&'static str, GrantRecord), u8> {
    workbooks::storage::validate_name("tenant", &args.tenant).map_err(usage)?;
    let new = workbooks::grants::NewGrant {
        subject: args.subject,
        label: None,
        profile: args.profile,
        caps: args.caps,
        reach: args.reach.lists(),
        lasts: args.until.for_,
        until: args.until.until,
    };
    let record = new.record(&args.tenant, by).map_err(usage)?;
    book.add(record)
        .map(|r| ("grant_added", r))
        .map_err(refused)
}

/// `wbx grant import`: every grant the file describes, added (or shown,
/// with `--dry-run`), with what the file says that is not reach.
fn import(book: &GrantBook, home: &Path, args: ImportArgs, by: &str) -> u8 {
    if let Some(t) = &args.tenant
        && let Err(e) = workbooks::storage::validate_name("tenant", t)
    {
        return usage(e);
    }
    let to = ImportFor {
        tenant: args.tenant,
        subject: args.subject,
        component: args.component,
        by: by.to_string(),
    };
    let imported = match workbooks::grants::import::import(&args.file, &to) {
        Ok(i) => i,
        Err(e) => return fail("grant", e, exit::REFUSED),
    };
    for note in &imported.notes {
        eprintln!("wbx: grant: note: {note}");
    }
    let mut added = Vec::new();
    for record in imported.records {
        if args.dry_run {
            added.push(record);
            continue;
        }
        match book.add(record) {
            Ok(r) => {
                audit(home, "grant_imported", &r, by);
                added.push(r);
            }
            Err(e) => return refused(e),
        }
    }
    if crate::out::json() {
        outln!("{}", serde_json::to_string(&added).unwrap_or_default());
        return 0;
    }
    for r in &added {
        show(r);
    }
    0
}

/// `wbx grant export`: the grants as JSON, one record or a list.
fn export(book: &GrantBook, id: Option<String>, tenant: Option<&str>) -> u8 {
    let text = match id {
        Some(id) => match book.get(&id) {
            Some(r) => serde_json::to_string_pretty(&r),
            None => return fail("grant", BookError::Unknown(id), exit::NOT_FOUND),
        },
        None => match book.list() {
            Ok(all) => serde_json::to_string_pretty(
                &all.into_iter()
                    .filter(|r| tenant.is_none_or(|t| r.tenant == t))
                    .collect::<Vec<_>>(),
            ),
            Err(e) => return refused(e),
        },
    };
    outln!("{}", text.unwrap_or_default());
    0
}

/// Each list's entries as the flags give them.
struct Named {
    net: Vec<String>,
    kv: Vec<String>,
    queue: Vec<String>,
    secrets: Vec<String>,
    commands: Vec<String>,
    models: Vec<String>,
    dirs: Vec<String>,
    env: Vec<String>,
}

/// The lists a change names (a cap with none given is left out).
fn lists(n: Named) -> Lists {
    fn by_cap<const N: usize>(lists: [(&str, Vec<String>); N]) -> BTreeMap<String, Vec<String>> {
        lists
            .into_iter()
            .filter(|(_, l)| !l.is_empty())
            .map(|(cap, l)| (cap.to_string(), l))
            .collect()
    }
    Lists {
        net: n.net,
        prefixes: by_cap([("kv", n.kv), ("queue", n.queue)]),
        names: by_cap([
            ("secrets", n.secrets),
            ("commands", n.commands),
            ("llm", n.models),
        ]),
        dirs: n.dirs,
        env: n.env,
        llm_tokens: None,
    }
}

fn usage(e: impl std::fmt::Display) -> u8 {
    fail("usage", e, exit::USAGE)
}

fn refused(e: BookError) -> u8 {
    let code = match e {
        BookError::Unknown(_) => exit::NOT_FOUND,
        BookError::Io { .. } => exit::ENGINE,
        _ => exit::REFUSED,
    };
    fail("grant", e, code)
}

/// Writes the change to the audit log: what, the grant, who.
fn audit(home: &Path, what: &str, record: &GrantRecord, by: &str) {
    let log = workbooks::cadence::Audit::new(Some(home.join(workbooks::cadence::AUDIT_FILE)));
    let detail = format!("{} by {by}: {}", record.id, record.scopes_text());
    log.record(&record.tenant, "grant", what, &detail);
}

/// The operator's name as the grant's history keeps it.
fn operator() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(|| format!("uid {}", rustix::process::getuid().as_raw()))
}

fn show(r: &GrantRecord) {
    if crate::out::json() {
        outln!("{}", serde_json::to_string(r).unwrap_or_default());
        return;
    }
    outln!("{}", r.id);
    outln!("  tenant:  {}", escape(&r.tenant));
    if let Some(s) = &r.subject {
        outln!("  subject: {}", escape(s));
    }
    if let Some(l) = &r.label {
        outln!("  from:    {}", escape(l));
    }
    if let Some(p) = &r.profile {
        outln!("  profile: {}", escape(p));
    }
    if let Some(c) = &r.caps {
        outln!("  caps:    {}", escape(c));
    }
    outln!("  scopes:  {}", escape(&r.scopes_text()));
    if let Some(n) = r.llm_tokens {
        outln!("  tokens:  {} of {n} spent", r.llm_spent);
    }
    for c in &r.history {
        outln!(
            "  {} {} by {}: {} -> {}",
            workbooks::grants::rfc3339(c.at_ms),
            c.what,
            escape(&c.by),
            escape(&c.before),
            escape(&c.after)
        );
    }
}

fn list(book: &GrantBook, tenant: Option<&str>) -> u8 {
    let records = match book.list() {
        Ok(r) => r,
        Err(e) => return refused(e),
    };
    let records: Vec<_> = records
        .into_iter()
        .filter(|r| tenant.is_none_or(|t| r.tenant == t))
        .collect();
    if crate::out::json() {
        outln!("{}", serde_json::to_string(&records).unwrap_or_default());
        return 0;
    }
    for r in &records {
        outln!(
            "{}\t{}\t{}",
            r.id,
            escape(&r.tenant),
            escape(&r.scopes_text())
        );
    }
    0
}
