//! The packed command request of core-module lanes (a preview 1
//! module's `workbooks.exec`), parsed under the engine's argv and stdin
//! limits. The format, its parser and its encoders are the protocol
//! crate's (`workbooks_wire::packed`), where its properties are tested.

use crate::limits::{MAX_ARGV_BYTES, MAX_STDIN_BYTES};
pub use workbooks_wire::packed::{
    MAX_NAME_BYTES, PackedError, PackedLimits, PackedRequest, encode, encode_output,
};

/// What the engine lets a packed request hold: the argv and stdin a
/// command run may take.
pub const LIMITS: PackedLimits = PackedLimits {
    argv: MAX_ARGV_BYTES,
    stdin: MAX_STDIN_BYTES,
};

/// Parses a request under the engine's [`LIMITS`].
pub fn parse(bytes: &[u8]) -> Result<PackedRequest, PackedError> {
    workbooks_wire::packed::parse(bytes, LIMITS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_past_the_engines_argv_or_stdin_limit_is_refused_by_name() {
        let long_arg = "a".repeat(MAX_ARGV_BYTES);
        assert!(matches!(
            parse(&encode("x", &[long_arg], b"")),
            Err(PackedError::TooLarge {
                field: "argv",
                limit: MAX_ARGV_BYTES,
                ..
            })
        ));
        let stdin = vec![0u8; MAX_STDIN_BYTES + 1];
        assert!(matches!(
            parse(&encode("x", &[] as &[&str], &stdin)),
            Err(PackedError::TooLarge {
                field: "stdin",
                limit: MAX_STDIN_BYTES,
                ..
            })
        ));
        let at_the_limit = vec![0u8; MAX_STDIN_BYTES];
        let req = parse(&encode("x", &["y"], &at_the_limit)).unwrap();
        assert_eq!(req.stdin.len(), MAX_STDIN_BYTES);
    }
}
