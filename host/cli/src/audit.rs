//! `wbx audit`, `wbx revoke`, `wbx unrevoke`: the cadence from the
//! operator's side.
//!
//! Audit entries carry text a guest or a client chose (a command name, a
//! host, a tenant read back from a file), so the human-readable output
//! escapes every control character and every bidirectional override: the
//! log can never drive the operator's terminal. `--json` is escaped by JSON
//! itself.

use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::cadence::{Audit, Revocations};

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {}

#[derive(Debug, clap::Args)]
pub(crate) struct TenantArgs {
    /// The tenant.
    tenant: String,
}

pub(crate) fn audit(_args: AuditArgs, home: PathBuf) -> u8 {
    let summary = match Audit::read_file(&home.join(workbooks::cadence::AUDIT_FILE)) {
        Ok(s) => s,
        Err(e) => return fail("audit", e, exit::ENGINE),
    };
    let revoked = Revocations::new(Some(home.join(workbooks::cadence::REVOCATIONS_FILE))).list();
    if crate::out::json() {
        let out = serde_json::json!({ "counts": summary.counts, "recent": summary.recent, "revoked": revoked });
        outln!("{out}");
        return 0;
    }
    outln!(
        "revoked tenants: {}",
        if revoked.is_empty() {
            "none".into()
        } else {
            escape(&revoked.join(", "))
        }
    );
    outln!("denials by reason:");
    if summary.counts.is_empty() {
        outln!("  none");
    }
    for (reason, n) in &summary.counts {
        outln!("  {:<24} {n}", escape(reason));
    }
    if !summary.recent.is_empty() {
        outln!("most recent:");
        for e in summary.recent.iter().rev().take(20) {
            let repeats = if e.count > 1 {
                format!(" (×{})", e.count)
            } else {
                String::new()
            };
            outln!(
                "  {}  {:<8} {:<20} {} {}{repeats}",
                e.at_ms,
                escape(&e.cap),
                escape(&e.reason),
                escape(&e.tenant),
                escape(&e.detail)
            );
        }
    }
    0
}

/// `text` with control characters, bidirectional marks and overrides,
/// zero-width characters, line and paragraph separators and `\` written as
/// escapes, safe to print on a terminal.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            c if c.is_control() && (c as u32) < 0x100 => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}' => {
                out.push_str(&format!("\\u{{{:04x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

pub(crate) fn revoke(args: TenantArgs, home: PathBuf, revoke: bool) -> u8 {
    // A tenant is a stored name; anything else (`../../x`) names no tenant.
    // Lifting stays open to any string, so an entry written before this
    // check can still be removed.
    if revoke && let Err(e) = workbooks::storage::validate_name("tenant", &args.tenant) {
        return fail("revoke", e, exit::USAGE);
    }
    let list = Revocations::new(Some(home.join(workbooks::cadence::REVOCATIONS_FILE)));
    let changed = if revoke {
        list.revoke(&args.tenant)
    } else {
        list.unrevoke(&args.tenant)
    };
    match changed {
        Ok(true) if revoke => outln!("revoked {}", args.tenant),
        Ok(true) => outln!("unrevoked {}", args.tenant),
        Ok(false) if revoke => outln!("{} was already revoked", args.tenant),
        Ok(false) => outln!("{} was not revoked", args.tenant),
        Err(e) => return fail("revoke", e, exit::ENGINE),
    }
    0
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn terminal_escapes_and_overrides_are_written_out_not_sent() {
        let shown = escape("\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}txt.exe\\n");
        assert!(
            !shown.chars().any(|c| c.is_control() || c == '\u{202e}'),
            "{shown}"
        );
        assert_eq!(shown, "\\x1b]0;pwned\\x07\\x9b31m\\u{202e}txt.exe\\\\n");
        assert_eq!(escape("api.example.com"), "api.example.com");
    }
}
