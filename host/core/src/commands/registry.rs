//! The command registry: names bound to content-addressed artifacts.
//!
//! Bytes live at `<home>/store/<sha256>.wasm`, named by their own hash, so
//! the same bytes always land on the same path and registering is
//! idempotent. `<home>/registry.json` maps names to hashes and survives
//! restarts; writers take `<home>/registry.lock` and replace the manifest
//! atomically, and readers pick up a changed manifest at their next lookup.
//! Re-registering a name hot-swaps it: a run already holding the old
//! artifact finishes on the old bytes (store files are never deleted).
//!
//! Guards: names match `^[A-Za-z0-9_.-]+$` (at most 128 bytes); built-in
//! names are reserved and can be neither shadowed nor removed; at most
//! [`MAX_REGISTERED`] names; only bytes that validate as a component or core
//! module are stored; and before every run the file is hashed again and
//! refused on mismatch (`artifact_integrity`). The re-hash is skipped only
//! while the file's inode, size, mtime and ctime are unchanged since it
//! last verified: any write to the file changes its ctime, which user space
//! cannot set back.

use super::builtin;
use crate::artifact::{Artifact, ArtifactError};
use crate::files::{FileIdentity, lock_exclusive, write_atomic};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};
use std::time::SystemTime;

/// Names the registry holds at most (built-ins not counted).
pub const MAX_REGISTERED: usize = 4096;

/// How a command receives its argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgMode {
    /// As argv (the universal CLI convention).
    #[default]
    Argv,
    /// As the first line of stdin, for tools written that way.
    Stdin1,
}

impl ArgMode {
    /// Parses `argv` or `stdin1`.
    pub fn parse(s: &str) -> Option<ArgMode> {
        match s {
            "argv" => Some(ArgMode::Argv),
            "stdin1" => Some(ArgMode::Stdin1),
            _ => None,
        }
    }
}

/// Where a command or a fabric task runs, weakest boundary first. A
/// command is registered at one of the first two ([`Tier::is_floor`]), its
/// floor: asking for a weaker tier than a command's own never weakens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// A fresh store in the engine's own process.
    #[default]
    Instance,
    /// A child `wbx` process per call.
    OsProcess,
    /// A worker on another process or machine, through NATS JetStream.
    Node,
    /// A child `wbx` per call inside a bubblewrap sandbox: no network, a
    /// root of nothing but its program and system libraries (see
    /// `tier::root`), its own `/tmp`, its own pid namespace, no home: its
    /// parent hands it the compiled code and serves its storage caps
    /// (`cap::relay`); under OS ceilings on system calls, threads, memory,
    /// CPU time and new processes (none), see `tier::ceilings`.
    Container,
}

impl Tier {
    /// Parses `instance`, `os_process`, `node` or `container`.
    pub fn parse(s: &str) -> Option<Tier> {
        match s {
            "instance" => Some(Tier::Instance),
            "os_process" | "os-process" => Some(Tier::OsProcess),
            "node" => Some(Tier::Node),
            "container" => Some(Tier::Container),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Tier::Instance => "instance",
            Tier::OsProcess => "os_process",
            Tier::Node => "node",
            Tier::Container => "container",
        }
    }

    /// Whether a command may be registered at it: `instance` or
    /// `os_process`. The other two are where a fan-out sends its tasks.
    pub fn is_floor(self) -> bool {
        matches!(self, Tier::Instance | Tier::OsProcess)
    }

    /// The tier a command registered at `floor` runs at when `self` is
    /// asked for: the stronger of the two.
    pub fn at_least(self, floor: Tier) -> Tier {
        self.max(floor)
    }
}

/// Reads a registered command's tier, refusing one it cannot be
/// registered at: an entry edited to say `container` would otherwise be
/// run where its tier is not checked, in process.
fn floor<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Tier, D::Error> {
    let tier = Tier::deserialize(d)?;
    match tier.is_floor() {
        true => Ok(tier),
        false => Err(serde::de::Error::custom(RegistryError::NotAFloor(tier))),
    }
}

/// One registered command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// The sha256 of its bytes.
    pub sha256: String,
    /// How it receives its argument.
    pub arg_mode: ArgMode,
    /// Where it runs, at least.
    #[serde(deserialize_with = "floor")]
    pub tier: Tier,
    /// Size in bytes.
    pub size: u64,
    /// When it was (last) registered, ms since the Unix epoch.
    pub registered_ms: u64,
    /// Arguments placed before the caller's: a script packaged with the
    /// engine that runs it (the `js` build lane's QuickJS and its script).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefix: Vec<String>,
    /// WASI families its imports need that its runs serve with deny
    /// brokers (a toolkit's `#+STUB:`), by name (`wasi:sockets`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stubs: Vec<String>,
    /// Where its bytes came from, when registered by reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// The profile its runs may use at most (`command register
    /// --profile`): a caller's grant is narrowed to its caps, never
    /// widened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The caps its runs may use at most (`command register --caps`),
    /// within `profile` when both are set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<Vec<String>>,
}

/// Where a command's bytes came from: a registry reference pinned to the
/// manifest digest it resolved to, and who signed that digest. A tag moved
/// later changes nothing: the entry holds the bytes' sha256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// `oci://HOST/REPO@sha256:…`.
    pub reference: String,
    /// The signers whose signatures verified over that digest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signers: Vec<String>,
}

impl Entry {
    /// Whether `other` registers the same thing: the same bytes, arg mode,
    /// tier and prefix (registering it again changes nothing).
    pub(crate) fn registers_as(&self, other: &Entry) -> bool {
        self.sha256 == other.sha256
            && self.arg_mode == other.arg_mode
            && self.tier == other.tier
            && self.prefix == other.prefix
    }

    /// The caps its runs may use at most, from its recorded profile and
    /// caps; `None` when it recorded neither (the caller's grant holds).
    pub fn ceiling(&self) -> Option<crate::policy::CapSet> {
        let from_profile = self
            .profile
            .as_deref()
            .map(|p| crate::policy::Profile::resolve(p).effective.caps());
        // A word this build does not know grants nothing.
        let from_caps = self.caps.as_ref().map(|words| {
            words
                .iter()
                .filter_map(|w| crate::policy::Cap::from_word(w).ok())
                .fold(crate::policy::CapSet::EMPTY, crate::policy::CapSet::with)
        });
        match (from_profile, from_caps) {
            (Some(p), Some(c)) => Some(p.intersect(c)),
            (p, c) => p.or(c),
        }
    }

    /// Its stubs, as a set; a name no deny broker serves counts as none.
    pub fn stub_set(&self) -> crate::policy::Stubs {
        self.stubs
            .iter()
            .filter_map(|n| crate::policy::Stub::parse(n).ok())
            .fold(crate::policy::Stubs::NONE, crate::policy::Stubs::with)
    }
}

/// Why a registry operation failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// The name does not match `^[A-Za-z0-9_.-]+$` (≤ 128 bytes).
    #[error("invalid command name `{0}`: use 1 to 128 of A-Z a-z 0-9 _ . -")]
    InvalidName(String),
    /// The name belongs to a built-in.
    #[error("reserved_name: `{0}` is a built-in command and cannot be registered or removed")]
    Reserved(String),
    /// The tier is not one a command is registered at ([`Tier::is_floor`]).
    #[error("invalid tier `{}`: a command is registered at instance or os_process", .0.name())]
    NotAFloor(Tier),
    /// The name is the catalog's, and the bytes are not its pin.
    #[error(
        "reserved_name: `{name}` is the catalog's, pinned to sha256 {pin}; these bytes hash to {got} (wbx catalog install {name}, or register under another name)"
    )]
    Pinned {
        /// The name.
        name: String,
        /// Its pin.
        pin: String,
        /// What the bytes hash to.
        got: String,
    },
    /// The name is registered already, to something else.
    #[error(
        "`{name}` is registered already (sha256 {sha256}, tier {tier}): pass --replace to replace it"
    )]
    Exists {
        /// The name.
        name: String,
        /// What it holds now.
        sha256: String,
        /// Its tier now.
        tier: String,
    },
    /// The registry holds the maximum number of names.
    #[error("registry full: {MAX_REGISTERED} commands are registered")]
    Full,
    /// The bytes are not a valid component or module.
    #[error("not a command: {0}")]
    NotWasm(#[from] ArtifactError),
    /// The packaged arguments are past the argv cap.
    #[error("the packaged arguments are past the {0}-byte argv cap")]
    PrefixTooLarge(usize),
    /// No command by that name.
    #[error("unknown_command: `{0}`")]
    NotFound(String),
    /// The profile or caps recorded for a command are refused.
    #[error("{0}")]
    Ceiling(String),
    /// The stored bytes no longer match their hash.
    #[error("artifact_integrity: {path} does not match sha256 {sha256}")]
    Integrity {
        /// The store file.
        path: PathBuf,
        /// The hash it was registered under.
        sha256: String,
    },
    /// `registry.json` holds an entry the registry would never write: it
    /// was edited by hand or damaged. Nothing is read from or written to
    /// the registry until it is fixed, so nothing is lost either.
    #[error(
        "{path} is damaged: {why}; fix or remove that entry (the registry is read-only until then)"
    )]
    Corrupt {
        /// The manifest.
        path: PathBuf,
        /// What is wrong, naming the entry.
        why: String,
    },
    /// Reading or writing the store or manifest failed.
    #[error("registry storage failed: {0}")]
    Io(#[from] std::io::Error),
}

#[derive(Debug, Default)]
struct Manifest {
    entries: BTreeMap<String, Entry>,
    modified: Option<SystemTime>,
}

/// The registry of one engine home.
#[derive(Debug)]
pub struct Registry {
    store: PathBuf,
    manifest_path: PathBuf,
    lock_path: PathBuf,
    manifest: RwLock<Manifest>,
    verified: Mutex<HashMap<String, (FileIdentity, Artifact)>>,
    /// Whether built-in command names are reserved (not for kernels).
    reserves_builtins: bool,
}

/// Checks a command name.
pub fn validate_name(name: &str) -> Result<(), RegistryError> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(RegistryError::InvalidName(name.chars().take(64).collect()))
    }
}

/// Whether `s` is a sha256 as the registry writes it: 64 lowercase hex
/// digits (and so a safe file name in the store).
fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Registry {
    /// The registry under `home` (nothing is created until a registration).
    pub fn new(home: &Path) -> Self {
        Self::named(home, "registry", true)
    }

    /// The kernel registry under `home`: the same content-addressed store,
    /// its own manifest (`kernels.json`); built-in command names are not
    /// reserved there.
    pub fn kernels(home: &Path) -> Self {
        Self::named(home, "kernels", false)
    }

    /// The kernel registry of the same home as this one.
    pub fn kernels_beside(&self) -> Self {
        Self::kernels(self.store.parent().unwrap_or(Path::new(".")))
    }

    fn named(home: &Path, manifest: &str, reserves_builtins: bool) -> Self {
        Self {
            store: home.join("store"),
            manifest_path: home.join(format!("{manifest}.json")),
            lock_path: home.join(format!("{manifest}.lock")),
            manifest: RwLock::new(Manifest::default()),
            verified: Mutex::new(HashMap::new()),
            reserves_builtins,
        }
    }

    fn modified(&self) -> Option<SystemTime> {
        std::fs::metadata(&self.manifest_path)
            .and_then(|m| m.modified())
            .ok()
    }

    fn read_manifest(&self) -> Result<BTreeMap<String, Entry>, RegistryError> {
        let corrupt = |why: String| RegistryError::Corrupt {
            path: self.manifest_path.clone(),
            why,
        };
        let entries = match std::fs::read(&self.manifest_path) {
            Ok(bytes) => serde_json::from_slice::<Vec<Entry>>(&bytes)
                .map_err(|e| corrupt(format!("not a list of entries ({e})")))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(e.into()),
        };
        let mut map = BTreeMap::new();
        for entry in entries {
            if validate_name(&entry.name).is_err() {
                return Err(corrupt(format!(
                    "entry name `{}` is not a command name",
                    entry.name.escape_debug()
                )));
            }
            if !is_sha256_hex(&entry.sha256) {
                return Err(corrupt(format!(
                    "entry `{}`: sha256 `{}` is not 64 lowercase hex digits",
                    entry.name,
                    entry.sha256.escape_debug()
                )));
            }
            if map.insert(entry.name.clone(), entry).is_some() {
                return Err(corrupt("a name appears twice".to_string()));
            }
        }
        Ok(map)
    }

    fn refresh(&self) -> Result<(), RegistryError> {
        let modified = self.modified();
        if self
            .manifest
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .modified
            == modified
            && modified.is_some()
        {
            return Ok(());
        }
        let entries = self.read_manifest()?;
        *self.manifest.write().unwrap_or_else(|p| p.into_inner()) = Manifest { entries, modified };
        Ok(())
    }

    /// Runs `change` on the latest manifest under the registry lock and
    /// writes the result back atomically.
    fn update<T>(
        &self,
        change: impl FnOnce(&mut BTreeMap<String, Entry>) -> Result<T, RegistryError>,
    ) -> Result<T, RegistryError> {
        if let Some(dir) = self.lock_path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let lock = lock_exclusive(&self.lock_path)?;
        let mut entries = self.read_manifest()?;
        let out = change(&mut entries)?;
        let list: Vec<&Entry> = entries.values().collect();
        let bytes = serde_json::to_vec_pretty(&list).map_err(std::io::Error::other)?;
        write_atomic(&self.manifest_path, &bytes)?;
        let modified = self.modified();
        *self.manifest.write().unwrap_or_else(|p| p.into_inner()) = Manifest { entries, modified };
        drop(lock);
        Ok(out)
    }

    /// The store file of the bytes hashing to `sha256` (hex).
    pub fn store_path(&self, sha256: &str) -> PathBuf {
        self.store.join(format!("{sha256}.wasm"))
    }

    /// Registers `name` for `bytes`. A name registered already is
    /// refused ([`RegistryError::Exists`]) unless it holds exactly this
    /// (then nothing changes); see [`Registry::replace`].
    pub fn register(
        &self,
        name: &str,
        bytes: Vec<u8>,
        arg_mode: ArgMode,
        tier: Tier,
    ) -> Result<Entry, RegistryError> {
        self.register_with_prefix(name, bytes, arg_mode, tier, Vec::new())
    }

    /// Registers `name` for `bytes`, always run with `prefix` before the
    /// caller's arguments (within [`MAX_ARGV_BYTES`](crate::limits::MAX_ARGV_BYTES));
    /// refused over another registration, as [`Registry::register`] is.
    pub fn register_with_prefix(
        &self,
        name: &str,
        bytes: Vec<u8>,
        arg_mode: ArgMode,
        tier: Tier,
        prefix: Vec<String>,
    ) -> Result<Entry, RegistryError> {
        let new = self.prepared(name, bytes, arg_mode, tier, prefix)?;
        self.put(new, false).map(|(entry, _)| entry)
    }

    /// Registers `name` for `bytes` over whatever it held (a hot swap:
    /// calls in flight finish on the old bytes); the entry, and the one it
    /// replaced.
    pub fn replace(
        &self,
        name: &str,
        bytes: Vec<u8>,
        arg_mode: ArgMode,
        tier: Tier,
    ) -> Result<(Entry, Option<Entry>), RegistryError> {
        self.replace_with_prefix(name, bytes, arg_mode, tier, Vec::new())
    }

    /// [`Registry::replace`] with packaged arguments.
    pub fn replace_with_prefix(
        &self,
        name: &str,
        bytes: Vec<u8>,
        arg_mode: ArgMode,
        tier: Tier,
        prefix: Vec<String>,
    ) -> Result<(Entry, Option<Entry>), RegistryError> {
        let new = self.prepared(name, bytes, arg_mode, tier, prefix)?;
        self.put(new, true)
    }

    /// Whether registering `wanted` (its name, bytes, arg mode, tier and
    /// prefix) would be refused without `--replace`: what the name holds,
    /// if that differs.
    pub fn conflict(&self, wanted: &Entry) -> Result<Option<Entry>, RegistryError> {
        Ok(self
            .get(&wanted.name)?
            .filter(|held| !held.registers_as(wanted)))
    }

    /// How many more names the registry takes.
    pub fn room(&self) -> Result<usize, RegistryError> {
        Ok(MAX_REGISTERED.saturating_sub(self.list()?.len()))
    }

    /// Checks `name` and `bytes` and stores the bytes: the entry to put.
    fn prepared(
        &self,
        name: &str,
        bytes: Vec<u8>,
        arg_mode: ArgMode,
        tier: Tier,
        prefix: Vec<String>,
    ) -> Result<Entry, RegistryError> {
        if prefix.iter().map(|a| a.len() + 1).sum::<usize>() > crate::limits::MAX_ARGV_BYTES {
            return Err(RegistryError::PrefixTooLarge(crate::limits::MAX_ARGV_BYTES));
        }
        validate_name(name)?;
        if !tier.is_floor() {
            return Err(RegistryError::NotAFloor(tier));
        }
        if self.reserves_builtins && builtin::is_reserved(name) {
            return Err(RegistryError::Reserved(name.to_string()));
        }
        let artifact = Artifact::from_bytes(bytes)?;
        let sha256 = artifact.sha256_hex();
        if self.reserves_builtins
            && let Some(pin) = builtin::pinned(name)
            && pin != sha256
        {
            return Err(RegistryError::Pinned {
                name: name.to_string(),
                pin,
                got: sha256,
            });
        }
        let path = self.store_path(&sha256);
        if !path.is_file() {
            write_atomic(&path, artifact.bytes())?;
        }
        let entry = Entry {
            name: name.to_string(),
            sha256,
            arg_mode,
            tier,
            size: artifact.bytes().len() as u64,
            registered_ms: now_ms(),
            prefix,
            stubs: Vec::new(),
            origin: None,
            profile: None,
            caps: None,
        };
        Ok(entry)
    }

    /// Puts `entry` in the manifest; over another registration only when
    /// `replace`. The entry, and the one it replaced.
    fn put(&self, entry: Entry, replace: bool) -> Result<(Entry, Option<Entry>), RegistryError> {
        let name = entry.name.clone();
        self.update(|entries| {
            let held = entries.get(&name).cloned();
            if let Some(held) = &held {
                if held.registers_as(&entry) {
                    return Ok((held.clone(), None));
                }
                if !replace {
                    return Err(RegistryError::Exists {
                        name: name.clone(),
                        sha256: held.sha256.clone(),
                        tier: held.tier.name().to_string(),
                    });
                }
            } else if entries.len() >= MAX_REGISTERED {
                return Err(RegistryError::Full);
            }
            entries.insert(name.clone(), entry.clone());
            Ok((entry.clone(), held))
        })
    }

    /// Has `name`'s runs serve `stubs` with deny brokers wherever their
    /// grant lacks the cap (a toolkit's `#+STUB:`); never a widening.
    pub fn set_stubs(
        &self,
        name: &str,
        stubs: crate::policy::Stubs,
    ) -> Result<Entry, RegistryError> {
        let mut updated = None;
        self.update(|entries| {
            let entry = entries
                .get_mut(name)
                .ok_or_else(|| RegistryError::NotFound(name.to_string()))?;
            entry.stubs = stubs.iter().map(|s| s.name().to_string()).collect();
            updated = Some(entry.clone());
            Ok(())
        })?;
        updated.ok_or_else(|| RegistryError::NotFound(name.to_string()))
    }

    /// Records the profile and caps `name`'s runs may use at most
    /// (`None` leaves each unrecorded): every run narrows its caller's
    /// grant to them. Caps beyond the profile are refused, naming them.
    pub fn set_ceiling(
        &self,
        name: &str,
        profile: Option<&str>,
        caps: Option<crate::policy::CapSet>,
    ) -> Result<Entry, RegistryError> {
        let profile = profile
            .map(|p| crate::policy::Profile::parse(p).map(|p| p.name().to_string()))
            .transpose()
            .map_err(|e| RegistryError::Ceiling(e.to_string()))?;
        if let (Some(p), Some(c)) = (&profile, caps) {
            crate::policy::Grant::narrowed(p, c)
                .map_err(|e| RegistryError::Ceiling(e.to_string()))?;
        }
        let mut updated = None;
        self.update(|entries| {
            let entry = entries
                .get_mut(name)
                .ok_or_else(|| RegistryError::NotFound(name.to_string()))?;
            entry.profile = profile;
            entry.caps = caps.map(|c| c.words().into_iter().map(str::to_string).collect());
            updated = Some(entry.clone());
            Ok(())
        })?;
        updated.ok_or_else(|| RegistryError::NotFound(name.to_string()))
    }

    /// Records where `name`'s bytes came from (`None` clears it).
    pub fn set_origin(&self, name: &str, origin: Option<Origin>) -> Result<Entry, RegistryError> {
        let mut updated = None;
        self.update(|entries| {
            let entry = entries
                .get_mut(name)
                .ok_or_else(|| RegistryError::NotFound(name.to_string()))?;
            entry.origin = origin;
            updated = Some(entry.clone());
            Ok(())
        })?;
        updated.ok_or_else(|| RegistryError::NotFound(name.to_string()))
    }

    /// Removes `name`; its bytes stay in the store for runs in flight.
    pub fn remove(&self, name: &str) -> Result<Entry, RegistryError> {
        if self.reserves_builtins && builtin::is_reserved(name) {
            return Err(RegistryError::Reserved(name.to_string()));
        }
        self.update(|entries| {
            entries
                .remove(name)
                .ok_or_else(|| RegistryError::NotFound(name.to_string()))
        })
    }

    /// The entry for `name`, if registered.
    pub fn get(&self, name: &str) -> Result<Option<Entry>, RegistryError> {
        self.refresh()?;
        Ok(self
            .manifest
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .entries
            .get(name)
            .cloned())
    }

    /// Every registered command, by name.
    pub fn list(&self) -> Result<Vec<Entry>, RegistryError> {
        self.refresh()?;
        Ok(self
            .manifest
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .entries
            .values()
            .cloned()
            .collect())
    }

    /// Puts `artifact` in the content-addressed store under no name (a
    /// node worker's copy of a task's command); its file.
    pub fn stash(&self, artifact: &Artifact) -> std::io::Result<PathBuf> {
        let path = self.store_path(&artifact.sha256_hex());
        if !path.is_file() {
            write_atomic(&path, artifact.bytes())?;
        }
        Ok(path)
    }

    /// The store file of an entry.
    pub fn path_of(&self, entry: &Entry) -> PathBuf {
        self.store_path(&entry.sha256)
    }

    /// Loads an entry's bytes, verified against its sha256.
    pub fn load(&self, entry: &Entry) -> Result<Artifact, RegistryError> {
        if !is_sha256_hex(&entry.sha256) {
            return Err(RegistryError::Integrity {
                path: self.store.clone(),
                sha256: entry.sha256.escape_debug().to_string(),
            });
        }
        let path = self.store_path(&entry.sha256);
        let stamp = FileIdentity::of(&std::fs::metadata(&path)?);
        if let Some((seen, artifact)) = self
            .verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&entry.sha256)
            && *seen == stamp
        {
            return Ok(artifact.clone());
        }
        let bytes = std::fs::read(&path)?;
        let artifact = Artifact::from_bytes(bytes).map_err(|_| RegistryError::Integrity {
            path: path.clone(),
            sha256: entry.sha256.clone(),
        })?;
        if artifact.sha256_hex() != entry.sha256 {
            return Err(RegistryError::Integrity {
                path,
                sha256: entry.sha256.clone(),
            });
        }
        self.verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(entry.sha256.clone(), (stamp, artifact.clone()));
        Ok(artifact)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry_at(tier: &str) -> Result<Entry, serde_json::Error> {
        serde_json::from_str(&format!(
            r#"{{"name":"x","sha256":"00","arg_mode":"argv","tier":"{tier}","size":1,"registered_ms":0}}"#
        ))
    }

    #[test]
    fn an_entry_edited_to_a_tier_no_command_is_registered_at_does_not_read() {
        assert_eq!(entry_at("instance").unwrap().tier, Tier::Instance);
        assert_eq!(entry_at("os_process").unwrap().tier, Tier::OsProcess);
        for tier in ["node", "container"] {
            let e = entry_at(tier).unwrap_err().to_string();
            assert!(e.contains("registered at instance or os_process"), "{e}");
        }
    }

    #[test]
    fn a_command_is_not_registered_at_a_tier_it_cannot_be_read_back_at() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::new(dir.path());
        let wasm = wat::parse_str("(component)").unwrap();
        for tier in [Tier::Node, Tier::Container] {
            let e = registry
                .register("x", wasm.clone(), ArgMode::Argv, tier)
                .unwrap_err();
            assert!(matches!(e, RegistryError::NotAFloor(t) if t == tier), "{e}");
        }
        assert!(registry.list().unwrap().is_empty());
    }

    #[test]
    fn tiers_order_weakest_first_and_a_floor_is_never_weakened() {
        assert!(Tier::Instance < Tier::OsProcess && Tier::Node < Tier::Container);
        assert_eq!(Tier::Instance.at_least(Tier::OsProcess), Tier::OsProcess);
        assert_eq!(Tier::Container.at_least(Tier::OsProcess), Tier::Container);
        for tier in [Tier::Instance, Tier::OsProcess, Tier::Node, Tier::Container] {
            assert_eq!(Tier::parse(tier.name()), Some(tier));
        }
    }
}
