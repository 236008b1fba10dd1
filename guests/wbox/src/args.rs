//! Option scanning shared by the applets: getopt-style short options with
//! clustering (`-nr`, `-k2`, `-k 2`), a few long names, `--` and GNU-style
//! permutation (options may follow operands).

use std::ffi::{OsStr, OsString};
use std::fmt;

/// What an applet accepts on its command line.
pub struct OptSpec {
    /// Short option letters; a letter followed by `:` takes a value.
    pub short: &'static str,
    /// Long option names and the short letter each one stands for.
    pub long: &'static [(&'static str, char)],
    /// Arguments like `-5` or `-.3` are operands, not options (seq).
    pub negative_numbers_are_operands: bool,
    /// Arguments like `-5` mean `-<letter> 5` (head and tail's old style).
    pub number_option: Option<char>,
    /// Everything from the first operand on is an operand (no permutation).
    pub stop_at_first_operand: bool,
}

impl OptSpec {
    /// A spec with only short options.
    pub const fn short(short: &'static str) -> Self {
        OptSpec {
            short,
            long: &[],
            negative_numbers_are_operands: false,
            number_option: None,
            stop_at_first_operand: false,
        }
    }

    fn lookup(&self, letter: char) -> Option<bool> {
        let mut chars = self.short.chars().peekable();
        while let Some(candidate) = chars.next() {
            let takes_value = chars.peek() == Some(&':');
            if takes_value {
                chars.next();
            }
            if candidate == letter {
                return Some(takes_value);
            }
        }
        None
    }
}

/// One option occurrence, in command-line order.
#[derive(Debug, Clone, Copy)]
pub struct Opt<'a> {
    /// The short letter (long options are reported as their short letter).
    pub letter: char,
    /// The option's value, for options that take one.
    pub value: Option<&'a [u8]>,
}

impl Opt<'_> {
    /// The value, or an empty slice for flags.
    pub fn value_bytes(&self) -> &[u8] {
        self.value.unwrap_or_default()
    }
}

/// A parsed command line.
#[derive(Debug, Default)]
pub struct Parsed<'a> {
    /// Options in the order given.
    pub opts: Vec<Opt<'a>>,
    /// Operands in the order given.
    pub operands: Vec<&'a OsStr>,
}

/// Why a command line was rejected (or `--help` was asked for).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UsageError {
    /// `--help` was given.
    Help,
    /// An unknown short option letter.
    UnknownOption(char),
    /// An unknown long option.
    UnknownLong(String),
    /// An option that needs a value came last.
    MissingValue(String),
    /// Anything an applet rejects after parsing.
    Message(String),
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::Help => write!(f, "help requested"),
            UsageError::UnknownOption(letter) => write!(f, "invalid option -- '{letter}'"),
            UsageError::UnknownLong(name) => write!(f, "unrecognized option '--{name}'"),
            UsageError::MissingValue(name) => write!(f, "option requires an argument -- '{name}'"),
            UsageError::Message(text) => f.write_str(text),
        }
    }
}

/// Scans `args` (the arguments after the applet name) against `spec`.
pub fn parse<'a>(args: &'a [OsString], spec: &OptSpec) -> Result<Parsed<'a>, UsageError> {
    let mut parsed = Parsed::default();
    let mut index = 0;
    while index < args.len() {
        let arg = args[index].as_os_str();
        let bytes = arg.as_encoded_bytes();
        index += 1;
        if bytes == b"--" {
            parsed
                .operands
                .extend(args[index..].iter().map(OsString::as_os_str));
            break;
        }
        if bytes.len() < 2 || bytes[0] != b'-' {
            parsed.operands.push(arg);
            if spec.stop_at_first_operand {
                parsed
                    .operands
                    .extend(args[index..].iter().map(OsString::as_os_str));
                break;
            }
            continue;
        }
        if looks_like_negative_number(bytes) {
            if spec.negative_numbers_are_operands {
                parsed.operands.push(arg);
                continue;
            }
            if let Some(letter) = spec.number_option {
                parsed.opts.push(Opt {
                    letter,
                    value: Some(&bytes[1..]),
                });
                continue;
            }
        }
        if let Some(long) = bytes.strip_prefix(b"--") {
            index = parse_long(long, args, index, spec, &mut parsed)?;
            continue;
        }
        index = parse_cluster(&bytes[1..], args, index, spec, &mut parsed)?;
    }
    Ok(parsed)
}

fn looks_like_negative_number(bytes: &[u8]) -> bool {
    match bytes.get(1) {
        Some(b) if b.is_ascii_digit() => true,
        Some(b'.') => bytes.get(2).is_some_and(u8::is_ascii_digit),
        _ => false,
    }
}

fn parse_long<'a>(
    long: &'a [u8],
    args: &'a [OsString],
    mut index: usize,
    spec: &OptSpec,
    parsed: &mut Parsed<'a>,
) -> Result<usize, UsageError> {
    let (name, inline_value) = match long.iter().position(|&b| b == b'=') {
        Some(eq) => (&long[..eq], Some(&long[eq + 1..])),
        None => (long, None),
    };
    let name_text = String::from_utf8_lossy(name).into_owned();
    if name == b"help" {
        return Err(UsageError::Help);
    }
    let Some(&(_, letter)) = spec
        .long
        .iter()
        .find(|(long_name, _)| long_name.as_bytes() == name)
    else {
        return Err(UsageError::UnknownLong(name_text));
    };
    let takes_value = spec.lookup(letter).unwrap_or(false);
    let value = match (takes_value, inline_value) {
        (true, Some(value)) => Some(value),
        (true, None) => {
            let next = args.get(index).ok_or(UsageError::MissingValue(name_text))?;
            index += 1;
            Some(next.as_encoded_bytes())
        }
        (false, Some(_)) => {
            return Err(UsageError::Message(format!(
                "option '--{name_text}' doesn't allow an argument"
            )));
        }
        (false, None) => None,
    };
    parsed.opts.push(Opt { letter, value });
    Ok(index)
}

fn parse_cluster<'a>(
    cluster: &'a [u8],
    args: &'a [OsString],
    mut index: usize,
    spec: &OptSpec,
    parsed: &mut Parsed<'a>,
) -> Result<usize, UsageError> {
    let mut position = 0;
    while position < cluster.len() {
        let letter = char::from(cluster[position]);
        position += 1;
        let takes_value = spec
            .lookup(letter)
            .ok_or(UsageError::UnknownOption(letter))?;
        if !takes_value {
            parsed.opts.push(Opt {
                letter,
                value: None,
            });
            continue;
        }
        let value = if position < cluster.len() {
            &cluster[position..]
        } else {
            let next = args
                .get(index)
                .ok_or_else(|| UsageError::MissingValue(letter.to_string()))?;
            index += 1;
            next.as_encoded_bytes()
        };
        parsed.opts.push(Opt {
            letter,
            value: Some(value),
        });
        break;
    }
    Ok(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn clustered_flags_and_attached_values_are_split() {
        let args = os(&["-rnk2,2", "file", "-t", ":"]);
        let parsed = parse(&args, &OptSpec::short("rnk:t:")).unwrap();
        let letters: Vec<char> = parsed.opts.iter().map(|o| o.letter).collect();
        assert_eq!(letters, ['r', 'n', 'k', 't']);
        assert_eq!(parsed.opts[2].value, Some(&b"2,2"[..]));
        assert_eq!(parsed.opts[3].value, Some(&b":"[..]));
        assert_eq!(parsed.operands, [OsStr::new("file")]);
    }

    #[test]
    fn double_dash_ends_options() {
        let args = os(&["--", "-n"]);
        let parsed = parse(&args, &OptSpec::short("n")).unwrap();
        assert!(parsed.opts.is_empty());
        assert_eq!(parsed.operands, [OsStr::new("-n")]);
    }

    #[test]
    fn unknown_option_is_a_usage_error() {
        let args = os(&["-x"]);
        let err = parse(&args, &OptSpec::short("n")).unwrap_err();
        assert_eq!(err, UsageError::UnknownOption('x'));
    }

    #[test]
    fn negative_numbers_can_be_operands_or_counts() {
        let args = os(&["-5", "-.3"]);
        let mut spec = OptSpec::short("s:");
        spec.negative_numbers_are_operands = true;
        assert_eq!(parse(&args, &spec).unwrap().operands.len(), 2);
        let args = os(&["-5"]);
        let mut spec = OptSpec::short("n:");
        spec.number_option = Some('n');
        let parsed = parse(&args, &spec).unwrap();
        assert_eq!(parsed.opts[0].value, Some(&b"5"[..]));
    }

    #[test]
    fn long_options_map_to_short_letters() {
        let args = os(&["--lines=3", "--quiet"]);
        let spec = OptSpec {
            long: &[("lines", 'n'), ("quiet", 'q')],
            ..OptSpec::short("n:q")
        };
        let parsed = parse(&args, &spec).unwrap();
        assert_eq!(parsed.opts[0].value, Some(&b"3"[..]));
        assert_eq!(parsed.opts[1].letter, 'q');
    }
}
