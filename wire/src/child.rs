//! The request a parent engine sends the child process that runs one
//! command or plugin for it (the `os_process` and `container` tiers).
//!
//! The parent starts the child binary with [`CHILD_ARGV`] and nothing
//! else on its command line. It writes one frame on the child's stdin,
//! tagged [`CHILD_REQUEST`], holding a [`ChildRequest`] as JSON; what
//! follows on stdin is the guest's stdin (or the plugin's input). The
//! child answers on its stdout, in frames of the same format: the guest's
//! stdout ([`STDOUT`]), its stderr ([`STDERR`]), then the engine's
//! [`Verdict`] ([`VERDICT`], JSON), written by [`write_answer`]. Guest
//! bytes only ever travel inside a frame the child sized, so nothing a
//! guest prints can pass for a verdict. (The parent's reader, which holds
//! each stream to the engine's output cap, is the core's
//! `commands::frames::read`.)
//!
//! One typed request, not a command line: the parent no longer spells a
//! CLI's flags, so any binary that calls the core's `child::run` is a
//! child (`wbx`, the core's own `workbooks-child`), and a field cannot be
//! misread as another (a preopen's host path may hold `::`).
//!
//! Threat: a request from a parent of another build, or a forged one. A
//! child refuses a request whose [`ChildRequest::protocol`] is not its
//! own [`CHILD_PROTOCOL`], and one with a field it does not know, by name,
//! rather than run what it would read differently. What the request
//! grants is no more than the parent's own grant: the child is the same
//! user, and re-checks the bytes it runs against the sha256 named here.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The version of [`ChildRequest`]; raised whenever a field changes
/// meaning, so a child and a parent of different builds refuse each
/// other rather than disagree.
pub const CHILD_PROTOCOL: u32 = 3;

/// The arguments a child binary is started with, and the only ones.
pub const CHILD_ARGV: [&str; 2] = ["exec", "--framed"];

/// The tag of the request's frame on the child's stdin.
pub const CHILD_REQUEST: u8 = b'C';

/// What a parent asks of its child.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildRequest {
    /// [`CHILD_PROTOCOL`] of the parent's build.
    pub protocol: u32,
    /// The home the child's engine opens: the parent's own (`os_process`)
    /// or a private one (`container`).
    pub home: PathBuf,
    /// What to run.
    pub job: ChildJob,
    /// The profile's name.
    pub profile: String,
    /// The caps the profile is narrowed to, by word; none narrows nothing.
    pub caps: Option<Vec<String>>,
    /// The tenant whose durable state the run reaches.
    pub tenant: String,
    /// The instance or session id the run has.
    pub id: String,
    /// The wall-clock budget in milliseconds (default: the profile's).
    pub timeout_ms: Option<u64>,
    /// The fuel budget (default: a command's).
    pub fuel: Option<u64>,
    /// The memory cap in bytes, in place of the profile's.
    pub memory: Option<usize>,
    /// The guest's environment, exactly.
    pub env: Vec<(String, String)>,
    /// The brokers the parent replaced, by cap word, each the file the
    /// child reads its component from.
    pub brokers: Vec<(String, PathBuf)>,
    /// The stubs (deny brokers) the parent serves, by word.
    pub stubs: Vec<String>,
    /// The preopens the parent granted.
    pub dirs: Vec<ChildDir>,
    /// The parts of the home the parent's services share with guests
    /// (patterns of names under the home, `*` for any one name), so a
    /// preopen the parent admits is admitted here too.
    pub home_shares: Vec<String>,
    /// The grant's scopes the parent's caller runs under, as they are when
    /// the child starts; none is unscoped.
    #[serde(default)]
    pub scope: Option<ScopeSnapshot>,
    /// Whether the child reads the grant named in `scope` from its home's
    /// grants at every call, as its parent does: true when the home is the
    /// parent's own (`os_process`), so a narrowing or revocation made after
    /// the child started reaches it; false when it is private
    /// (`container`), and the child holds `scope` as it was, but for the
    /// changes it reads from [`ChildRequest::scope_feed_fd`].
    #[serde(default)]
    pub scope_live: bool,
    /// The descriptor the child reads each later change of `scope` from,
    /// one JSON line each, when its parent sends them (a `container` child,
    /// whose home holds no grant; a child of a node worker, whose grant
    /// comes over the bus).
    #[serde(default)]
    pub scope_feed_fd: Option<i32>,
}

/// A grant's scopes as a child receives them: the grant as it was when the
/// child started (read again from the home when the child shares its
/// parent's, see [`ChildRequest::scope_live`]; its expiry holds either way).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeSnapshot {
    /// The grant's id (`None`: a command line's `--allow-host`).
    pub grant: Option<String>,
    /// The network destinations as written (`None`: unscoped).
    pub net: Option<Vec<String>>,
    /// The name prefixes of each cap scoped by name, by cap word (a cap
    /// absent reaches every name of the tenant).
    #[serde(default)]
    pub prefixes: std::collections::BTreeMap<String, Vec<String>>,
    /// The names each cap scoped by whole names may use, by cap word (a
    /// cap absent reaches every name of the tenant).
    #[serde(default)]
    pub names: std::collections::BTreeMap<String, Vec<String>>,
    /// The expiry, in milliseconds since the Unix epoch.
    pub expires_ms: Option<u64>,
    /// The `llm` token allowance: tokens every session under the grant may
    /// spend on the model in all (`None`: none of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_tokens: Option<u64>,
    /// The tokens spent under the grant when the snapshot was taken.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub llm_spent: u64,
}

impl ScopeSnapshot {
    /// The scopes of grant `grant` that name destinations `net` (`None`:
    /// unscoped) and nothing else.
    pub fn of_destinations(grant: Option<&str>, net: Option<&[&str]>) -> Self {
        ScopeSnapshot {
            grant: grant.map(str::to_string),
            net: net.map(|n| n.iter().map(|d| d.to_string()).collect()),
            prefixes: Default::default(),
            names: Default::default(),
            expires_ms: None,
            llm_tokens: None,
            llm_spent: 0,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a child runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ChildJob {
    /// Run a command once: the rest of stdin is its stdin.
    Exec {
        /// The command's file (a component, or a wasip1 core module).
        file: PathBuf,
        /// The sha256 (hex) the file must hash to, checked again in the
        /// child: a file swapped after the parent's check is refused.
        sha256: String,
        /// Its arguments after its name.
        args: Vec<String>,
        /// The code the parent compiled for it and the channel its
        /// storage calls go through (the `container` tier).
        handed: Option<Handed>,
    },
    /// Call a registered plugin's `run` once: the rest of stdin is its
    /// input.
    Call {
        /// The registered name (never a file).
        name: String,
        /// The sha256 (hex) its entry must hold.
        sha256: String,
    },
}

/// What a parent hands a contained child besides the request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handed {
    /// The compiled code, at [`Handoff::fd`].
    pub handoff: Handoff,
    /// The inherited socket the child's storage, signing and launch calls
    /// are served on.
    pub relay_fd: i32,
}

/// A preopen as the request carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildDir {
    /// The directory on the host.
    pub host: PathBuf,
    /// The name the guest sees it under.
    pub guest: String,
    /// Whether the guest may only read.
    pub read_only: bool,
}

/// What a child is told of the code a parent compiled for it: the
/// descriptor holding it, and what it was compiled from, so the child
/// maps it rather than compiling (see the core's `dock::handoff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Handoff {
    /// The child's descriptor holding the compiled code.
    pub fd: i32,
    /// The sha256 (hex) of the artifact that was compiled: the guest's,
    /// or its composition's.
    pub compiled: String,
    /// Whether it is a core module (else a component).
    pub module: bool,
    /// Whether it was compiled for the concurrent engine (a WASI 0.3
    /// component).
    #[serde(default)]
    pub concurrent: bool,
    /// The composition it was made from, when brokers were composed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition: Option<HandedComposition>,
}

/// A composition as the composition cache indexes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandedComposition {
    /// The composition key: the composer, the guest and its brokers.
    pub key: String,
    /// The composed bytes' sha256 (hex).
    pub sha256: String,
    /// The composition's imports.
    pub linked: Vec<String>,
}

/// Why a child refused its request before running anything.
#[derive(Debug)]
pub enum ChildRequestError {
    /// Stdin ended or failed before a whole request frame.
    Read(std::io::Error),
    /// The first frame is not a request.
    NotARequest(u8),
    /// The request is not JSON of this build's shape.
    Malformed(serde_json::Error),
    /// The request is of another protocol version.
    Protocol(u32),
}

impl std::fmt::Display for ChildRequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChildRequestError::Read(e) => write!(f, "child request: cannot read it: {e}"),
            ChildRequestError::NotARequest(tag) => {
                write!(
                    f,
                    "child request: the first frame is tagged {tag:#04x}, not a request"
                )
            }
            ChildRequestError::Malformed(e) => write!(f, "child request: malformed: {e}"),
            ChildRequestError::Protocol(v) => write!(
                f,
                "child request: protocol {v}, and this child speaks {CHILD_PROTOCOL} \
                 (the parent and the child are of different builds)"
            ),
        }
    }
}

impl std::error::Error for ChildRequestError {}

impl ChildRequest {
    /// The request as the frame a child reads first.
    pub fn to_frame(&self) -> std::io::Result<Vec<u8>> {
        let json = serde_json::to_vec(self).map_err(std::io::Error::other)?;
        let mut bytes = Vec::new();
        crate::frames::write_frame(&mut bytes, CHILD_REQUEST, &json)?;
        Ok(bytes)
    }

    /// Reads the request frame from `from`, taking no byte past it (what
    /// follows is the guest's stdin), and checks its version.
    pub fn read(from: &mut impl std::io::Read) -> Result<ChildRequest, ChildRequestError> {
        let (tag, json) = crate::frames::read_frame(from).map_err(ChildRequestError::Read)?;
        if tag != CHILD_REQUEST {
            return Err(ChildRequestError::NotARequest(tag));
        }
        // The version first, so an old or new parent is named as such
        // rather than as a shape this build cannot read.
        #[derive(Deserialize)]
        struct Version {
            protocol: u32,
        }
        let version: Version =
            serde_json::from_slice(&json).map_err(ChildRequestError::Malformed)?;
        if version.protocol != CHILD_PROTOCOL {
            return Err(ChildRequestError::Protocol(version.protocol));
        }
        serde_json::from_slice(&json).map_err(ChildRequestError::Malformed)
    }
}

/// The tag of the answer frame holding the guest's stdout.
pub const STDOUT: u8 = 1;
/// The tag of the answer frame holding the guest's stderr.
pub const STDERR: u8 = 2;
/// The tag of the answer frame holding the verdict.
pub const VERDICT: u8 = 3;

/// Largest verdict frame a parent reads: a short JSON object.
pub const MAX_VERDICT_BYTES: usize = 64 << 10;

/// How the child's run ended; `E` is the engine's error, the one an
/// in-process run of the same command would return.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict<E> {
    /// The guest exited with this code.
    Exit(i32),
    /// The engine stopped or refused it.
    Failed(E),
}

/// Writes the child's whole answer: the guest's stdout, its stderr, then
/// the verdict, and flushes.
pub fn write_answer<E: Serialize>(
    out: &mut impl std::io::Write,
    stdout: &[u8],
    stderr: &[u8],
    verdict: &Verdict<E>,
) -> std::io::Result<()> {
    crate::frames::encode_frame(out, STDOUT, stdout)?;
    crate::frames::encode_frame(out, STDERR, stderr)?;
    let json = serde_json::to_vec(verdict).map_err(std::io::Error::other)?;
    crate::frames::encode_frame(out, VERDICT, &json)?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_the_two_streams_then_the_verdict_each_in_its_own_frame() {
        let mut out = Vec::new();
        let failed = Verdict::<String>::Failed("no".into());
        write_answer(&mut out, b"o", b"verdict: exit 0", &failed).unwrap();
        let mut rest = &out[..];
        let mut next = || crate::frames::read_frame(&mut rest).unwrap();
        assert_eq!(next(), (STDOUT, b"o".to_vec()));
        assert_eq!(next(), (STDERR, b"verdict: exit 0".to_vec()));
        assert_eq!(next(), (VERDICT, br#"{"failed":"no"}"#.to_vec()));
        assert!(rest.is_empty());
        let exit: Verdict<String> = serde_json::from_slice(br#"{"exit":3}"#).unwrap();
        assert_eq!(exit, Verdict::Exit(3));
    }

    fn request() -> ChildRequest {
        ChildRequest {
            protocol: CHILD_PROTOCOL,
            home: "/h".into(),
            job: ChildJob::Exec {
                file: "/h/store/x.wasm".into(),
                sha256: "ab".repeat(32),
                args: vec!["-n".into(), "--".into()],
                handed: None,
            },
            profile: "compute".into(),
            caps: Some(vec!["kv".into()]),
            tenant: "t".into(),
            id: "i".into(),
            timeout_ms: Some(1000),
            fuel: None,
            memory: None,
            env: vec![("A".into(), "b=c".into())],
            brokers: Vec::new(),
            stubs: vec!["sockets".into()],
            dirs: vec![ChildDir {
                host: "/data::x".into(),
                guest: "/d".into(),
                read_only: true,
            }],
            home_shares: vec!["runs/*/*/workdir".into()],
            scope: None,
            scope_live: false,
            scope_feed_fd: None,
        }
    }

    #[test]
    fn a_request_reads_back_as_written_and_leaves_what_follows_it() {
        let mut bytes = request().to_frame().unwrap();
        bytes.extend_from_slice(b"stdin");
        let mut from = &bytes[..];
        assert_eq!(ChildRequest::read(&mut from).unwrap(), request());
        assert_eq!(from, b"stdin");
    }

    #[test]
    fn a_request_of_another_protocol_is_refused_by_its_version() {
        let mut other = request();
        other.protocol = CHILD_PROTOCOL + 1;
        let bytes = other.to_frame().unwrap();
        let e = ChildRequest::read(&mut &bytes[..]).unwrap_err();
        assert!(matches!(e, ChildRequestError::Protocol(v) if v == CHILD_PROTOCOL + 1));
        assert!(e.to_string().contains("different builds"), "{e}");
    }

    #[test]
    fn a_request_with_a_field_this_build_does_not_know_is_refused() {
        let mut json = serde_json::to_value(request()).unwrap();
        json["grant_everything"] = true.into();
        let mut bytes = Vec::new();
        crate::frames::write_frame(&mut bytes, CHILD_REQUEST, json.to_string().as_bytes()).unwrap();
        let e = ChildRequest::read(&mut &bytes[..]).unwrap_err();
        assert!(matches!(e, ChildRequestError::Malformed(_)), "{e}");
        assert!(e.to_string().contains("grant_everything"), "{e}");
    }

    #[test]
    fn a_first_frame_that_is_not_a_request_is_refused() {
        let mut bytes = Vec::new();
        crate::frames::write_frame(&mut bytes, b'S', b"{}").unwrap();
        let e = ChildRequest::read(&mut &bytes[..]).unwrap_err();
        assert!(matches!(e, ChildRequestError::NotARequest(b'S')), "{e}");
    }
}
