//! A grant's lists, as a change names them: the network destinations,
//! each cap's name prefixes (`kv`, ...), each cap's names (`secrets`,
//! `commands`, and `llm`'s models), the host directories it opens (`vfs`) and the host
//! variables it passes (`env`). What a narrowing may keep of each, and how
//! each reads, is written here once.

use super::GrantRecord;
use crate::preopen::Preopen;
use std::collections::{BTreeMap, BTreeSet};

/// One of a grant's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum List<'a> {
    /// The network destinations.
    Net,
    /// The name prefixes of the cap with this word.
    Prefixes(&'a str),
    /// The names the cap with this word may use.
    Names(&'a str),
    /// The host directories, `HOST::GUEST[::ro]`.
    Dirs,
    /// The host environment variables, by name.
    Env,
}

impl List<'_> {
    /// What one entry is called in a refusal.
    pub(super) fn noun(self) -> String {
        match self {
            List::Net => "destination".into(),
            List::Prefixes(cap) => format!("{cap} prefix"),
            List::Names("llm") => "model".into(),
            List::Names(cap) => format!("{} name", cap.trim_end_matches('s')),
            List::Dirs => "directory".into(),
            List::Env => "variable".into(),
        }
    }

    /// The word of the CLI's flags for it (`--only-<flag>`).
    pub(super) fn flag(self) -> String {
        match self {
            List::Net => "host".into(),
            List::Prefixes(cap) => format!("{cap}-prefix"),
            List::Names("llm") => "model".into(),
            List::Names(cap) => cap.trim_end_matches('s').into(),
            List::Dirs => "dir".into(),
            List::Env => "env".into(),
        }
    }

    /// Whether `entry` reaches nothing `have` does not: a destination,
    /// name or variable the list names, a prefix within one of its
    /// prefixes, a directory it opens (read-only where it opens it
    /// read-write).
    pub(super) fn covers(self, have: &[String], entry: &str) -> bool {
        match self {
            List::Net | List::Names(_) | List::Env => have.iter().any(|h| h == entry),
            List::Prefixes(_) => have.iter().any(|h| entry.starts_with(h.as_str())),
            List::Dirs => have.iter().any(|h| {
                let rw = h.strip_suffix("::rw").unwrap_or(h);
                h == entry || (!rw.ends_with("::ro") && entry == format!("{rw}::ro"))
            }),
        }
    }

    /// This list of `r` (`None`: unscoped).
    pub(super) fn of(self, r: &GrantRecord) -> Option<Vec<String>> {
        match self {
            List::Net => r.net.clone(),
            List::Prefixes(cap) => r.prefixes.get(cap).cloned(),
            List::Names(cap) => r.names.get(cap).cloned(),
            List::Dirs => r.dirs.clone(),
            List::Env => r.env.clone(),
        }
    }

    /// Sets this list of `r`.
    pub(super) fn set(self, r: &mut GrantRecord, to: Option<Vec<String>>) {
        let by_cap = |map: &mut BTreeMap<String, Vec<String>>, cap: &str| match to.clone() {
            Some(to) => {
                map.insert(cap.to_string(), to);
            }
            None => {
                map.remove(cap);
            }
        };
        match self {
            List::Net => r.net = to,
            List::Prefixes(cap) => by_cap(&mut r.prefixes, cap),
            List::Names(cap) => by_cap(&mut r.names, cap),
            List::Dirs => r.dirs = to,
            List::Env => r.env = to,
        }
    }

    /// Why `entry` cannot be in this list, if it cannot.
    pub(super) fn refuse(self, entry: &str) -> Option<String> {
        match self {
            List::Net | List::Prefixes(_) => None,
            List::Names(cap) if entry.is_empty() => Some(format!("an empty {cap} name")),
            List::Names(_) => None,
            List::Dirs => Preopen::parse(entry).err(),
            List::Env => crate::environ::check(&[(entry.to_string(), String::new())])
                .err()
                .map(|e| e.to_string()),
        }
    }
}

/// Entries for each list, as a change names them (in JSON, as the agent
/// API takes it: `{"net": [...], "names": {"commands": [...]}}`, every
/// field optional).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Lists {
    /// Network destinations.
    pub net: Vec<String>,
    /// Name prefixes, by cap word.
    pub prefixes: BTreeMap<String, Vec<String>>,
    /// Names, by cap word.
    pub names: BTreeMap<String, Vec<String>>,
    /// Host directories, `HOST::GUEST[::ro]`.
    pub dirs: Vec<String>,
    /// Host environment variables, by name.
    pub env: Vec<String>,
    /// The `llm` token allowance, a scalar a change names beside the
    /// lists: a narrowing may only lower it, a widening only raise it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm_tokens: Option<u64>,
}

impl Lists {
    pub(super) fn get(&self, which: List<'_>) -> &[String] {
        match which {
            List::Net => &self.net,
            List::Prefixes(cap) => self.prefixes.get(cap).map_or(&[], Vec::as_slice),
            List::Names(cap) => self.names.get(cap).map_or(&[], Vec::as_slice),
            List::Dirs => &self.dirs,
            List::Env => &self.env,
        }
    }
}

/// The lists `changes` name: the destinations, each cap's prefixes and
/// names, the directories and the variables.
pub(super) fn named<'a>(changes: &[&'a Lists]) -> Vec<List<'a>> {
    let caps = |of: fn(&'a Lists) -> &'a BTreeMap<String, Vec<String>>| {
        changes
            .iter()
            .flat_map(move |l| of(l).keys().map(String::as_str))
            .collect::<BTreeSet<&str>>()
    };
    let prefixed = caps(|l| &l.prefixes);
    let named = caps(|l| &l.names);
    std::iter::once(List::Net)
        .chain(prefixed.into_iter().map(List::Prefixes))
        .chain(named.into_iter().map(List::Names))
        .chain([List::Dirs, List::Env])
        .collect()
}

/// Every list `r` holds, for checking each entry reads.
pub(super) fn held(r: &GrantRecord) -> Vec<List<'_>> {
    std::iter::once(List::Net)
        .chain(r.prefixes.keys().map(|c| List::Prefixes(c)))
        .chain(r.names.keys().map(|c| List::Names(c)))
        .chain([List::Dirs, List::Env])
        .collect()
}
