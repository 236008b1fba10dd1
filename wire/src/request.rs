//! What a client asks the daemon to run, and what ties it to one build
//! and one environment.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What a client asks the daemon to run: the `run` verb's arguments, with
/// every path made absolute on the client's side.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Request {
    /// The client's build id (`workbooks::build_id`), when it is a full
    /// CLI; the daemon serves its own only.
    pub build: Option<String>,
    /// The engine binary a thin client would run the line with otherwise;
    /// the daemon serves it only when that file is its own executable.
    pub engine: Option<FileId>,
    /// The client's [`env_digest`]; the daemon serves its own only.
    pub env: String,
    /// The name that starts the line's messages (`wbx`, `wbr`).
    pub bin: String,
    /// The command line.
    pub line: String,
    /// Whether the client asked for the JSON report.
    pub json: bool,
    /// Whether the client has a stdin to offer (not a terminal).
    pub stdin: bool,
    /// The stage flags as given, but the preopens.
    pub stage: StageArgs,
    /// `(absolute host path, guest path, read-only)`.
    pub dirs: Vec<(PathBuf, String, bool)>,
}

/// How stages run: profile, caps, preopens, budgets, tenant. A daemon's
/// client sends them as they are, but its preopens apart, made absolute.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct StageArgs {
    /// Capability profile the commands run under.
    #[cfg_attr(
        feature = "clap",
        arg(long, default_value = DEFAULT_PROFILE, value_name = "P")
    )]
    pub profile: String,
    /// Narrow the profile to these caps (comma-separated).
    #[cfg_attr(feature = "clap", arg(long, value_name = "CAPS"))]
    pub caps: Option<String>,
    /// Preopen a host directory as HOST::GUEST (add ::ro for read-only).
    #[cfg_attr(feature = "clap", arg(long = "dir", value_name = "HOST::GUEST"))]
    #[serde(skip)]
    pub dirs: Vec<String>,
    /// Wall-clock budget of each command in milliseconds (default 30000).
    #[cfg_attr(feature = "clap", arg(long, value_name = "MS"))]
    pub timeout: Option<u64>,
    /// Fuel of each command (default 5e9).
    #[cfg_attr(feature = "clap", arg(long, value_name = "N"))]
    pub fuel: Option<u64>,
    /// Memory cap of each command in MiB, in place of the profile's.
    #[cfg_attr(feature = "clap", arg(long, value_name = "MIB"))]
    pub memory: Option<usize>,
    /// Tenant the commands run as.
    #[cfg_attr(feature = "clap", arg(long, default_value = DEFAULT_TENANT))]
    pub tenant: String,
    /// Set NAME=VALUE in every command's environment (repeatable); a guest
    /// sees these and nothing of the host's.
    #[cfg_attr(feature = "clap", arg(long = "env", value_name = "NAME=VALUE"))]
    pub env: Vec<String>,
    /// Let every command's network caps reach only these destinations
    /// (repeatable), in Spin's `allowed_outbound_hosts` syntax:
    /// `https://api.example.com`, `https://*.example.com:443`,
    /// `tcp://db.example.com:5432`. The floor still applies under them.
    #[cfg_attr(feature = "clap", arg(long = "allow-host", value_name = "DEST"))]
    #[serde(default)]
    pub allow_hosts: Vec<String>,
    /// Run every command under stored grant ID (`wbx grant add`): its
    /// tenant, profile and caps when it names them, its scopes and expiry,
    /// read again at every call.
    #[cfg_attr(
        feature = "clap",
        arg(long, value_name = "ID", conflicts_with = "allow_hosts")
    )]
    #[serde(default)]
    pub grant: Option<String>,
}

/// The profile stages run under when no `--profile` is given.
pub const DEFAULT_PROFILE: &str = "compute";
/// The tenant stages run as when no `--tenant` is given.
pub const DEFAULT_TENANT: &str = "default";

impl Default for StageArgs {
    /// The flags' defaults: [`DEFAULT_PROFILE`], [`DEFAULT_TENANT`].
    fn default() -> Self {
        StageArgs {
            profile: DEFAULT_PROFILE.into(),
            caps: None,
            dirs: Vec::new(),
            timeout: None,
            fuel: None,
            memory: None,
            tenant: DEFAULT_TENANT.into(),
            env: Vec::new(),
            allow_hosts: Vec::new(),
            grant: None,
        }
    }
}

/// The CIDRs opened through the egress floor to guests.
pub const NET_ALLOW_ENV: &str = "WB_NET_ALLOW";

/// The CIDRs opened through the egress floor to the operator's own
/// endpoints (registries, catalog downloads), never to guests.
pub const OPERATOR_ALLOW_ENV: &str = "WB_OPERATOR_ALLOW";

/// The environment variables that change what a line may reach (the
/// guests' and the operator's egress allow-lists, its model endpoint and
/// key). A daemon serves only a client whose values are its own.
pub const DAEMON_ENV: &[&str] = &[
    NET_ALLOW_ENV,
    OPERATOR_ALLOW_ENV,
    "WB_LLM_BASE_URL",
    "WB_LLM_API_KEY",
    "OPENROUTER_API_KEY",
    "WB_LLM_MODEL",
];

/// A digest of this process's [`DAEMON_ENV`] (unset and empty told
/// apart); keys never leave the process in clear.
pub fn env_digest() -> String {
    env_digest_of(|name| std::env::var_os(name))
}

/// [`env_digest`] of the environment `var` reads.
pub fn env_digest_of(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut h = Sha256::new();
    for name in DAEMON_ENV {
        h.update(name.as_bytes());
        match var(name) {
            None => h.update([0]),
            Some(value) => {
                h.update([1]);
                h.update(Sha256::digest(value.as_bytes()));
            }
        }
    }
    hex::encode(h.finalize())
}

/// A file's identity: device, inode, size and change time. A file
/// replaced or rewritten has another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileId {
    /// Device.
    pub dev: u64,
    /// Inode.
    pub ino: u64,
    /// Size in bytes.
    pub size: u64,
    /// Last change (status) time, seconds and nanoseconds.
    pub ctime: (i64, i64),
}

impl FileId {
    /// The identity of the file at `path` (symbolic links followed).
    pub fn of(path: &Path) -> std::io::Result<FileId> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok(FileId {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;

    fn digest(pairs: &[(&str, &str)]) -> String {
        env_digest_of(|name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn the_digest_tells_unset_from_empty_and_each_variable_from_the_others() {
        let all = [
            digest(&[]),
            digest(&[("WB_NET_ALLOW", "")]),
            digest(&[("WB_NET_ALLOW", "10.0.0.0/8")]),
            digest(&[("WB_LLM_MODEL", "10.0.0.0/8")]),
            digest(&[("WB_LLM_API_KEY", "k1")]),
            digest(&[("WB_LLM_API_KEY", "k2")]),
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(digest(&[("UNRELATED", "x")]), digest(&[]));
        assert!(!all[4].contains("k1"));
    }

    #[test]
    fn a_file_rewritten_or_replaced_has_another_identity() {
        let dir = std::env::temp_dir().join(format!("wb-fileid-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("engine");
        std::fs::write(&path, b"one").unwrap();
        let first = FileId::of(&path).unwrap();
        assert_eq!(FileId::of(&path).unwrap(), first);
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(&path, b"two").unwrap();
        assert_ne!(FileId::of(&path).unwrap(), first);
        let replaced = dir.join("engine.new");
        std::fs::write(&replaced, b"two").unwrap();
        let before = FileId::of(&path).unwrap();
        std::fs::rename(&replaced, &path).unwrap();
        assert_ne!(FileId::of(&path).unwrap(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
