//! Normalising vfs paths: the one place a guest-supplied path becomes a
//! storage key.
//!
//! Threat: a guest (or an embedder passing guest-derived text) naming a
//! file outside its own volume: `../other`, `/etc/passwd`, a NUL that
//! truncates the key in some later layer, a path long enough to hurt. The
//! rule is strict rather than clever: relative paths only, `..` refused
//! outright (even where it would stay inside), no NUL, no control
//! characters, no backslash, bounded length and depth. `.` segments and
//! repeated or trailing slashes are dropped.

use super::{VFS_MAX_DEPTH, VFS_MAX_PATH_BYTES, VFS_MAX_SEGMENT_BYTES};

/// Returns the canonical form of `path` (segments joined by `/`), or why it
/// was refused. `""` (the volume root) is accepted only when `allow_root`.
pub fn normalize(path: &str, allow_root: bool) -> Result<String, String> {
    if path.len() > VFS_MAX_PATH_BYTES {
        return Err(format!("longer than {VFS_MAX_PATH_BYTES} bytes"));
    }
    if path.starts_with('/') {
        return Err("absolute path".into());
    }
    if let Some(c) = path
        .chars()
        .find(|c| *c == '\0' || *c == '\\' || c.is_control())
    {
        return Err(match c {
            '\0' => "contains NUL".into(),
            '\\' => "contains a backslash".into(),
            other => format!("contains control character U+{:04X}", other as u32),
        });
    }
    let mut segments = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => continue,
            ".." => return Err("contains a `..` segment".into()),
            s if s.len() > VFS_MAX_SEGMENT_BYTES => {
                return Err(format!(
                    "a segment is longer than {VFS_MAX_SEGMENT_BYTES} bytes"
                ));
            }
            s => segments.push(s),
        }
    }
    if segments.len() > VFS_MAX_DEPTH {
        return Err(format!("deeper than {VFS_MAX_DEPTH} segments"));
    }
    if segments.is_empty() && !allow_root {
        return Err("empty path".into());
    }
    Ok(segments.join("/"))
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn escape_attempts_are_refused_with_a_reason() {
        let cases = [
            ("../x", "`..`"),
            ("a/../../x", "`..`"),
            ("a/..", "`..`"),
            ("/etc/passwd", "absolute"),
            ("//x", "absolute"),
            ("a\0b", "NUL"),
            ("a\\..\\b", "backslash"),
            ("a\nb", "control"),
            ("", "empty"),
            ("./.", "empty"),
        ];
        for (path, why) in cases {
            let err = normalize(path, false).unwrap_err();
            assert!(err.contains(why), "{path:?}: {err}");
        }
        let long = "a/".repeat(600);
        assert!(normalize(&long, false).unwrap_err().contains("longer"));
        let deep = "a/".repeat(33);
        assert!(normalize(&deep, false).unwrap_err().contains("deeper"));
        let wide = "x".repeat(256);
        assert!(normalize(&wide, false).unwrap_err().contains("segment"));
    }

    #[test]
    fn harmless_forms_are_canonicalised() {
        assert_eq!(normalize("a//b/./c/", false).unwrap(), "a/b/c");
        assert_eq!(normalize("./notes.md", false).unwrap(), "notes.md");
        assert_eq!(normalize("", true).unwrap(), "");
        assert_eq!(
            normalize("dir/with space/ü.txt", false).unwrap(),
            "dir/with space/ü.txt"
        );
    }
}
