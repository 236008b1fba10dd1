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
use std::path::{Path, PathBuf};
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
}

impl Reach {
    fn lists(self) -> Lists {
        lists(self.allow_hosts, self.kv_prefixes, self.queue_prefixes)
    }
}

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
    #[command(flatten)]
    until: Until,
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
        if let Some(d) = &self.for_ {
            return Expiry::after(d).map_err(|e| format!("--for {e}"));
        }
        if let Some(t) = &self.until {
            return Expiry::at(t).map_err(|e| format!("--until {e}"));
        }
        Ok(Expiry::Keep)
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
        GrantCommand::Narrow(a) => a.until.expiry().map_err(usage).and_then(|e| {
            let only = lists(a.only_hosts, a.only_kv, a.only_queue);
            let drop = lists(a.drop_hosts, a.drop_kv, a.drop_queue);
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
    if let Some(p) = &args.profile {
        workbooks::Profile::parse(p).map_err(usage)?;
    }
    if let Some(c) = &args.caps {
        workbooks::CapSet::parse(c).map_err(usage)?;
    }
    let mut record = GrantRecord::new(&args.tenant, by);
    record.subject = args.subject;
    record.profile = args.profile;
    record.caps = args.caps;
    let reach = args.reach.lists();
    record.net = (!reach.net.is_empty()).then_some(reach.net);
    record.prefixes = reach.prefixes;
    record.expires_ms = match args.until.expiry().map_err(usage)? {
        Expiry::At(at) => Some(at),
        Expiry::Keep | Expiry::Never => None,
    };
    book.add(record)
        .map(|r| ("grant_added", r))
        .map_err(refused)
}

/// The lists a change names: destinations, and the prefixes of the caps
/// scoped by name (a cap with none given is left out).
fn lists(net: Vec<String>, kv: Vec<String>, queue: Vec<String>) -> Lists {
    let prefixes = [("kv", kv), ("queue", queue)]
        .into_iter()
        .filter(|(_, p)| !p.is_empty())
        .map(|(cap, p)| (cap.to_string(), p))
        .collect();
    Lists { net, prefixes }
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
    if let Some(p) = &r.profile {
        outln!("  profile: {}", escape(p));
    }
    if let Some(c) = &r.caps {
        outln!("  caps:    {}", escape(c));
    }
    outln!("  scopes:  {}", escape(&r.scopes_text()));
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
