//! Finding toolkits and reading their skills.
//!
//! Threat: the toolkits root is an unauthenticated, writable folder, so
//! what is in it is untrusted input. Reading it is open; nothing here runs
//! anything. A toolkit id and a skill slug are `^[A-Za-z0-9._-]+$` (never
//! `.` or `..`), a skill resolves strictly inside its toolkit's `skills/`
//! (a link out is refused), and links standing where a toolkit folder or a
//! manifest should be are not followed.

use super::ToolkitError;
use crate::manifest::Manifest;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Skill names the agent's prompt carries per toolkit.
pub const INJECTED_SKILLS: usize = 8;

/// Bytes of a manifest or skill read.
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The root a process finds toolkits in: `WB_TOOLKITS_ROOT` only when it
/// names an existing folder, else the first of `toolkits/` and
/// `../toolkits` under `cwd` that exists.
pub fn default_root(env: Option<&str>, cwd: &Path) -> Option<PathBuf> {
    if let Some(root) = env.filter(|r| !r.is_empty()).map(PathBuf::from)
        && root.is_dir()
    {
        return Some(root);
    }
    ["toolkits", "../toolkits"]
        .iter()
        .map(|r| cwd.join(r))
        .find(|r| r.is_dir())
}

/// Whether `name` may be a toolkit id or a skill slug.
pub fn is_slug(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A file's text, read through no link, at most [`MAX_FILE_BYTES`].
fn read_text(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = String::new();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?
        .take(MAX_FILE_BYTES)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// One toolkit folder.
#[derive(Debug, Clone)]
pub struct Toolkit {
    /// Its id: the folder's name.
    pub id: String,
    /// The folder.
    pub dir: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// Why the operator vouches for it as first-party, if it does (see
    /// [`crate::standing`]).
    pub vouched: Option<String>,
}

impl Toolkit {
    /// The toolkit in `dir`, when it holds a readable `manifest.org`.
    fn open(dir: PathBuf) -> Option<Self> {
        let id = dir.file_name()?.to_str()?.to_string();
        if !is_slug(&id)
            || std::fs::symlink_metadata(&dir)
                .ok()?
                .file_type()
                .is_symlink()
        {
            return None;
        }
        let text = read_text(&dir.join("manifest.org")).ok()?;
        Some(Self {
            id,
            dir,
            manifest: Manifest::parse(&text),
            vouched: None,
        })
    }

    /// The manifest's tagline.
    pub fn tagline(&self) -> &str {
        self.manifest.kw("TAGLINE").unwrap_or("")
    }

    /// Its skills: the slugs of `skills/<slug>.org`, sorted.
    pub fn skills(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.dir.join("skills")) else {
            return Vec::new();
        };
        let mut slugs: Vec<String> = entries
            .filter_map(|e| {
                let name = e.ok()?.file_name().into_string().ok()?;
                let slug = name.strip_suffix(".org")?.to_string();
                is_slug(&slug).then_some(slug)
            })
            .collect();
        slugs.sort();
        slugs
    }

    /// The text of skill `slug`, resolved strictly inside `skills/`.
    pub fn skill(&self, slug: &str) -> Result<String, ToolkitError> {
        let refused = || ToolkitError::BadSkill(slug.chars().take(64).collect());
        if !is_slug(slug) {
            return Err(refused());
        }
        let skills = self
            .dir
            .join("skills")
            .canonicalize()
            .map_err(|_| refused())?;
        let at = skills.join(format!("{slug}.org"));
        let resolved = at.canonicalize().map_err(|_| ToolkitError::NoSkill {
            toolkit: self.id.clone(),
            skill: slug.to_string(),
        })?;
        if resolved.parent() != Some(skills.as_path()) {
            return Err(refused());
        }
        read_text(&resolved).map_err(|_| refused())
    }
}

/// The toolkits under one root.
#[derive(Debug, Clone, Default)]
pub struct Toolkits {
    root: Option<PathBuf>,
    vouch: crate::standing::Vouch,
}

impl Toolkits {
    /// The toolkits under `root` (none when `None`), none of them vouched
    /// for as first-party.
    pub fn new(root: Option<PathBuf>) -> Self {
        Self {
            root,
            vouch: Default::default(),
        }
    }

    /// The toolkits this process finds: under `WB_TOOLKITS_ROOT` when it
    /// names a folder, else `toolkits/` or `../toolkits` under the current
    /// directory ([`default_root`]); first-party where the operator vouches
    /// ([`Vouch::from_env`](super::Vouch::from_env)).
    pub fn from_env() -> Self {
        Self::at_or_from_env(None)
    }

    /// The toolkits under `root`, else [`Toolkits::from_env`]'s.
    pub fn at_or_from_env(root: Option<PathBuf>) -> Self {
        let root = root.or_else(|| {
            let env = std::env::var("WB_TOOLKITS_ROOT").ok();
            let cwd = std::env::current_dir().unwrap_or_default();
            default_root(env.as_deref(), &cwd)
        });
        Self::new(root).vouched(crate::standing::Vouch::from_env())
    }

    /// The same, with what the operator vouches for as first-party.
    pub fn vouched(mut self, vouch: crate::standing::Vouch) -> Self {
        self.vouch = vouch;
        self
    }

    /// What the operator vouches for.
    pub fn vouch(&self) -> &crate::standing::Vouch {
        &self.vouch
    }

    /// `tk` with the operator's word on it.
    fn judged(&self, mut tk: Toolkit) -> Toolkit {
        tk.vouched = self.vouch.covers(&tk);
        tk
    }

    /// The root, if any.
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Every toolkit, by id.
    pub fn list(&self) -> Vec<Toolkit> {
        let Some(Ok(entries)) = self.root.as_ref().map(std::fs::read_dir) else {
            return Vec::new();
        };
        let mut all: Vec<Toolkit> = entries
            .filter_map(|e| Toolkit::open(e.ok()?.path()))
            .map(|tk| self.judged(tk))
            .collect();
        all.sort_by(|a, b| a.id.cmp(&b.id));
        all
    }

    /// The toolkit `id`.
    pub fn get(&self, id: &str) -> Result<Toolkit, ToolkitError> {
        let unknown = || ToolkitError::Unknown(id.chars().take(64).collect());
        if !is_slug(id) {
            return Err(unknown());
        }
        let root = self.root.as_ref().ok_or_else(unknown)?;
        Toolkit::open(root.join(id))
            .map(|tk| self.judged(tk))
            .ok_or_else(unknown)
    }

    /// The toolkits an agent names, in its order; unknown names dropped.
    pub fn for_agent(&self, names: &[String]) -> Vec<Toolkit> {
        names.iter().filter_map(|n| self.get(n).ok()).collect()
    }

    /// What an agent's prompt carries of its toolkits: one line each, and
    /// up to [`INJECTED_SKILLS`] skill names; empty when it names none
    /// that exist.
    pub fn injection_text(&self, names: &[String]) -> String {
        let kits = self.for_agent(names);
        if kits.is_empty() {
            return String::new();
        }
        let mut out = String::from(
            "Toolkits you can use (read a skill with the wb tool: `toolkit show <id> <skill>`):",
        );
        for tk in &kits {
            let cli = tk
                .manifest
                .cli_bin()
                .map_or(String::new(), |c| format!(" [command `{c}`]"));
            out.push_str(&format!("\n- {}{cli}: {}", tk.id, tk.tagline()));
            let skills = tk.skills();
            if !skills.is_empty() {
                let shown: Vec<&str> = skills
                    .iter()
                    .take(INJECTED_SKILLS)
                    .map(String::as_str)
                    .collect();
                out.push_str(&format!("\n  skills: {}", shown.join(", ")));
            }
        }
        out
    }
}
