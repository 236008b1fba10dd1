//! Where the host keeps signing secrets: keys given in engine configuration
//! (memory only) and keys set with `wbx secret set` (in
//! `<home>/secrets/<tenant>.json`, file mode 0600, in a directory kept at
//! 0700). Keys never leave this module except into a signing function;
//! [`Secret`]'s `Debug` is redacted so a key cannot reach a log line by
//! accident.
//!
//! Writing a tenant's file: under an exclusive lock on
//! `<tenant>.lock` (so two `secret set` calls, in any processes, cannot
//! lose each other's update), the current file is read, the new content is
//! written to a temporary file created exclusively (`O_EXCL`: never an
//! existing file, never through a symlink someone planted) with mode 0600
//! from the start, synced, and renamed over the old one.

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// The folder of an engine home that holds `wbx secret set` keys.
pub const SECRETS_DIR: &str = "secrets";

/// What a secret signs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SecretKind {
    /// HMAC-SHA256 with arbitrary key bytes.
    Hmac,
    /// Ed25519 with a 32-byte seed.
    Ed25519,
    /// A token (an API key): never signed with, never handed to a guest;
    /// the host adds it to requests its bindings name
    /// ([`super::egress`]).
    Token,
}

impl SecretKind {
    /// Parses `hmac`, `ed25519` or `token`.
    pub fn parse(s: &str) -> Option<SecretKind> {
        match s {
            "hmac" => Some(SecretKind::Hmac),
            "ed25519" => Some(SecretKind::Ed25519),
            "token" => Some(SecretKind::Token),
            _ => None,
        }
    }
}

/// A secret key. Its bytes are only ever used to sign, or, for a token,
/// added by the host to the requests its bindings name.
#[derive(Clone, Serialize, Deserialize)]
pub struct Secret {
    kind: SecretKind,
    #[serde(with = "hex_bytes")]
    key: Vec<u8>,
    /// Where the host adds a token (`wbx secret bind`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) bindings: Vec<super::egress::Binding>,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Secret({:?}, <{} bytes redacted>)",
            self.kind,
            self.key.len()
        )
    }
}

mod hex_bytes {
    pub fn serialize<S: serde::Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&hex::encode(b))
    }
    pub fn deserialize<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s: String = serde::Deserialize::deserialize(d)?;
        hex::decode(s).map_err(serde::de::Error::custom)
    }
}

/// Why a secret could not be made or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretError {
    /// An ed25519 secret needs a 32-byte seed.
    #[error("an ed25519 secret is a 32-byte seed, got {0} bytes")]
    BadSeed(usize),
    /// An hmac secret needs at least one byte.
    #[error("an hmac secret cannot be empty")]
    Empty,
    /// A token is sent in a header: printable ASCII, no space.
    #[error("a token is 1 to 4096 printable ASCII characters without spaces")]
    BadToken,
    /// The operation needs the other kind.
    #[error("secret is {0:?}")]
    WrongKind(SecretKind),
}

impl Secret {
    /// A secret of `kind` from `key` bytes (a 32-byte seed for ed25519).
    pub fn new(kind: SecretKind, key: Vec<u8>) -> Result<Secret, SecretError> {
        match kind {
            SecretKind::Ed25519 if key.len() != 32 => Err(SecretError::BadSeed(key.len())),
            SecretKind::Hmac if key.is_empty() => Err(SecretError::Empty),
            SecretKind::Token
                if key.is_empty()
                    || key.len() > 4096
                    || !key.iter().all(|b| (0x21..=0x7e).contains(b)) =>
            {
                Err(SecretError::BadToken)
            }
            _ => Ok(Secret {
                kind,
                key,
                bindings: Vec::new(),
            }),
        }
    }

    /// A fresh random secret of `kind` (32 bytes).
    pub fn generate(kind: SecretKind) -> Result<Secret, getrandom::Error> {
        let mut key = vec![0u8; 32];
        getrandom::fill(&mut key)?;
        if kind == SecretKind::Token {
            key = hex::encode(&key).into_bytes();
        }
        Ok(Secret {
            kind,
            key,
            bindings: Vec::new(),
        })
    }

    /// The kind.
    pub fn kind(&self) -> SecretKind {
        self.kind
    }

    /// A token's bytes and bindings, for the egress; `None` for a key
    /// that signs.
    pub(super) fn token(&self) -> Option<(&[u8], &[super::egress::Binding])> {
        (self.kind == SecretKind::Token).then_some((&self.key, &self.bindings))
    }

    /// HMAC-SHA256 of `data`.
    pub fn hmac_sha256(&self, data: &[u8]) -> Result<Vec<u8>, SecretError> {
        if self.kind != SecretKind::Hmac {
            return Err(SecretError::WrongKind(self.kind));
        }
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).map_err(|_| SecretError::Empty)?;
        mac.update(data);
        Ok(mac.finalize().into_bytes().to_vec())
    }

    fn signing_key(&self) -> Result<ed25519_dalek::SigningKey, SecretError> {
        if self.kind != SecretKind::Ed25519 {
            return Err(SecretError::WrongKind(self.kind));
        }
        let seed: [u8; 32] = self
            .key
            .as_slice()
            .try_into()
            .map_err(|_| SecretError::BadSeed(self.key.len()))?;
        Ok(ed25519_dalek::SigningKey::from_bytes(&seed))
    }

    /// An Ed25519 signature of `data`.
    pub fn ed25519_sign(&self, data: &[u8]) -> Result<Vec<u8>, SecretError> {
        use ed25519_dalek::Signer;
        Ok(self.signing_key()?.sign(data).to_bytes().to_vec())
    }

    /// The Ed25519 public key.
    pub fn ed25519_public_key(&self) -> Result<Vec<u8>, SecretError> {
        Ok(self.signing_key()?.verifying_key().to_bytes().to_vec())
    }
}

/// A tenant's secrets file as last read, with the (mtime, length, inode)
/// it had; `wbx secret set` replaces the file, so all three move.
type FileSecrets = (
    Option<(SystemTime, u64, u64)>,
    Arc<BTreeMap<String, Secret>>,
);

/// The host's secrets, by tenant and name.
#[derive(Debug, Default)]
pub struct Keyring {
    dir: Option<PathBuf>,
    configured: HashMap<(String, String), Secret>,
    /// Parsed files, reread only when `wbx secret set` (any process) has
    /// changed them: a signature costs a stat, not a parse.
    files: Mutex<HashMap<String, FileSecrets>>,
}

impl Keyring {
    /// A keyring reading `<dir>/<tenant>.json`, plus `configured` keys.
    pub fn new(dir: Option<PathBuf>, configured: HashMap<(String, String), Secret>) -> Self {
        Self {
            dir,
            configured,
            files: Mutex::default(),
        }
    }

    fn file(&self, tenant: &str) -> Option<PathBuf> {
        crate::storage::validate_name("tenant", tenant).ok()?;
        Some(self.dir.as_ref()?.join(format!("{tenant}.json")))
    }

    pub(super) fn read(&self, tenant: &str) -> Arc<BTreeMap<String, Secret>> {
        let Some(file) = self.file(tenant) else {
            return Arc::default();
        };
        let stamp = std::fs::metadata(&file)
            .ok()
            .and_then(|m| Some((m.modified().ok()?, m.len(), m.ino())));
        let mut files = self.files.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((seen, secrets)) = files.get(tenant)
            && *seen == stamp
        {
            return secrets.clone();
        }
        let secrets: Arc<BTreeMap<String, Secret>> = Arc::new(
            std::fs::read(&file)
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok())
                .unwrap_or_default(),
        );
        files.insert(tenant.to_string(), (stamp, secrets.clone()));
        secrets
    }

    /// The secret `name` of `tenant`.
    pub fn get(&self, tenant: &str, name: &str) -> Option<Secret> {
        if let Some(s) = self.configured.get(&(tenant.to_string(), name.to_string())) {
            return Some(s.clone());
        }
        self.read(tenant).get(name).cloned()
    }

    /// The names and kinds of `tenant`'s secrets (never their bytes).
    pub fn names(&self, tenant: &str) -> Vec<(String, SecretKind)> {
        let mut names: Vec<(String, SecretKind)> = self
            .read(tenant)
            .iter()
            .map(|(n, s)| (n.clone(), s.kind))
            .chain(
                self.configured
                    .iter()
                    .filter(|((t, _), _)| t == tenant)
                    .map(|((_, n), s)| (n.clone(), s.kind)),
            )
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// Stores `secret` as `name` for `tenant` in the home. A token set
    /// over a token keeps its bindings (a rotation).
    pub fn set(&self, tenant: &str, name: &str, mut secret: Secret) -> std::io::Result<()> {
        self.change(tenant, name, |all| {
            if let Some(old) = all.get(name)
                && old.kind == SecretKind::Token
                && secret.kind == SecretKind::Token
            {
                secret.bindings = old.bindings.clone();
            }
            all.insert(name.to_string(), secret);
            Ok(())
        })
    }

    /// The secret `name` of `tenant`; when it has none, one made by `make`
    /// and stored first. Under the tenant's file lock, so two callers
    /// never store two different secrets.
    pub(crate) fn get_or_insert_with(
        &self,
        tenant: &str,
        name: &str,
        make: impl FnOnce() -> std::io::Result<Secret>,
    ) -> std::io::Result<Secret> {
        if let Some(s) = self.get(tenant, name) {
            return Ok(s);
        }
        self.change(tenant, name, |all| {
            if let Some(s) = all.get(name) {
                return Ok(s.clone());
            }
            let s = make()?;
            all.insert(name.to_string(), s.clone());
            Ok(s)
        })
    }

    /// `tenant`'s Ed25519 secret `name` with its public key, made on first
    /// use; an error names why (a stored secret of `name` of another kind).
    pub fn ed25519_key(&self, tenant: &str, name: &str) -> Result<(Secret, [u8; 32]), String> {
        let secret = self
            .get_or_insert_with(tenant, name, || {
                Secret::generate(SecretKind::Ed25519)
                    .map_err(|e| std::io::Error::other(e.to_string()))
            })
            .map_err(|e| e.to_string())?;
        let public = secret
            .ed25519_public_key()
            .map_err(|e| format!("{e} (the secret `{name}` must be an ed25519 key)"))?;
        let public: [u8; 32] = public
            .try_into()
            .map_err(|_| "not a 32-byte public key".to_string())?;
        Ok((secret, public))
    }

    /// Applies `f` to `tenant`'s stored secrets under its file lock and
    /// writes them back.
    pub(super) fn change<R>(
        &self,
        tenant: &str,
        name: &str,
        f: impl FnOnce(&mut BTreeMap<String, Secret>) -> std::io::Result<R>,
    ) -> std::io::Result<R> {
        use std::os::unix::fs::PermissionsExt;
        let file = self
            .file(tenant)
            .ok_or_else(|| std::io::Error::other("invalid tenant or no home for secrets"))?;
        if name.is_empty() || name.len() > 128 {
            return Err(std::io::Error::other("a secret name is 1 to 128 bytes"));
        }
        let dir = file
            .parent()
            .ok_or_else(|| std::io::Error::other("no directory for secrets"))?;
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let lock = crate::files::lock_exclusive(&dir.join(format!("{tenant}.lock")))?;
        let mut all: BTreeMap<String, Secret> = match std::fs::read(&file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                std::io::Error::other(format!(
                    "{} is not a secrets file ({e}); not overwriting it",
                    file.display()
                ))
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(e),
        };
        let got = f(&mut all)?;
        let bytes = serde_json::to_vec_pretty(&all).map_err(std::io::Error::other)?;
        let tmp = crate::files::write_private_temp(dir, tenant, &bytes)?;
        let written = std::fs::rename(&tmp, &file);
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written?;
        drop(lock);
        self.files
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(tenant);
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_that_could_break_a_header_is_refused_and_is_never_signed_with() {
        for bad in [&b""[..], b"has space", b"line\r\nX-Evil: 1", b"\x00"] {
            assert!(
                matches!(
                    Secret::new(SecretKind::Token, bad.to_vec()),
                    Err(SecretError::BadToken)
                ),
                "{bad:?}"
            );
        }
        let token = Secret::new(SecretKind::Token, b"tok-1".to_vec()).unwrap();
        assert!(token.hmac_sha256(b"x").is_err());
        assert!(token.ed25519_sign(b"x").is_err());
        assert!(!format!("{token:?}").contains("tok-1"));
    }

    #[test]
    fn get_or_insert_with_makes_one_secret_however_many_callers_race() {
        let dir = tempfile::tempdir().unwrap();
        let ring =
            std::sync::Arc::new(Keyring::new(Some(dir.path().to_path_buf()), HashMap::new()));
        let made = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let keys: Vec<Vec<u8>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let (ring, made) = (ring.clone(), made.clone());
                    s.spawn(move || {
                        let secret = ring
                            .get_or_insert_with("acme", "ledger", || {
                                made.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                                Secret::generate(SecretKind::Ed25519)
                                    .map_err(|e| std::io::Error::other(e.to_string()))
                            })
                            .unwrap();
                        secret.ed25519_public_key().unwrap()
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(keys.windows(2).all(|w| w[0] == w[1]), "two keys were made");
        assert_eq!(made.load(std::sync::atomic::Ordering::SeqCst), 1);
        // A stored secret is returned, never replaced.
        let again = ring
            .get_or_insert_with("acme", "ledger", || {
                Err(std::io::Error::other("not called"))
            })
            .unwrap();
        assert_eq!(again.ed25519_public_key().unwrap(), keys[0]);
    }

    #[test]
    fn hmac_matches_the_rfc_4231_test_case_2() {
        let s = Secret::new(SecretKind::Hmac, b"Jefe".to_vec()).unwrap();
        let mac = s.hmac_sha256(b"what do ya want for nothing?").unwrap();
        assert_eq!(
            hex::encode(mac),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn ed25519_matches_the_rfc_8032_test_vector_1() {
        let seed = hex::decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
            .unwrap();
        let s = Secret::new(SecretKind::Ed25519, seed).unwrap();
        assert_eq!(
            hex::encode(s.ed25519_public_key().unwrap()),
            "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
        );
        assert_eq!(
            hex::encode(s.ed25519_sign(b"").unwrap()),
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        );
    }

    #[test]
    fn debug_output_never_shows_key_bytes() {
        let s = Secret::new(SecretKind::Hmac, b"hunter2-hunter2".to_vec()).unwrap();
        let shown = format!("{s:?}");
        assert!(!shown.contains("hunter2") && !shown.contains(&hex::encode("hunter2")));
        assert!(
            Secret::new(SecretKind::Hmac, vec![1])
                .unwrap()
                .ed25519_sign(b"x")
                .is_err()
        );
    }

    #[test]
    fn a_key_replaced_by_another_keyring_is_the_one_signed_with() {
        let dir = tempfile::tempdir().unwrap();
        let writer = Keyring::new(Some(dir.path().into()), HashMap::new());
        let reader = Keyring::new(Some(dir.path().into()), HashMap::new());
        let sign = |k: &Keyring| k.get("acme", "mac").unwrap().hmac_sha256(b"x").unwrap();
        for key in [&b"first key"[..], b"second", b"third!"] {
            let secret = Secret::new(SecretKind::Hmac, key.to_vec()).unwrap();
            let expected = secret.hmac_sha256(b"x").unwrap();
            writer.set("acme", "mac", secret).unwrap();
            assert_eq!(sign(&reader), expected, "stale key after a set");
        }
    }

    #[test]
    fn a_planted_temp_symlink_and_a_loose_mode_change_nothing_outside() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("secrets");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The names the old writer used, prepared by an attacker.
        let outside = root.path().join("outside.txt");
        std::fs::write(&outside, "untouched").unwrap();
        std::os::unix::fs::symlink(&outside, dir.join("acme.tmp")).unwrap();
        std::fs::write(dir.join("acme.json"), "{}").unwrap();
        std::fs::set_permissions(
            dir.join("acme.json"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let k = Keyring::new(Some(dir.clone()), HashMap::new());
        k.set("acme", "mac", Secret::generate(SecretKind::Hmac).unwrap())
            .unwrap();
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "untouched");
        let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir.join("acme.json")), 0o600);
        assert_eq!(mode(&dir), 0o700);
        assert!(k.get("acme", "mac").is_some());
    }

    #[test]
    fn concurrent_sets_from_separate_keyrings_lose_no_update() {
        let dir = tempfile::tempdir().unwrap();
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let dir = dir.path().to_path_buf();
                std::thread::spawn(move || {
                    let k = Keyring::new(Some(dir), HashMap::new());
                    for i in 0..10 {
                        let s = Secret::new(SecretKind::Hmac, vec![t as u8 + 1; 8]).unwrap();
                        k.set("acme", &format!("key-{t}-{i}"), s).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let k = Keyring::new(Some(dir.path().into()), HashMap::new());
        assert_eq!(k.names("acme").len(), 80);
    }

    #[test]
    fn a_corrupt_secrets_file_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("acme.json"), "not json").unwrap();
        let k = Keyring::new(Some(dir.path().into()), HashMap::new());
        let e = k
            .set("acme", "mac", Secret::generate(SecretKind::Hmac).unwrap())
            .unwrap_err();
        assert!(e.to_string().contains("not a secrets file"), "{e}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("acme.json")).unwrap(),
            "not json"
        );
    }

    #[test]
    fn stored_secrets_are_per_tenant_and_private_to_the_owner() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let k = Keyring::new(Some(dir.path().into()), HashMap::new());
        k.set(
            "acme",
            "signer",
            Secret::generate(SecretKind::Ed25519).unwrap(),
        )
        .unwrap();
        assert!(k.get("acme", "signer").is_some());
        assert!(k.get("other", "signer").is_none());
        let mode = std::fs::metadata(dir.path().join("acme.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
