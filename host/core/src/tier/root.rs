//! The root a container-tier child sees: nothing of the host but what the
//! child's program needs to start, read-only.
//!
//! For a statically linked program that is the program alone. For a
//! dynamically linked one it is also the directories holding its loader
//! (`PT_INTERP`) and the libraries it needs (`DT_NEEDED`, followed through
//! each library's own), found where the loader looks by default, plus the
//! host's top-level links to them (`/lib` → `usr/lib` on a merged-`/usr`
//! system). Then bubblewrap adds a private `/tmp`, `/dev` and `/proc`.
//!
//! Threat: a child that escaped its guest reads whatever its root holds.
//! Binding the host's whole root showed it the user's home, every file
//! beside the engine home and the home itself (every tenant's database,
//! the sealing key, the compile cache the engine maps as native code, the
//! daemon's socket). Here the root holds system libraries and the program;
//! no home, no `/root`, `/run`, `/var`, `/work`, `/etc` or data.

use object::read::elf::{FileHeader, ProgramHeader};
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// Libraries followed at most: a program needing more is refused rather
/// than walked without bound.
const MAX_LIBRARIES: usize = 256;

/// The top-level names a loader's paths go through, mirrored when the
/// host has them as links.
const TOP_LEVEL_LINKS: [&str; 4] = ["/lib", "/lib64", "/lib32", "/libx32"];

/// What of the host a child's root holds, read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Root {
    /// Directories bound at their own paths.
    pub(crate) dirs: Vec<PathBuf>,
    /// Links made in the sandbox: (target, link).
    pub(crate) links: Vec<(PathBuf, PathBuf)>,
}

/// The root `program` needs, worked out once per program file.
pub(crate) fn root_for(program: &Path) -> std::io::Result<Arc<Root>> {
    static ROOTS: OnceLock<Mutex<HashMap<PathBuf, Arc<Root>>>> = OnceLock::new();
    let roots = ROOTS.get_or_init(Default::default);
    if let Some(root) = roots.lock().unwrap_or_else(|p| p.into_inner()).get(program) {
        return Ok(root.clone());
    }
    let root = Arc::new(needed_by(program)?);
    roots
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(program.to_path_buf(), root.clone());
    Ok(root)
}

/// An ELF file's loader and the libraries it names.
fn dependencies(file: &Path) -> std::io::Result<(Option<PathBuf>, Vec<String>)> {
    let bad = |e: object::read::Error| {
        std::io::Error::other(format!("{}: not a readable ELF file: {e}", file.display()))
    };
    let opened = std::fs::File::open(file)?;
    let data = object::read::ReadCache::new(opened);
    let header = object::elf::FileHeader64::<object::Endianness>::parse(&data).map_err(bad)?;
    let endian = header.endian().map_err(bad)?;
    let mut interp = None;
    for segment in header.program_headers(endian, &data).map_err(bad)? {
        if let Some(path) = segment.interpreter(endian, &data).map_err(bad)? {
            interp = Some(PathBuf::from(String::from_utf8_lossy(path).into_owned()));
        }
    }
    let sections = header.sections(endian, &data).map_err(bad)?;
    let table = sections.dynamic_table(endian, &data).map_err(bad)?;
    let needed = table
        .iter()
        .filter(|d| d.tag == object::elf::DT_NEEDED)
        .filter_map(|d| table.string(d).ok())
        .map(|name| String::from_utf8_lossy(name).into_owned())
        .collect();
    Ok((interp, needed))
}

/// The directories the loader searches by default, after the loader's own.
fn search_dirs(loader_dir: Option<&Path>) -> Vec<PathBuf> {
    let triple = format!("{}-linux-gnu", std::env::consts::ARCH);
    let mut dirs: Vec<PathBuf> = loader_dir.map(Path::to_path_buf).into_iter().collect();
    for dir in [
        format!("/lib/{triple}"),
        format!("/usr/lib/{triple}"),
        "/lib64".into(),
        "/usr/lib64".into(),
        "/lib".into(),
        "/usr/lib".into(),
    ] {
        dirs.push(PathBuf::from(dir));
    }
    dirs
}

/// The root of `program`: see the module docs.
fn needed_by(program: &Path) -> std::io::Result<Root> {
    let (interp, mut pending) = dependencies(program)?;
    let Some(interp) = interp else {
        // Statically linked: nothing but the program itself.
        return Ok(Root::default());
    };
    let canonical_interp = interp.canonicalize()?;
    let dirs = search_dirs(canonical_interp.parent());
    let mut found = vec![interp];
    let mut seen = BTreeSet::new();
    while let Some(name) = pending.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if seen.len() > MAX_LIBRARIES {
            return Err(std::io::Error::other(format!(
                "{} needs more than {MAX_LIBRARIES} libraries",
                program.display()
            )));
        }
        let path = if name.contains('/') {
            Some(PathBuf::from(&name))
        } else {
            dirs.iter().map(|d| d.join(&name)).find(|p| p.is_file())
        };
        let Some(path) = path else {
            return Err(std::io::Error::other(format!(
                "{} needs {name}, which is in none of the loader's directories",
                program.display()
            )));
        };
        pending.extend(dependencies(&path)?.1);
        found.push(path);
    }
    let mut bound = BTreeSet::new();
    for path in &found {
        // The directory the loader names it by, and the one it lives in.
        if let Some(dir) = path.parent() {
            bound.insert(dir.canonicalize()?);
        }
        if let Some(dir) = path.canonicalize()?.parent() {
            bound.insert(dir.to_path_buf());
        }
    }
    let mut links = Vec::new();
    for top in TOP_LEVEL_LINKS {
        if let Ok(target) = std::fs::read_link(top) {
            links.push((target, PathBuf::from(top)));
        }
    }
    Ok(Root {
        dirs: bound.into_iter().collect(),
        links,
    })
}

/// Where a child's program sits in its root, whatever its path here: the
/// path of the host's copy names the host's directories.
pub(crate) const PROGRAM_INSIDE: &str = "/usr/libexec/workbooks/wbx";

/// The bubblewrap arguments that wrap a child `program`: every namespace
/// unshared (the network included, so the child reaches no interface but
/// its own loopback), a new session, no environment, and death with its
/// parent; its root built from `root` and the program (at
/// [`PROGRAM_INSIDE`]), read-only, with a private `/tmp`, `/dev` and
/// `/proc`; then each `(host, inside)` of `read_only` (replaced brokers,
/// read-only preopens) and each of `writable` (preopens granted writable)
/// at its own path.
pub(crate) fn bubblewrap_args(
    root: &Root,
    program: &Path,
    read_only: &[(&Path, &Path)],
    writable: &[&Path],
) -> Vec<OsString> {
    let mut args: Vec<OsString> = [
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    .into_iter()
    .map(Into::into)
    .collect();
    // A private /tmp of a fixed size: files in it are memory.
    args.extend([
        "--size".into(),
        crate::limits::CONTAINER_TMP_BYTES.to_string().into(),
        "--tmpfs".into(),
        "/tmp".into(),
    ]);
    let mut push = |flag: &str, from: &Path, to: &Path| {
        args.push(flag.into());
        args.push(from.into());
        args.push(to.into());
    };
    for (target, link) in &root.links {
        push("--symlink", target, link);
    }
    for dir in &root.dirs {
        push("--ro-bind", dir, dir);
    }
    push("--ro-bind", program, Path::new(PROGRAM_INSIDE));
    for (host, inside) in read_only {
        push("--ro-bind", host, inside);
    }
    for path in writable {
        push("--bind", path, path);
    }
    // The root itself (bubblewrap's own tmpfs) read-only too: nothing can
    // be made beside what was mounted; and /dev (another tmpfs, of no
    // size) too: its devices still read and write, but no file is made
    // there.
    args.extend([
        "--remount-ro".into(),
        "/dev".into(),
        "--remount-ro".into(),
        "/".into(),
    ]);
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dynamic_programs_root_holds_its_loader_and_libraries_and_no_home() {
        let exe = std::env::current_exe().unwrap();
        let root = needed_by(&exe).unwrap();
        assert!(!root.dirs.is_empty(), "a test binary links the C library");
        for dir in &root.dirs {
            let d = dir.display().to_string();
            assert!(d.starts_with("/lib") || d.starts_with("/usr/lib"), "{d}");
        }
        let args = bubblewrap_args(&root, &exe, &[], &[]);
        let text: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let bound: Vec<&String> = text
            .windows(2)
            .filter(|w| w[0] == "--ro-bind" || w[0] == "--bind")
            .map(|w| &w[1])
            .collect();
        assert!(!bound.is_empty());
        for source in bound {
            assert_ne!(source, "/", "the host root is bound: {text:?}");
            for forbidden in ["/home", "/root", "/run", "/var", "/etc"] {
                assert!(!source.starts_with(forbidden), "{source}: {text:?}");
            }
        }
        assert!(text.ends_with(&["--remount-ro".to_string(), "/".to_string()]));
    }

    #[test]
    fn what_is_not_an_elf_file_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("spy");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        let err = needed_by(&script).unwrap_err().to_string();
        assert!(err.contains("not a readable ELF file"), "{err}");
    }
}
