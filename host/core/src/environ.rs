//! The environment a guest sees: exactly the `NAME=value` pairs the
//! operator or the library caller passed, never the host's own.
//!
//! Threat: the host process's environment carries credentials (API keys,
//! tokens, `WB_*` settings) and paths; a guest that inherited it would read
//! them. No store is ever built from `std::env`: the pairs arrive through
//! [`crate::SessionOptions::env`] (and, for commands, the policy a
//! pipeline hands each stage), are checked here, and are the whole
//! environment. A shell's own `NAME=value` words stay shell variables: they
//! are not added to any stage's environment.

use crate::limits::MAX_ENV_BYTES;

/// Why an environment was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// A `--env` argument without `=`.
    #[error("environment: {spec:?} is not NAME=VALUE")]
    NotAssignment {
        /// What was given.
        spec: String,
    },
    /// A name that is empty or holds `=` or NUL.
    #[error("environment: the name {name:?} {why}")]
    BadName {
        /// The name.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A value holding NUL (it cannot cross WASI's C strings).
    #[error("environment: the value of {name} contains a NUL byte")]
    NulInValue {
        /// The variable.
        name: String,
    },
    /// The whole environment is past [`MAX_ENV_BYTES`].
    #[error("environment: {0} bytes, over the {MAX_ENV_BYTES}-byte limit")]
    TooLarge(usize),
}

/// Reads one `NAME=VALUE` (the value may be empty and may hold `=`).
pub fn parse(spec: &str) -> Result<(String, String), EnvError> {
    let (name, value) = spec
        .split_once('=')
        .ok_or_else(|| EnvError::NotAssignment {
            spec: spec.to_string(),
        })?;
    let pair = (name.to_string(), value.to_string());
    check(std::slice::from_ref(&pair))?;
    Ok(pair)
}

/// Checks every pair and the total size.
pub fn check(vars: &[(String, String)]) -> Result<(), EnvError> {
    let mut total = 0usize;
    for (name, value) in vars {
        let why = if name.is_empty() {
            Some("is empty")
        } else if name.contains('=') {
            Some("contains `=`")
        } else if name.contains('\0') {
            Some("contains a NUL byte")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(EnvError::BadName {
                name: name.clone(),
                why,
            });
        }
        if value.contains('\0') {
            return Err(EnvError::NulInValue { name: name.clone() });
        }
        total = total.saturating_add(name.len() + value.len() + 2);
    }
    if total > MAX_ENV_BYTES {
        return Err(EnvError::TooLarge(total));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_may_be_empty_or_hold_equals_signs() {
        assert_eq!(parse("A=").unwrap(), ("A".into(), String::new()));
        assert_eq!(parse("A=b=c").unwrap(), ("A".into(), "b=c".into()));
    }

    #[test]
    fn names_that_cannot_be_a_variable_are_refused_by_name() {
        assert!(matches!(
            parse("novalue"),
            Err(EnvError::NotAssignment { .. })
        ));
        assert!(matches!(
            parse("=x"),
            Err(EnvError::BadName {
                why: "is empty",
                ..
            })
        ));
        let nul = [("A\0B".to_string(), "x".to_string())];
        assert!(matches!(check(&nul), Err(EnvError::BadName { .. })));
        let nul = [("A".to_string(), "x\0y".to_string())];
        assert_eq!(check(&nul), Err(EnvError::NulInValue { name: "A".into() }));
    }

    #[test]
    fn an_environment_past_the_cap_is_refused_with_its_size() {
        let big = vec![("K".to_string(), "v".repeat(MAX_ENV_BYTES))];
        assert_eq!(check(&big), Err(EnvError::TooLarge(MAX_ENV_BYTES + 3)));
        let fits = vec![("K".to_string(), "v".repeat(MAX_ENV_BYTES - 3))];
        assert_eq!(check(&fits), Ok(()));
    }
}
