//! The packed command request of core-module lanes: a command request as one
//! little-endian, length-prefixed byte string, so a core module with no
//! component types can still hand the host a structured argv.
//!
//! ```text
//! [name_len u32][name][argc u32]([arg_len u32][arg])*[stdin_len u32][stdin]
//! ```
//!
//! Binary safe (an argument may hold any byte, `;` and NUL included, and it
//! stays one argument); trailing bytes after stdin are tolerated. The parser
//! is the boundary with guest memory: it never panics, never reads past the
//! buffer, and never allocates from a length it has not checked against the
//! bytes that remain and against the argv and stdin limits the caller
//! gives ([`PackedLimits`]: the engine's, in `workbooks::commands::packed`).

/// Longest command name in a packed request.
pub const MAX_NAME_BYTES: usize = 255;

/// The most a request's argv (each argument plus one byte, in all) and
/// stdin may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PackedLimits {
    /// Bytes of argv.
    pub argv: usize,
    /// Bytes of stdin.
    pub stdin: usize,
}

/// A parsed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedRequest {
    /// The command name.
    pub name: String,
    /// The arguments, in order.
    pub argv: Vec<String>,
    /// The bytes for stdin.
    pub stdin: Vec<u8>,
}

/// Why bytes are not a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PackedError {
    /// The buffer ends inside a field.
    #[error("truncated request: {field} needs {needed} bytes at offset {at}, {left} left")]
    Truncated {
        /// The field being read.
        field: &'static str,
        /// Its offset.
        at: usize,
        /// Bytes it needs.
        needed: u64,
        /// Bytes left.
        left: usize,
    },
    /// A field is longer than the engine allows.
    #[error("{field} is {len} bytes, over the {limit}-byte limit")]
    TooLarge {
        /// The field.
        field: &'static str,
        /// Its declared length.
        len: u64,
        /// The limit.
        limit: usize,
    },
    /// The name or an argument is not UTF-8.
    #[error("{field} is not valid UTF-8")]
    NotUtf8 {
        /// The field.
        field: &'static str,
    },
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn u32(&mut self, field: &'static str) -> Result<u32, PackedError> {
        let raw = self.take(field, 4)?;
        Ok(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }

    fn take(&mut self, field: &'static str, len: u64) -> Result<&'a [u8], PackedError> {
        let left = self.bytes.len() - self.at;
        if len > left as u64 {
            return Err(PackedError::Truncated {
                field,
                at: self.at,
                needed: len,
                left,
            });
        }
        let out = &self.bytes[self.at..self.at + len as usize];
        self.at += len as usize;
        Ok(out)
    }

    fn field(&mut self, field: &'static str, limit: usize) -> Result<&'a [u8], PackedError> {
        let len = u64::from(self.u32(field)?);
        if len > limit as u64 {
            return Err(PackedError::TooLarge { field, len, limit });
        }
        self.take(field, len)
    }
}

fn text(bytes: &[u8], field: &'static str) -> Result<String, PackedError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| PackedError::NotUtf8 { field })
}

/// Parses a request under `limits`.
pub fn parse(bytes: &[u8], limits: PackedLimits) -> Result<PackedRequest, PackedError> {
    let mut r = Reader { bytes, at: 0 };
    let name = text(r.field("name", MAX_NAME_BYTES)?, "name")?;
    let argc = u64::from(r.u32("argc")?);
    // Each argument takes at least its 4-byte length, so argc can be
    // checked against the bytes left before anything is allocated.
    let left = (bytes.len() - r.at) as u64;
    if argc.saturating_mul(4) > left {
        return Err(PackedError::Truncated {
            field: "argv",
            at: r.at,
            needed: argc.saturating_mul(4),
            left: left as usize,
        });
    }
    let mut argv = Vec::with_capacity(argc as usize);
    let mut argv_bytes = 0usize;
    for _ in 0..argc {
        let arg = r.field("arg", limits.argv)?;
        argv_bytes += arg.len() + 1;
        if argv_bytes > limits.argv {
            return Err(PackedError::TooLarge {
                field: "argv",
                len: argv_bytes as u64,
                limit: limits.argv,
            });
        }
        argv.push(text(arg, "arg")?);
    }
    let stdin = r.field("stdin", limits.stdin)?.to_vec();
    Ok(PackedRequest { name, argv, stdin })
}

/// Encodes a request.
pub fn encode(name: &str, argv: &[impl AsRef<str>], stdin: &[u8]) -> Vec<u8> {
    fn put(out: &mut Vec<u8>, bytes: &[u8]) {
        out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(bytes);
    }
    let mut out = Vec::with_capacity(12 + name.len() + stdin.len());
    put(&mut out, name.as_bytes());
    out.extend_from_slice(&(argv.len() as u32).to_le_bytes());
    for a in argv {
        put(&mut out, a.as_ref().as_bytes());
    }
    put(&mut out, stdin);
    out
}

/// Encodes a command's result for a core-module lane:
/// `[exit i32][stdout_len u32][stdout][stderr_len u32][stderr]`.
pub fn encode_output(exit_code: i32, stdout: &[u8], stderr: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(12 + stdout.len() + stderr.len());
    out.extend_from_slice(&exit_code.to_le_bytes());
    for stream in [stdout, stderr] {
        out.extend_from_slice(&(stream.len() as u32).to_le_bytes());
        out.extend_from_slice(stream);
    }
    out
}

/// Limits far past anything the tests send.
#[cfg(test)]
const LIMITS: PackedLimits = PackedLimits {
    argv: 1 << 20,
    stdin: 1 << 20,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_semicolon_stays_inside_its_argument() {
        let bytes = encode("grep", &["ada; rm -rf /"], b"ada\nbob\n");
        let req = parse(&bytes, LIMITS).unwrap();
        assert_eq!(req.name, "grep");
        assert_eq!(req.argv, vec!["ada; rm -rf /"]);
        assert_eq!(req.stdin, b"ada\nbob\n");
    }

    #[test]
    fn the_reference_layout_is_little_endian_and_length_prefixed() {
        let bytes = encode("grep", &["ada"], b"x");
        assert_eq!(
            bytes,
            [
                &4u32.to_le_bytes()[..],
                b"grep",
                &1u32.to_le_bytes(),
                &3u32.to_le_bytes(),
                b"ada",
                &1u32.to_le_bytes(),
                b"x"
            ]
            .concat()
        );
    }

    #[test]
    fn trailing_bytes_are_tolerated_and_stdin_is_binary_safe() {
        let mut bytes = encode("cat", &[] as &[&str], &[0, 255, 10, 0]);
        bytes.extend_from_slice(b"trailing");
        assert_eq!(parse(&bytes, LIMITS).unwrap().stdin, vec![0, 255, 10, 0]);
    }

    #[test]
    fn malformed_requests_are_clear_errors() {
        assert!(matches!(
            parse(&[], LIMITS),
            Err(PackedError::Truncated { field: "name", .. })
        ));
        assert!(matches!(
            parse(&[9, 0, 0, 0, b'x'], LIMITS),
            Err(PackedError::Truncated { .. })
        ));
        // argc claims four billion arguments in a ten-byte buffer.
        let mut huge = encode("x", &[] as &[&str], b"");
        huge[5..9].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            parse(&huge, LIMITS),
            Err(PackedError::Truncated { field: "argv", .. })
        ));
        let long_name = encode(&"n".repeat(256), &[] as &[&str], b"");
        assert!(matches!(
            parse(&long_name, LIMITS),
            Err(PackedError::TooLarge { field: "name", .. })
        ));
        let mut bad = encode("x", &["ab"], b"");
        bad[13] = 0xFF;
        assert!(matches!(
            parse(&bad, LIMITS),
            Err(PackedError::NotUtf8 { field: "arg" })
        ));
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    fn name() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_.-]{1,64}"
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn any_request_round_trips(name in name(), argv in proptest::collection::vec(".{0,40}", 0..12), stdin in proptest::collection::vec(any::<u8>(), 0..512)) {
            let req = parse(&encode(&name, &argv, &stdin), LIMITS).unwrap();
            prop_assert_eq!(req, PackedRequest { name, argv, stdin });
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let _ = parse(&bytes, LIMITS);
        }

        #[test]
        fn every_strict_prefix_of_a_request_is_refused(name in name(), argv in proptest::collection::vec(".{0,20}", 0..6), stdin in proptest::collection::vec(any::<u8>(), 0..64)) {
            let bytes = encode(&name, &argv, &stdin);
            for cut in 0..bytes.len() {
                prop_assert!(parse(&bytes[..cut], LIMITS).is_err(), "prefix of {} bytes parsed", cut);
            }
        }

        #[test]
        fn trailing_bytes_change_nothing(name in name(), argv in proptest::collection::vec(".{0,20}", 0..6), tail in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut bytes = encode(&name, &argv, b"in");
            bytes.extend_from_slice(&tail);
            let req = parse(&bytes, LIMITS).unwrap();
            prop_assert_eq!((req.name, req.argv, req.stdin), (name, argv, b"in".to_vec()));
        }

        #[test]
        fn mutated_requests_parse_or_fail_cleanly(name in name(), argv in proptest::collection::vec(".{0,20}", 0..6), at in any::<prop::sample::Index>(), byte in any::<u8>()) {
            let mut bytes = encode(&name, &argv, b"stdin");
            let i = at.index(bytes.len());
            bytes[i] = byte;
            if let Ok(req) = parse(&bytes, LIMITS) {
                prop_assert!(req.name.len() <= MAX_NAME_BYTES);
                prop_assert!(req.stdin.len() <= bytes.len());
            }
        }
    }
}
