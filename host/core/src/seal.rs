//! Sealing the engine's on-disk caches with a key only the engine holds.
//!
//! Threat: the compile cache holds native code the engine maps and runs
//! (`.cwasm`), and the composition cache holds components the engine treats
//! as its own work (a guest already wired to its brokers). Anyone who can
//! write those files without being the engine's user (another account with
//! write access to the cache directory, a tampered backup, a cache copied
//! between machines) could otherwise have the engine run code it never
//! compiled, or skip a broker. So every entry is written with an HMAC-SHA256
//! over a context (what the entry claims to be: the artifact's hash and the
//! engine's settings) and its bytes, under a random key kept in the
//! user's own state directory (`$XDG_STATE_HOME/workbooks/cache.key`,
//! else `~/.local/state/workbooks/cache.key`; mode 0600 in a directory
//! of 0700, refused if either is a symlink, another user's, or open to
//! anyone else), never in the home. A home travels (a tarball, a shared
//! checkout, `./.workbooks` committed to a repository); a key inside it
//! would travel with it and vouch for whatever native code came along. A
//! home made under another user or another `HOME` therefore has nothing
//! this user trusts: its entries are compiled anew. An entry that fails
//! the check is ignored and rebuilt; an entry cannot be renamed into
//! another's place, since the name is part of what is sealed. The
//! engine's own user is not in this threat: it can read the key, as it
//! can rewrite the engine binary.
//!
//! Compositions carry the tag as a trailer. Compiled entries are mapped
//! straight from their file, so they keep the tag in a sealed sidecar
//! (`.seal`) together with the identity of the file whose bytes were
//! checked: device, inode, size, mtime and ctime. A load opens the file; if
//! the open file still has that identity (any write or replacement changes
//! the ctime or the inode, and user space cannot set a ctime back) and only
//! the key's owner may write it, it is mapped through that same descriptor
//! without hashing; otherwise its bytes are read through the descriptor
//! (at most 1 GiB), checked against the tag and deserialized from memory.
//! File times come from a coarse clock (a tick of a few ms), so an identity
//! is sealed only once the file's ctime is [`SETTLE`] old: a write after
//! that moment lands on a later tick and shows.

use crate::files::FileIdentity;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Bytes of the trailer.
const MAC_BYTES: usize = 32;

/// The sealing key of one engine home; without one, nothing is trusted
/// from disk.
#[derive(Clone)]
pub(crate) struct Seal {
    key: Option<[u8; 32]>,
    /// The user that owns the key: entries of another owner, or that
    /// others may write, are hashed before they are used.
    owner: Option<u32>,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Seal")
            .field("key", &self.key.map(|_| "<redacted>"))
            .finish()
    }
}

/// Reads the key at `path`, creating it (exclusively, 0600) when absent.
/// A key that is a symlink, or that anyone but its owner may read or
/// write, is refused. Returns the key and its owner.
fn load_or_create(path: &Path) -> std::io::Result<([u8; 32], u32)> {
    let read = |p: &Path| -> std::io::Result<Option<([u8; 32], u32)>> {
        let meta = match std::fs::symlink_metadata(p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        if !meta.file_type().is_file() || meta.mode() & 0o077 != 0 {
            return Err(std::io::Error::other(format!(
                "{} must be a regular file only its owner can read (mode 0600)",
                p.display()
            )));
        }
        let key = std::fs::read(p)?
            .try_into()
            .map_err(|_| std::io::Error::other(format!("{} is not a key", p.display())))?;
        Ok(Some((key, meta.uid())))
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    own_private_dir(dir)?;
    if let Some(key) = read(path)? {
        return Ok(key);
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| std::io::Error::other(e.to_string()))?;
    let tmp = crate::files::write_private_temp(dir, "cache.key", &key)?;
    // Publish only a complete key; if another process got there first,
    // use theirs.
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    read(path)?.ok_or_else(|| std::io::Error::other(format!("{} vanished", path.display())))
}

/// Makes `dir` (mode 0700) when missing, and refuses it unless it is a
/// directory of this user's that no one else may write.
fn own_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    let me = rustix::process::geteuid().as_raw();
    if !meta.file_type().is_dir() || meta.uid() != me || meta.mode() & 0o022 != 0 {
        return Err(std::io::Error::other(format!(
            "{} must be a directory of your own (uid {me}) that no one else may write",
            dir.display()
        )));
    }
    Ok(())
}

/// The variable naming the state directory outright.
pub const STATE_DIR_ENV: &str = "WB_STATE_DIR";

/// The user's own state directory for the engine, where the sealing key
/// lives: `WB_STATE_DIR` when set (an engine sets it for the child `wbx`
/// it starts, whose environment is otherwise empty), else
/// `$XDG_STATE_HOME/workbooks`, else `$HOME/.local/state/workbooks`;
/// `None` when none is set.
pub fn default_state_dir() -> Option<PathBuf> {
    let var = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(dir) = var(STATE_DIR_ENV) {
        return Some(dir);
    }
    var("XDG_STATE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".local").join("state")))
        .map(|d| d.join("workbooks"))
}

impl Seal {
    /// The seal whose key file is `path`; `None` seals nothing
    /// (and so trusts nothing read back).
    pub(crate) fn open(path: Option<&Path>) -> Self {
        let loaded = path.and_then(|p| match load_or_create(p) {
            Ok(loaded) => Some(loaded),
            Err(e) => {
                tracing::warn!(path = %p.display(), error = %e, "no cache key; on-disk caches are off");
                None
            }
        });
        Self {
            key: loaded.map(|(key, _)| key),
            owner: loaded.map(|(_, owner)| owner),
        }
    }

    fn mac(key: &[u8; 32], context: &[u8], bytes: &[u8]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("any key size");
        mac.update(&(context.len() as u64).to_le_bytes());
        mac.update(context);
        mac.update(bytes);
        mac
    }

    /// `bytes` with the trailer that binds them to `context`, or `None`
    /// when there is no key (then nothing should be written).
    pub(crate) fn seal(&self, context: &[u8], bytes: &[u8]) -> Option<Vec<u8>> {
        let key = self.key.as_ref()?;
        let tag = Self::mac(key, context, bytes).finalize().into_bytes();
        let mut out = Vec::with_capacity(bytes.len() + MAC_BYTES);
        out.extend_from_slice(bytes);
        out.extend_from_slice(&tag);
        Some(out)
    }

    /// The bytes of a sealed entry, if its trailer checks out for
    /// `context`.
    pub(crate) fn unseal<'a>(&self, context: &[u8], sealed: &'a [u8]) -> Option<&'a [u8]> {
        let key = self.key.as_ref()?;
        let split = sealed.len().checked_sub(MAC_BYTES)?;
        let (bytes, tag) = sealed.split_at(split);
        Self::mac(key, context, bytes).verify_slice(tag).ok()?;
        Some(bytes)
    }
}

/// How old a file's ctime must be before its identity is sealed: longer
/// than the tick of the clock file times are taken from.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(20);

/// How long ago `meta`'s ctime was (zero if in the future).
fn age(meta: &std::fs::Metadata) -> std::time::Duration {
    let ctime = std::time::UNIX_EPOCH
        + std::time::Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec() as u32);
    std::time::SystemTime::now()
        .duration_since(ctime)
        .unwrap_or_default()
}

/// Times the sealing of a new entry waits for its ctime to settle.
const SETTLE_TRIES: u32 = 10;

/// Largest cache entry read into memory to be checked: far above any
/// compiled component, and a bound on a planted sparse file.
const MAX_ENTRY_BYTES: u64 = 1 << 30;

/// The bytes of `file` (whose metadata is `meta`), if they are at most
/// [`MAX_ENTRY_BYTES`] and carry the `content` tag for `context`.
fn read_checked(
    mut file: std::fs::File,
    meta: &std::fs::Metadata,
    key: &[u8; 32],
    context: &[u8],
    content: &[u8],
) -> Option<Vec<u8>> {
    if meta.len() > MAX_ENTRY_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_ENTRY_BYTES + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Seal::mac(key, context, &bytes)
        .verify_slice(content)
        .ok()
        .map(|()| bytes)
}

/// Bytes of a sidecar: identity, content tag, sidecar tag.
const SIDECAR_BYTES: usize = FileIdentity::BYTES + MAC_BYTES + MAC_BYTES;

/// A sealed entry, opened and checked.
pub(crate) enum Opened {
    /// The file is the one sealed; map it through this descriptor's
    /// `/proc/self/fd` path.
    Unchanged(std::fs::File, PathBuf),
    /// The file was read and its bytes checked against the seal.
    Checked(Vec<u8>),
}

/// The sidecar of an entry.
fn sidecar(path: &Path) -> PathBuf {
    path.with_extension("seal")
}

impl Seal {
    /// The MAC binding a sidecar's identity and content tag to `context`.
    fn sidecar_mac(
        key: &[u8; 32],
        context: &[u8],
        identity: &[u8],
        content: &[u8],
    ) -> Hmac<Sha256> {
        let mut both = identity.to_vec();
        both.extend_from_slice(content);
        let mut ctx = b"sidecar:".to_vec();
        ctx.extend_from_slice(context);
        Self::mac(key, &ctx, &both)
    }

    fn write_sidecar(
        &self,
        key: &[u8; 32],
        path: &Path,
        context: &[u8],
        meta: &std::fs::Metadata,
        content: &[u8],
    ) -> std::io::Result<()> {
        let identity = FileIdentity::of(meta).to_bytes();
        let mut bytes = identity.to_vec();
        bytes.extend_from_slice(content);
        bytes.extend_from_slice(
            &Self::sidecar_mac(key, context, &identity, content)
                .finalize()
                .into_bytes(),
        );
        crate::files::write_atomic(&sidecar(path), &bytes)
    }

    /// Writes a mapped entry: the bytes to `path`, the seal beside it.
    /// Without a key nothing is written. The identity sealed is the one of
    /// the descriptor whose bytes were checked, once its ctime has settled,
    /// so a file swapped or edited before then is refused, not sealed.
    #[cfg_attr(
        not(feature = "compile"),
        expect(
            dead_code,
            reason = "without a compiler, the helper writes the entries"
        )
    )]
    pub(crate) fn write_entry(
        &self,
        path: &Path,
        context: &[u8],
        bytes: &[u8],
    ) -> std::io::Result<()> {
        let Some(key) = &self.key else {
            return Ok(());
        };
        crate::files::write_atomic(path, bytes)?;
        let content = Self::mac(key, context, bytes).finalize().into_bytes();
        for _ in 0..SETTLE_TRIES {
            let file = std::fs::File::open(path)?;
            let meta = file.metadata()?;
            let young = SETTLE.saturating_sub(age(&meta));
            if !young.is_zero() {
                std::thread::sleep(young);
                continue;
            }
            read_checked(file, &meta, key, context, &content)
                .ok_or_else(|| std::io::Error::other("the entry changed before it was sealed"))?;
            return self.write_sidecar(key, path, context, &meta, &content);
        }
        Err(std::io::Error::other(
            "the entry's ctime never settled (a clock in the future?); not sealed",
        ))
    }

    /// Opens a mapped entry and checks it against its seal; an error when
    /// there is no key, no seal, or a mismatch.
    pub(crate) fn open_entry(&self, path: &Path, context: &[u8]) -> std::io::Result<Opened> {
        let refuse = |why: &str| std::io::Error::other(format!("{}: {why}", path.display()));
        let key = self.key.as_ref().ok_or_else(|| refuse("no cache key"))?;
        let seal = std::fs::read(sidecar(path))?;
        if seal.len() != SIDECAR_BYTES {
            return Err(refuse("malformed seal"));
        }
        let (identity_then, rest) = seal.split_at(FileIdentity::BYTES);
        let (content, tag) = rest.split_at(MAC_BYTES);
        Self::sidecar_mac(key, context, identity_then, content)
            .verify_slice(tag)
            .map_err(|_| refuse("the seal does not match (edited, renamed or foreign)"))?;
        let file = std::fs::File::open(path)?;
        let meta = file.metadata()?;
        let by_descriptor = PathBuf::from(format!(
            "/proc/self/fd/{}",
            std::os::fd::AsRawFd::as_raw_fd(&file)
        ));
        // Mapped without hashing only if nobody but the key's owner could
        // have written it since (a write by anyone changes its identity;
        // a write by the owner could land after this check, but the owner
        // can read the key anyway).
        let private = Some(meta.uid()) == self.owner && meta.mode() & 0o022 == 0;
        if private
            && FileIdentity::of(&meta).to_bytes()[..] == *identity_then
            && by_descriptor.exists()
        {
            return Ok(Opened::Unchanged(file, by_descriptor));
        }
        let bytes = read_checked(file, &meta, key, context, content)
            .ok_or_else(|| refuse("the bytes do not match their seal"))?;
        // The same bytes under a new identity (copied, restored): seal it,
        // once it has settled.
        if private && age(&meta) >= SETTLE {
            self.write_sidecar(key, path, context, &meta, content)?;
        }
        Ok(Opened::Checked(bytes))
    }

    /// Deletes an entry and its seal.
    pub(crate) fn discard(path: &Path) {
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(sidecar(path));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What opening the entry at `path` as `context` came to.
    fn outcome(seal: &Seal, path: &Path, context: &[u8]) -> &'static str {
        match seal.open_entry(path, context) {
            Ok(Opened::Unchanged(..)) => "unchanged",
            Ok(Opened::Checked(_)) => "checked",
            Err(_) => "refused",
        }
    }

    #[test]
    fn a_sealed_entry_opens_only_for_its_own_context_and_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let seal = Seal::open(Some(&dir.path().join("cache.key")));
        let sealed = seal.seal(b"artifact-a", b"native code").unwrap();
        assert_eq!(
            seal.unseal(b"artifact-a", &sealed),
            Some(&b"native code"[..])
        );
        assert_eq!(seal.unseal(b"artifact-b", &sealed), None, "renamed entry");
        let mut flipped = sealed.clone();
        flipped[0] ^= 1;
        assert_eq!(seal.unseal(b"artifact-a", &flipped), None, "edited entry");
        assert_eq!(seal.unseal(b"artifact-a", b"short"), None);
    }

    #[test]
    fn the_key_is_private_and_shared_by_every_engine_of_the_home() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache.key");
        let first = Seal::open(Some(&path));
        let second = Seal::open(Some(&path));
        let sealed = first.seal(b"x", b"y").unwrap();
        assert_eq!(second.unseal(b"x", &sealed), Some(&b"y"[..]));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // Another home's key opens nothing of this one.
        let other = tempfile::tempdir().unwrap();
        let stranger = Seal::open(Some(&other.path().join("cache.key")));
        assert_eq!(stranger.unseal(b"x", &sealed), None);
    }

    #[test]
    fn an_entry_opens_unchanged_until_its_file_is_touched_then_only_if_its_bytes_match() {
        let dir = tempfile::tempdir().unwrap();
        let seal = Seal::open(Some(&dir.path().join("cache.key")));
        let path = dir.path().join("a.cwasm");
        seal.write_entry(&path, b"a", b"native code").unwrap();
        assert_eq!(outcome(&seal, &path, b"a"), "unchanged");
        assert!(
            seal.open_entry(&path, b"b").is_err(),
            "another entry's name"
        );
        // Rewritten with the same bytes: a new identity, checked, and
        // resealed once it has settled.
        std::fs::write(&path, b"native code").unwrap();
        assert!(
            matches!(seal.open_entry(&path, b"a"), Ok(Opened::Checked(b)) if b == b"native code")
        );
        std::thread::sleep(SETTLE);
        assert_eq!(outcome(&seal, &path, b"a"), "checked");
        assert_eq!(outcome(&seal, &path, b"a"), "unchanged");
        // Rewritten with other bytes: refused.
        std::fs::write(&path, b"other code!").unwrap();
        assert!(seal.open_entry(&path, b"a").is_err());
        // Replaced by another sealed entry's file: refused.
        let other = dir.path().join("b.cwasm");
        seal.write_entry(&other, b"b", b"more code").unwrap();
        std::fs::copy(&other, &path).unwrap();
        assert!(seal.open_entry(&path, b"a").is_err());
    }

    #[test]
    fn a_key_that_is_a_symlink_or_readable_by_others_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.key");
        std::fs::write(&real, [7u8; 32]).unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        let link = dir.path().join("cache.key");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(
            Seal::open(Some(&link)).seal(b"x", b"y").is_none(),
            "symlink"
        );
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(
            Seal::open(Some(&real)).seal(b"x", b"y").is_none(),
            "readable by others"
        );
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(Seal::open(Some(&real)).seal(b"x", b"y").is_some());
    }

    #[test]
    fn an_entry_others_may_write_is_always_hashed_and_an_oversized_one_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let seal = Seal::open(Some(&dir.path().join("cache.key")));
        let path = dir.path().join("a.cwasm");
        seal.write_entry(&path, b"a", b"native code").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        std::thread::sleep(SETTLE);
        assert_eq!(outcome(&seal, &path, b"a"), "checked");
        assert_eq!(outcome(&seal, &path, b"a"), "checked");
        // A sparse file past the bound is refused without being read.
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(MAX_ENTRY_BYTES + 1)
            .unwrap();
        assert!(seal.open_entry(&path, b"a").is_err());
    }
}
