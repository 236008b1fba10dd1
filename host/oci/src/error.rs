//! What a registry exchange can fail with, each named for the operator.

/// Why a push or pull did not complete; nothing was stored.
#[derive(Debug, thiserror::Error)]
pub enum OciError {
    /// The reference does not parse.
    #[error("bad OCI reference `{reference}`: {why}")]
    BadReference {
        /// As given.
        reference: String,
        /// Why.
        why: String,
    },
    /// The egress floor refused a connection the exchange needed.
    #[error("{host}: refused by the egress floor ({why}){hint}")]
    Floor {
        /// The host (and port) refused.
        host: String,
        /// The floor's reason.
        why: String,
        /// How an operator opens it, when that is what they meant.
        hint: String,
    },
    /// The host does not resolve or does not answer.
    #[error("{registry}: unreachable: {why}")]
    Unreachable {
        /// The registry.
        registry: String,
        /// Why.
        why: String,
    },
    /// The registry wants credentials, or refused the ones given.
    #[error("{registry}: not authorized (HTTP 401){hint}")]
    Unauthorized {
        /// The registry.
        registry: String,
        /// Where credentials come from.
        hint: &'static str,
    },
    /// The credentials were accepted but do not reach this repository.
    #[error("{registry}: access denied (HTTP 403)")]
    Denied {
        /// The registry.
        registry: String,
    },
    /// No such repository, tag or digest.
    #[error("{reference}: not found in the registry")]
    NotFound {
        /// The reference.
        reference: String,
    },
    /// The manifest is not a wasm artifact this engine runs.
    #[error("{reference}: not a wasm artifact: {why}")]
    NotWasm {
        /// The reference.
        reference: String,
        /// What is wrong with it.
        why: String,
    },
    /// Bytes did not hash to the digest that named them.
    #[error("{what}: digest mismatch: expected {expected}, got {got}")]
    DigestMismatch {
        /// Which bytes.
        what: String,
        /// The digest that named them.
        expected: String,
        /// What they hash to.
        got: String,
    },
    /// Something was larger than its cap.
    #[error("{what} is over its cap of {limit} bytes")]
    TooLarge {
        /// Which thing.
        what: String,
        /// The cap.
        limit: u64,
    },
    /// The bytes are not a valid component or module.
    #[error("{reference}: the wasm does not validate: {why}")]
    Invalid {
        /// The reference or file.
        reference: String,
        /// The validator's message.
        why: String,
    },
    /// Signers are required and none of them signed this digest.
    #[error("{reference}: not signed by a required signer ({found}); required: {wanted}")]
    Unsigned {
        /// The reference.
        reference: String,
        /// What was found ("no signature", or the signers found).
        found: String,
        /// The signers required.
        wanted: String,
    },
    /// Signing failed (the tenant's key).
    #[error("signing: {0}")]
    Sign(String),
    /// Credentials given without the registry they are for.
    #[error("credentials: {0}")]
    Credentials(String),
    /// A trust file or signer list does not parse.
    #[error("trust: {0}")]
    Trust(String),
    /// The operator's TLS roots file is unusable (it names the file).
    #[error("{0}")]
    TlsRoots(String),
    /// The registry answered against the protocol.
    #[error("{registry}: {why}")]
    Registry {
        /// The registry.
        registry: String,
        /// What it answered.
        why: String,
    },
    /// The push or pull ran past its time budget (one for the whole
    /// operation, every protocol step included).
    #[error("{registry}: the exchange did not finish within {secs} s")]
    Timeout {
        /// The registry.
        registry: String,
        /// The budget.
        secs: u64,
    },
    /// Reading or writing this home.
    #[error("{what}: {why}")]
    Io {
        /// Which file.
        what: String,
        /// Why.
        why: String,
    },
}

impl OciError {
    /// A short stable name for JSON output and exit mapping.
    pub fn kind(&self) -> &'static str {
        match self {
            OciError::BadReference { .. } => "bad_reference",
            OciError::Floor { .. } => "egress_refused",
            OciError::Unreachable { .. } => "unreachable",
            OciError::Unauthorized { .. } => "unauthorized",
            OciError::Denied { .. } => "denied",
            OciError::NotFound { .. } => "not_found",
            OciError::NotWasm { .. } => "not_wasm",
            OciError::DigestMismatch { .. } => "digest_mismatch",
            OciError::TooLarge { .. } => "too_large",
            OciError::Invalid { .. } => "invalid",
            OciError::Unsigned { .. } => "unsigned",
            OciError::Sign(_) => "sign",
            OciError::Trust(_) => "trust",
            OciError::TlsRoots(_) => "tls_roots",
            OciError::Credentials(_) => "credentials",
            OciError::Registry { .. } => "registry",
            OciError::Timeout { .. } => "timeout",
            OciError::Io { .. } => "io",
        }
    }

    pub(crate) fn io(what: impl std::fmt::Display, e: impl std::fmt::Display) -> Self {
        OciError::Io {
            what: what.to_string(),
            why: e.to_string(),
        }
    }
}
