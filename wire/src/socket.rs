//! Where the daemon of a home listens, and who may answer there.
//!
//! Threat: the socket used to be `<home>/daemon.sock`, and a home can be
//! anyone's (a shared checkout, a tarball, a directory another user can
//! write): whoever could put a socket there received every line, its
//! stdin and its `--env` values. So the socket lives in the user's own
//! runtime directory (`$XDG_RUNTIME_DIR/workbooks/`, else
//! `/tmp/workbooks-<uid>/`), made mode 0700 and refused unless it is a
//! directory of the user's that no one else may enter, named by the
//! sha256 of the home's canonical path. And a client sends nothing before
//! it has checked that the process listening is its own user's
//! (`SO_PEERCRED`).

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// The directory daemon sockets live in for this user, when it is safe to
/// use: a directory (not a link) of this user's, closed to everyone else.
/// `make` creates it (mode 0700) when missing.
pub fn socket_dir(make: bool) -> io::Result<PathBuf> {
    let uid = rustix::process::geteuid().as_raw();
    let dir = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(runtime) => PathBuf::from(runtime).join("workbooks"),
        None => std::env::temp_dir().join(format!("workbooks-{uid}")),
    };
    if make {
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    let meta = std::fs::symlink_metadata(&dir)?;
    if !meta.file_type().is_dir() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(io::Error::other(format!(
            "{} must be a directory of your own (uid {uid}) that no one else may enter (mode 0700); remove it and it is made again",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The socket of the daemon serving `home`, in [`socket_dir`].
pub fn socket_path(home: &Path, make_dir: bool) -> io::Result<PathBuf> {
    socket_path_in(&socket_dir(make_dir)?, home)
}

/// The socket of the daemon serving `home`, in `dir`: named by the sha256
/// of the home's canonical path.
pub fn socket_path_in(dir: &Path, home: &Path) -> io::Result<PathBuf> {
    let canonical = home.canonicalize()?;
    let digest = {
        use sha2::Digest as _;
        hex::encode(sha2::Sha256::digest(
            canonical.as_os_str().as_encoded_bytes(),
        ))
    };
    Ok(dir.join(format!("daemon-{}.sock", &digest[..32])))
}

/// Whether the process at the other end of `stream` runs as this user.
pub fn peer_is_me(stream: &UnixStream) -> bool {
    rustix::net::sockopt::socket_peercred(stream)
        .is_ok_and(|cred| cred.uid == rustix::process::geteuid())
}
