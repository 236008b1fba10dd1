//! Command-line arguments read as clap reads them, for the readers that
//! take a plain line without building the full parser ([`RunArgs`] here,
//! `wbx exec`'s in the CLI). It yields words and flags and gives a flag
//! its value by clap's rules; every shape those rules cannot settle exactly
//! as clap would is `None`, and the caller leaves the whole line to clap.
//!
//! [`RunArgs`]: crate::RunArgs

use std::ffi::OsString;

/// One argument.
#[derive(Debug, PartialEq)]
pub enum Arg<'a> {
    /// A word: a verb, a positional, or anything after `--`.
    Word(&'a str),
    /// The first `--`: every argument after it is a [`Arg::Word`].
    EndOfFlags,
    /// A flag, with the value written into it (`--name=value`), if any.
    Flag(&'a str, Option<&'a str>),
}

/// Reads arguments in order.
pub struct ArgReader<'a> {
    args: std::slice::Iter<'a, OsString>,
    /// Flags clap accepts more than once.
    repeatable: &'static [&'static str],
    seen: Vec<&'a str>,
    words_only: bool,
}

impl<'a> ArgReader<'a> {
    /// A reader of `args` (without the program name) for a verb whose
    /// `repeatable` flags clap accepts more than once.
    pub fn new(args: &'a [OsString], repeatable: &'static [&'static str]) -> Self {
        Self {
            args: args.iter(),
            repeatable,
            seen: Vec::new(),
            words_only: false,
        }
    }

    fn read(&mut self, arg: &'a OsString) -> Option<Arg<'a>> {
        let arg = arg.to_str()?;
        if self.words_only || !arg.starts_with('-') || arg == "-" {
            return Some(Arg::Word(arg));
        }
        if arg == "--" {
            self.words_only = true;
            return Some(Arg::EndOfFlags);
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (arg, None),
        };
        if !self.repeatable.contains(&flag) {
            if self.seen.contains(&flag) {
                return None;
            }
            self.seen.push(flag);
        }
        Some(Arg::Flag(flag, inline))
    }

    /// A flag's value: the one written into it, else the next argument.
    /// `None` where clap would read otherwise: a next argument that starts
    /// with `-` (clap takes it for a flag) or an empty value (clap refuses).
    pub fn value(&mut self, inline: Option<&'a str>) -> Option<String> {
        let value = match inline {
            Some(value) => value,
            None => self.args.next()?.to_str()?,
        };
        let clap_reads_alike = !value.is_empty() && (inline.is_some() || !value.starts_with('-'));
        clap_reads_alike.then(|| value.to_string())
    }
}

/// Each argument in order: `None` for one only clap may read (not UTF-8,
/// or a flag given again that may not repeat).
impl<'a> Iterator for ArgReader<'a> {
    type Item = Option<Arg<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let arg = self.args.next()?;
        Some(self.read(arg))
    }
}

/// Whether `WB_HOME` is set but empty, which clap reads as `--home` with no
/// value: a reader given no `--home` then leaves the line to clap.
pub fn home_env_is_empty() -> bool {
    std::env::var_os("WB_HOME").is_some_and(|h| h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(args: &[&str], repeatable: &'static [&'static str]) -> Option<Vec<String>> {
        let os: Vec<OsString> = args.iter().map(OsString::from).collect();
        let mut reader = ArgReader::new(&os, repeatable);
        let mut read = Vec::new();
        while let Some(arg) = reader.next() {
            read.push(match arg? {
                Arg::Word(w) => format!("word {w}"),
                Arg::EndOfFlags => "--".into(),
                Arg::Flag(f, inline) => format!("{f}={}", reader.value(inline)?),
            });
        }
        Some(read)
    }

    #[test]
    fn words_flags_and_values_are_read_as_clap_reads_them() {
        assert_eq!(
            all(
                &["run", "-", "--env", "A=1", "--env=B", "--fuel=-1"],
                &["--env"]
            ),
            Some(vec![
                "word run".into(),
                "word -".into(),
                "--env=A=1".into(),
                "--env=B".into(),
                // Written into the flag, a value may start with `-`.
                "--fuel=-1".into(),
            ])
        );
        assert_eq!(
            all(&["a", "--", "--env", "--", ""], &[]),
            Some(vec![
                "word a".into(),
                "--".into(),
                "word --env".into(),
                "word --".into(),
                "word ".into(),
            ])
        );
    }

    #[test]
    fn what_clap_would_read_otherwise_is_none() {
        for args in [
            &["--fuel", "1", "--fuel=2"][..],
            &["--json", "--json"],
            &["--fuel", "-1"],
            &["--tenant", "--json"],
            &["--caps", ""],
            &["--profile="],
            &["--profile"],
        ] {
            assert_eq!(all(args, &["--env"]), None, "{args:?}");
        }
    }
}
