//! A toolkit's `manifest.org`, read with an org-mode parser (orgize): the
//! file's `#+KEY:` keywords (the first of each name counts; names are
//! compared in upper case) and the first headline tagged `:toolkit:` with
//! its `:PROPERTIES:` drawer. The signed form of a manifest is its text
//! with every `#+SIGNATURE:` line left out, trailing spaces cut and line
//! ends made `\n`: a byte edited anywhere else breaks the signature.

use std::collections::BTreeMap;

/// The keywords and the `:toolkit:` node of a manifest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Manifest {
    /// `#+KEY:` values by upper-case name (the first of each).
    pub keywords: BTreeMap<String, String>,
    /// The `:toolkit:` node, if the file has one.
    pub node: Option<ToolkitNode>,
    /// The canonical text a signature covers.
    pub canonical: String,
}

/// The first headline tagged `:toolkit:`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolkitNode {
    /// Its headline text.
    pub title: String,
    /// Its drawer, by upper-case key.
    pub properties: BTreeMap<String, String>,
}

/// The domain the manifest signature is made in, so it can never be
/// taken for a signature of anything else.
pub const SIGNED_PREFIX: &str = "workbooks toolkit manifest v1\n";

impl Manifest {
    /// Reads `text`. Parsing never fails: what is missing is for
    /// [`verify`](crate::verify) to name.
    pub fn parse(text: &str) -> Self {
        let org = orgize::Org::parse(text);
        let mut keywords = BTreeMap::new();
        for k in org.keywords() {
            keywords
                .entry(k.key.to_ascii_uppercase())
                .or_insert_with(|| k.value.trim().to_string());
        }
        let node = org.headlines().find_map(|h| {
            let title = h.title(&org);
            title
                .tags
                .iter()
                .any(|t| t == "toolkit")
                .then(|| ToolkitNode {
                    title: title.raw.trim().to_string(),
                    properties: title
                        .properties
                        .iter()
                        .map(|(k, v)| (k.to_ascii_uppercase(), v.trim().to_string()))
                        .collect(),
                })
        });
        Self {
            keywords,
            node,
            canonical: canonical(text),
        }
    }

    /// The keyword `key` (upper case), when set and not empty.
    pub fn kw(&self, key: &str) -> Option<&str> {
        self.keywords
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// The drawer property `key` of the `:toolkit:` node.
    pub fn drawer(&self, key: &str) -> Option<&str> {
        self.node
            .as_ref()
            .and_then(|n| n.properties.get(key))
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// `#+CLI_BIN`, from the keyword or else the drawer.
    pub fn cli_bin(&self) -> Option<&str> {
        self.kw("CLI_BIN").or_else(|| self.drawer("CLI_BIN"))
    }

    /// `#+CAPS`, split on spaces.
    pub fn caps(&self) -> Vec<&str> {
        self.kw("CAPS")
            .map(|c| c.split_whitespace().collect())
            .unwrap_or_default()
    }

    /// The bytes a signature covers.
    pub fn signed_bytes(&self) -> Vec<u8> {
        [SIGNED_PREFIX.as_bytes(), self.canonical.as_bytes()].concat()
    }
}

/// Whether `line` is a `#+SIGNATURE:` keyword line.
pub(crate) fn is_signature_line(line: &str) -> bool {
    line.trim_start()
        .get(..12)
        .is_some_and(|p| p.eq_ignore_ascii_case("#+SIGNATURE:"))
}

/// The text without its signature lines, trailing spaces cut, `\n` line
/// ends, no trailing blank lines.
fn canonical(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !is_signature_line(l))
        .map(str::trim_end)
        .collect();
    let mut out = lines.join("\n");
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "#+TITLE: Text tools\n#+toolkit: text-tools\n#+CAPS: vfs  kv\n#+SIGNATURE: abc\n\n* Text tools :tools:toolkit:\n:PROPERTIES:\n:ID: text-tools\n:cli_bin: upper2\n:END:\nBody.\n#+TITLE: not the first\n";

    #[test]
    fn keywords_the_toolkit_node_and_its_drawer_are_read() {
        let m = Manifest::parse(TEXT);
        assert_eq!(m.kw("TITLE"), Some("Text tools"));
        assert_eq!(m.kw("TOOLKIT"), Some("text-tools"));
        assert_eq!(m.caps(), ["vfs", "kv"]);
        let node = m.node.as_ref().unwrap();
        assert_eq!(node.title, "Text tools");
        assert_eq!(m.drawer("ID"), Some("text-tools"));
        assert_eq!(m.cli_bin(), Some("upper2"));
        assert!(!m.canonical.contains("SIGNATURE"));
        assert!(m.canonical.ends_with("not the first\n"));
    }

    #[test]
    fn a_file_with_no_toolkit_node_or_no_keywords_still_parses() {
        let m = Manifest::parse("* Just a note\nsome text\n");
        assert!(m.node.is_none());
        assert!(m.keywords.is_empty());
        assert_eq!(
            Manifest::parse(""),
            Manifest {
                canonical: "\n".into(),
                ..Manifest::default()
            }
        );
    }
}
