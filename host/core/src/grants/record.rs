//! One grant as stored: who it is for, what it links, its scopes, its
//! expiry and what changed it. The changes a record allows are the ones
//! its verbs name: [`GrantRecord::narrow`] only takes reach away,
//! [`GrantRecord::widen`] only adds it.

use super::BookError;
use super::lists::{Lists, held, named};
use crate::egress::Destinations;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Changes a record keeps (the oldest are dropped first). Bounds a record
/// an operator narrows and widens in a loop.
pub const GRANT_MAX_HISTORY: usize = 32;

/// A grant, as `<home>/grants.json` keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GrantRecord {
    /// `g-` and eight hex digits, chosen by the book.
    pub id: String,
    /// The tenant every session under the grant runs as.
    pub tenant: String,
    /// What the grant is for (`sha256:<hex>` of a component, a command's
    /// name, an instance id); `None` for whatever runs under it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
    /// Where it came from, for the operator (`spin.toml component hello`,
    /// from `wbx grant import`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The profile it docks with (`None`: the caller's choice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The caps within the profile, as cap words (`None`: all of them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<String>,
    /// The network destinations, as written (`None`: unscoped, the floor
    /// alone judges; empty: no destination at all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub net: Option<Vec<String>>,
    /// The name prefixes of each cap scoped by name, by cap word (the key
    /// prefixes of `kv`, ...); a cap absent here reaches every name of the
    /// tenant. Which caps honour it is each cap's own business (its folder
    /// asks [`super::Scoped::judge_name`]).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prefixes: BTreeMap<String, Vec<String>>,
    /// The names each cap scoped by name may use, by cap word (the
    /// secrets `secrets` signs with, the commands `commands` and `exec`
    /// run); a cap absent here reaches every name of the tenant.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub names: BTreeMap<String, Vec<String>>,
    /// The host directories sessions under it see, `HOST::GUEST[::ro]`
    /// (`None`: the caller's `--dir`; a list: these and no other).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirs: Option<Vec<String>>,
    /// The host environment variables passed to sessions under it, by
    /// name, read from the environment of the process that starts them
    /// (`None`: none but the caller's `--env`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<String>>,
    /// When every call under it starts being refused, in milliseconds
    /// since the Unix epoch (`None`: never).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_ms: Option<u64>,
    /// The `llm` token allowance: tokens every session under it may spend
    /// on the model in all (`None`: none of its own; the operator's and
    /// a run's budgets still apply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_tokens: Option<u64>,
    /// Tokens spent under it so far, counted from each reply's usage (see
    /// [`super::GrantBook::spend_llm`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub llm_spent: u64,
    /// When it was added, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// Who added it (the operator's user name).
    pub by: String,
    /// What changed it since, oldest first (at most
    /// [`GRANT_MAX_HISTORY`]).
    #[serde(default)]
    pub history: Vec<Change>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One change to a grant: who, when, and its scopes before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// Who made it.
    pub by: String,
    /// `narrowed` or `widened`.
    pub what: String,
    /// The scopes before ([`GrantRecord::scopes_text`]).
    pub before: String,
    /// The scopes after.
    pub after: String,
}

/// A change of expiry a verb asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Left as it is.
    Keep,
    /// At this many milliseconds since the Unix epoch.
    At(u64),
    /// Never (only a widening may ask for it).
    Never,
}

impl Expiry {
    /// `duration` from now (`90s`, `10m`, `2h`, `7days`), or why it does
    /// not read.
    pub fn after(duration: &str) -> Result<Expiry, String> {
        let d = humantime::parse_duration(duration).map_err(|e| format!("{duration}: {e}"))?;
        Ok(Expiry::At(now_ms().saturating_add(d.as_millis() as u64)))
    }

    /// What a change asks for: `lasts` from now (`10m`) or `until` a time
    /// (not both), else [`Expiry::Keep`]; why it does not read names the
    /// word (`for`, `until`).
    pub fn asked(lasts: Option<&str>, until: Option<&str>) -> Result<Expiry, String> {
        match (lasts, until) {
            (Some(_), Some(_)) => Err("give `for` or `until`, not both".into()),
            (Some(d), None) => Expiry::after(d).map_err(|e| format!("for {e}")),
            (None, Some(t)) => Expiry::at(t).map_err(|e| format!("until {e}")),
            (None, None) => Ok(Expiry::Keep),
        }
    }

    /// At `time` (RFC 3339, UTC), or why it does not read.
    pub fn at(time: &str) -> Result<Expiry, String> {
        let at = humantime::parse_rfc3339_weak(time).map_err(|e| format!("{time}: {e}"))?;
        let ms = at
            .duration_since(std::time::UNIX_EPOCH)
            .map_err(|_| format!("{time}: before 1970"))?;
        Ok(Expiry::At(ms.as_millis() as u64))
    }
}

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A time in milliseconds since the Unix epoch as RFC 3339 (UTC, seconds).
pub fn rfc3339(ms: u64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms);
    humantime::format_rfc3339_millis(t).to_string()
}

impl GrantRecord {
    /// A record for `tenant` added by `by` now; the book gives it its id.
    pub fn new(tenant: &str, by: &str) -> Self {
        GrantRecord {
            id: String::new(),
            tenant: tenant.to_string(),
            subject: None,
            label: None,
            profile: None,
            caps: None,
            net: None,
            prefixes: BTreeMap::new(),
            names: BTreeMap::new(),
            dirs: None,
            env: None,
            expires_ms: None,
            llm_tokens: None,
            llm_spent: 0,
            created_ms: now_ms(),
            by: by.to_string(),
            history: Vec::new(),
        }
    }

    /// Whether every scope is the profile's own (no destination list, no
    /// expiry): the grant narrows nothing.
    pub fn is_unscoped(&self) -> bool {
        self.net.is_none()
            && self.prefixes.is_empty()
            && self.names.is_empty()
            && self.dirs.is_none()
            && self.env.is_none()
            && self.expires_ms.is_none()
            && self.llm_tokens.is_none()
    }

    /// The scopes in one line, for the history and the CLI.
    pub fn scopes_text(&self) -> String {
        let list = |l: &Option<Vec<String>>, all: &str| match l {
            None => all.to_string(),
            Some(n) if n.is_empty() => "nothing".to_string(),
            Some(n) => n.join(", "),
        };
        let mut text = format!(
            "net: {}",
            list(&self.net, "any destination the floor allows")
        );
        for (cap, prefixes) in &self.prefixes {
            let shown: Vec<String> = prefixes.iter().map(|p| format!("{p}*")).collect();
            text.push_str(&format!("; {cap}: {}", list(&Some(shown), "")));
        }
        for (cap, names) in &self.names {
            text.push_str(&format!("; {cap}: {}", list(&Some(names.clone()), "")));
        }
        if self.dirs.is_some() {
            text.push_str(&format!("; vfs: {}", list(&self.dirs, "")));
        }
        if self.env.is_some() {
            text.push_str(&format!("; env: {}", list(&self.env, "")));
        }
        if let Some(n) = self.llm_tokens {
            text.push_str(&format!("; llm tokens: {n}"));
        }
        let expires = self.expires_ms.map_or("never".to_string(), rfc3339);
        format!("{text}; expires: {expires}")
    }

    /// Checks that every entry of every list reads, and that each list of
    /// prefixes or names is under a cap's word (a list under a misspelt
    /// one would narrow nothing; which caps honour which list is each
    /// cap's folder's business).
    pub(crate) fn validate(&self) -> Result<(), BookError> {
        for (kind, key) in self
            .prefixes
            .keys()
            .map(|k| ("prefixes", k))
            .chain(self.names.keys().map(|k| ("names", k)))
        {
            if crate::policy::Cap::from_word(key).is_err() {
                return Err(BookError::Scope(format!(
                    "{kind} under {key:?}: no cap has that word, so they would narrow nothing"
                )));
            }
        }
        if let Some(net) = &self.net {
            Destinations::parse(net).map_err(|e| BookError::Scope(e.to_string()))?;
        }
        for which in held(self) {
            for entry in which.of(self).unwrap_or_default() {
                if let Some(why) = which.refuse(&entry) {
                    return Err(BookError::Scope(format!(
                        "{} {entry:?}: {why}",
                        which.noun()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Narrows: keeps `only` of each list (each entry one the grant has,
    /// or within one of its prefixes, or any when it has no list), drops
    /// `drop` from each, and moves the expiry earlier. Anything that would
    /// widen is refused, naming it; nothing changes then.
    pub fn narrow(
        &mut self,
        only: &Lists,
        drop: &Lists,
        expiry: Expiry,
        by: &str,
    ) -> Result<(), BookError> {
        let before = self.scopes_text();
        let mut next = self.clone();
        for which in named(&[only, drop]) {
            let keep = only.get(which);
            let mut list = which.of(&next);
            if !keep.is_empty() {
                if let Some(have) = list.as_ref()
                    && let Some(extra) = keep.iter().find(|k| !which.covers(have, k))
                {
                    return Err(self.not_narrower(format!("it has no {} {extra}", which.noun())));
                }
                list = Some(keep.to_vec());
            }
            for d in drop.get(which) {
                let Some(have) = list.as_mut() else {
                    return Err(self.not_narrower(format!(
                        "it has no {} list to drop from (narrow with --only-{})",
                        which.noun(),
                        which.flag()
                    )));
                };
                let Some(at) = have.iter().position(|h| h == d) else {
                    return Err(self.not_narrower(format!("it has no {} {d}", which.noun())));
                };
                have.remove(at);
            }
            which.set(&mut next, list);
        }
        if drop.llm_tokens.is_some() {
            return Err(self.not_narrower(
                "a token allowance is lowered (--llm-tokens N), not dropped".into(),
            ));
        }
        if let Some(n) = only.llm_tokens {
            match self.llm_tokens {
                Some(have) if n > have => {
                    return Err(self
                        .not_narrower(format!("{n} tokens is more than its allowance of {have}")));
                }
                _ => next.llm_tokens = Some(n),
            }
        }
        next.expires_ms = match expiry {
            Expiry::Keep => self.expires_ms,
            Expiry::Never => return Err(self.not_narrower("never expiring is wider".into())),
            Expiry::At(at) => match self.expires_ms {
                Some(now) if at > now => {
                    return Err(self.not_narrower(format!(
                        "{} is after its expiry {}",
                        rfc3339(at),
                        rfc3339(now)
                    )));
                }
                _ => Some(at),
            },
        };
        next.validate()?;
        *self = next;
        self.note("narrowed", before, by);
        Ok(())
    }

    /// Widens: adds to each list the grant has, and moves the expiry later
    /// or removes it. Anything that would narrow is refused, naming it;
    /// nothing changes then.
    pub fn widen(&mut self, add: &Lists, expiry: Expiry, by: &str) -> Result<(), BookError> {
        let before = self.scopes_text();
        let mut next = self.clone();
        for which in named(&[add]) {
            let more = add.get(which);
            if more.is_empty() {
                continue;
            }
            let mut list = which.of(&next);
            match &mut list {
                None => {
                    return Err(BookError::NotWider {
                        id: self.id.clone(),
                        why: format!("it has no {} list: every one is in scope", which.noun()),
                    });
                }
                Some(have) => {
                    for d in more {
                        if !have.contains(d) {
                            have.push(d.clone());
                        }
                    }
                }
            }
            which.set(&mut next, list);
        }
        if let Some(n) = add.llm_tokens {
            match self.llm_tokens {
                None => {
                    return Err(BookError::NotWider {
                        id: self.id.clone(),
                        why: "it has no token allowance: every token is in scope".into(),
                    });
                }
                Some(have) if n < have => {
                    return Err(BookError::NotWider {
                        id: self.id.clone(),
                        why: format!("{n} tokens is less than its allowance of {have}"),
                    });
                }
                Some(_) => next.llm_tokens = Some(n),
            }
        }
        next.expires_ms = match (expiry, self.expires_ms) {
            (Expiry::Keep, e) => e,
            (Expiry::Never, _) => None,
            (Expiry::At(at), Some(now)) if at >= now => Some(at),
            (Expiry::At(at), Some(now)) => {
                return Err(BookError::NotWider {
                    id: self.id.clone(),
                    why: format!("{} is before its expiry {}", rfc3339(at), rfc3339(now)),
                });
            }
            (Expiry::At(_), None) => {
                return Err(BookError::NotWider {
                    id: self.id.clone(),
                    why: "it never expires".into(),
                });
            }
        };
        next.validate()?;
        *self = next;
        self.note("widened", before, by);
        Ok(())
    }

    fn not_narrower(&self, why: String) -> BookError {
        BookError::NotNarrower {
            id: self.id.clone(),
            why,
        }
    }

    fn note(&mut self, what: &str, before: String, by: &str) {
        let after = self.scopes_text();
        if after == before {
            return;
        }
        if self.history.len() >= GRANT_MAX_HISTORY {
            self.history.remove(0);
        }
        self.history.push(Change {
            at_ms: now_ms(),
            by: by.to_string(),
            what: what.to_string(),
            before,
            after,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(net: &[&str]) -> GrantRecord {
        let mut r = GrantRecord::new("t", "op");
        r.id = "g-00000001".into();
        r.net = Some(strings(net));
        r
    }

    fn strings(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    fn net(s: &[&str]) -> Lists {
        Lists {
            net: strings(s),
            ..Lists::default()
        }
    }

    fn kv(s: &[&str]) -> Lists {
        Lists {
            prefixes: [("kv".to_string(), strings(s))].into(),
            ..Lists::default()
        }
    }

    const NONE: &Lists = &Lists {
        net: Vec::new(),
        prefixes: BTreeMap::new(),
        names: BTreeMap::new(),
        dirs: Vec::new(),
        env: Vec::new(),
        llm_tokens: None,
    };

    #[test]
    fn a_token_allowance_is_only_lowered_by_a_narrowing_and_only_raised_by_a_widening() {
        let tokens = |n: u64| Lists {
            llm_tokens: Some(n),
            ..Lists::default()
        };
        let mut r = record(&[]);
        // None is every token: a widening has nothing to raise.
        assert!(r.widen(&tokens(10), Expiry::Keep, "op").is_err());
        r.narrow(&tokens(100), NONE, Expiry::Keep, "op").unwrap();
        assert_eq!(r.llm_tokens, Some(100));
        assert!(r.scopes_text().contains("llm tokens: 100"));
        assert!(r.narrow(&tokens(101), NONE, Expiry::Keep, "op").is_err());
        assert!(r.narrow(NONE, &tokens(1), Expiry::Keep, "op").is_err());
        assert!(r.widen(&tokens(99), Expiry::Keep, "op").is_err());
        r.widen(&tokens(500), Expiry::Keep, "op").unwrap();
        assert_eq!(r.llm_tokens, Some(500));
        assert_eq!(r.history.len(), 2);
        // A change that changes nothing is no entry of the history.
        r.narrow(NONE, NONE, Expiry::Keep, "op").unwrap();
        assert_eq!(r.history.len(), 2);
    }

    #[test]
    fn a_narrowing_that_would_add_a_destination_or_a_later_expiry_is_refused() {
        let mut r = record(&["https://a.example", "https://b.example"]);
        r.expires_ms = Some(1_000_000);
        let wider = r.narrow(&net(&["https://c.example"]), NONE, Expiry::Keep, "op");
        assert!(
            matches!(wider, Err(BookError::NotNarrower { .. })),
            "{wider:?}"
        );
        let later = r.narrow(NONE, NONE, Expiry::At(2_000_000), "op");
        assert!(later.unwrap_err().to_string().contains("after its expiry"));
        assert!(r.narrow(NONE, NONE, Expiry::Never, "op").is_err());
        assert!(
            r.narrow(NONE, &net(&["https://c.example"]), Expiry::Keep, "op")
                .is_err()
        );
        // Nothing changed, nothing was noted.
        assert_eq!(r.net.as_ref().unwrap().len(), 2);
        assert!(r.history.is_empty());
        r.narrow(NONE, &net(&["https://a.example"]), Expiry::At(500), "op")
            .unwrap();
        assert_eq!(r.net, Some(strings(&["https://b.example"])));
        assert_eq!(r.expires_ms, Some(500));
        assert_eq!(r.history.len(), 1);
        assert!(r.history[0].before.contains("https://a.example"));
        assert!(!r.history[0].after.contains("https://a.example"));
    }

    #[test]
    fn a_prefix_narrows_only_to_a_prefix_within_one_the_grant_has() {
        let mut r = record(&[]);
        r.prefixes.insert("kv".into(), strings(&["users/"]));
        assert!(r.narrow(&kv(&["u"]), NONE, Expiry::Keep, "op").is_err());
        assert!(
            r.narrow(&kv(&["orders/"]), NONE, Expiry::Keep, "op")
                .is_err()
        );
        r.narrow(&kv(&["users/ada/"]), NONE, Expiry::Keep, "op")
            .unwrap();
        assert_eq!(r.prefixes["kv"], strings(&["users/ada/"]));
        // A grant with no kv list narrows to any.
        let mut open = GrantRecord::new("t", "op");
        open.narrow(&kv(&["cache/"]), NONE, Expiry::Keep, "op")
            .unwrap();
        assert_eq!(open.prefixes["kv"], strings(&["cache/"]));
        assert!(open.scopes_text().contains("kv: cache/*"));
    }

    #[test]
    fn a_widening_that_would_narrow_is_refused_and_an_unscoped_grant_cannot_widen_its_net() {
        let mut r = record(&["https://a.example"]);
        r.expires_ms = Some(1_000);
        assert!(r.widen(NONE, Expiry::At(10), "op").is_err());
        r.widen(&net(&["tcp://db.example:5432"]), Expiry::Never, "op")
            .unwrap();
        assert_eq!(r.net.as_ref().unwrap().len(), 2);
        assert_eq!(r.expires_ms, None);
        let mut open = GrantRecord::new("t", "op");
        assert!(
            open.widen(&net(&["https://x.example"]), Expiry::Keep, "op")
                .is_err()
        );
        // A destination that does not read is refused and changes nothing.
        let bad = r.widen(&net(&["gopher://x"]), Expiry::Keep, "op");
        assert!(matches!(bad, Err(BookError::Scope(_))), "{bad:?}");
        assert_eq!(r.net.as_ref().unwrap().len(), 2);
    }

    #[test]
    fn a_directory_narrows_only_to_itself_or_its_read_only_form_and_a_bad_one_is_refused() {
        let mut r = record(&[]);
        r.dirs = Some(strings(&["/srv/data::/data", "/srv/logs::/logs::ro"]));
        let dirs = |d: &[&str]| Lists {
            dirs: strings(d),
            ..Lists::default()
        };
        // A read-only directory cannot be narrowed to read-write, nor to
        // another path.
        for wider in ["/srv/logs::/logs", "/srv::/srv::ro", "/srv/data::/other"] {
            let refused = r.narrow(&dirs(&[wider]), NONE, Expiry::Keep, "op");
            assert!(refused.is_err(), "{wider}");
        }
        r.narrow(&dirs(&["/srv/data::/data::ro"]), NONE, Expiry::Keep, "op")
            .unwrap();
        assert_eq!(r.dirs, Some(strings(&["/srv/data::/data::ro"])));
        let bad = r.widen(&dirs(&["no-separator"]), Expiry::Keep, "op");
        assert!(matches!(bad, Err(BookError::Scope(_))), "{bad:?}");
    }

    #[test]
    fn a_record_keeps_no_more_changes_than_its_bound() {
        let mut r = record(&["https://a.example"]);
        for i in 0..GRANT_MAX_HISTORY + 5 {
            let more = net(&[&format!("https://h{i}.example")]);
            r.widen(&more, Expiry::Keep, "op").unwrap();
        }
        assert_eq!(r.history.len(), GRANT_MAX_HISTORY);
    }
}
