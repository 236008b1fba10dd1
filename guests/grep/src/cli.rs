//! Command-line parsing for `grep`: GNU-style options, which may appear
//! before or after the pattern and file operands, bundled short flags
//! (`-in`), attached values (`-e PAT`, `-ePAT`, `-m2`, `--regexp=PAT`).

/// Which regular-expression dialect the patterns are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    Basic,
    Extended,
    Fixed,
}

/// How `-r`/`-R` treat symbolic links met while walking directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recursion {
    /// `-r`: follow links named on the command line only.
    CommandLineLinks,
    /// `-R`: follow every link.
    AllLinks,
}

/// Wildcards that choose which files and directories are searched.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameFilter {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    pub exclude_dirs: Vec<String>,
}

/// Where patterns come from, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatternSource {
    /// `-e PAT` or the first operand; may hold several newline-separated patterns.
    Text(String),
    /// `-f FILE` (`-` for stdin): one pattern per line.
    File(String),
}

/// Everything the command line asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub patterns: Vec<PatternSource>,
    pub files: Vec<String>,
    pub syntax: Syntax,
    pub ignore_case: bool,
    pub invert: bool,
    pub count: bool,
    pub line_number: bool,
    pub byte_offset: bool,
    pub only_matching: bool,
    pub word: bool,
    pub whole_line: bool,
    pub quiet: bool,
    pub files_with_matches: bool,
    pub files_without_match: bool,
    /// `Some(true)` for `-H`, `Some(false)` for `-h`, `None` to decide by file count.
    pub with_filename: Option<bool>,
    pub no_messages: bool,
    pub binary_as_text: bool,
    pub recursion: Option<Recursion>,
    /// `--include`, `--exclude` and `--exclude-dir` wildcards.
    pub name_filter: NameFilter,
    /// `-Z`: end file names with NUL instead of `:` or newline.
    pub null_after_name: bool,
    pub max_count: Option<u64>,
    pub before_context: usize,
    pub after_context: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            patterns: Vec::new(),
            files: Vec::new(),
            syntax: Syntax::Basic,
            ignore_case: false,
            invert: false,
            count: false,
            line_number: false,
            byte_offset: false,
            only_matching: false,
            word: false,
            whole_line: false,
            quiet: false,
            files_with_matches: false,
            files_without_match: false,
            with_filename: None,
            no_messages: false,
            binary_as_text: false,
            recursion: None,
            name_filter: NameFilter::default(),
            null_after_name: false,
            max_count: None,
            before_context: 0,
            after_context: 0,
        }
    }
}

/// What the command line asks to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Search(Box<Options>),
    Help,
}

pub const USAGE: &str = include_str!("usage.txt");

fn number(option: &str, text: &str) -> Result<u64, String> {
    text.parse()
        .map_err(|_| format!("invalid argument '{text}' for '{option}'"))
}

/// Flags that take a value, by short letter and long name.
const VALUED: [(char, &str); 6] = [
    ('e', "regexp"),
    ('f', "file"),
    ('m', "max-count"),
    ('A', "after-context"),
    ('B', "before-context"),
    ('C', "context"),
];

fn apply_value(options: &mut Options, flag: char, value: String) -> Result<(), String> {
    let context = |value: &str| number(&format!("-{flag}"), value).map(|n| n as usize);
    match flag {
        'e' => options.patterns.push(PatternSource::Text(value)),
        'f' => options.patterns.push(PatternSource::File(value)),
        'm' => options.max_count = Some(number("-m", &value)?),
        'A' => options.after_context = context(&value)?,
        'B' => options.before_context = context(&value)?,
        _ => {
            let lines = context(&value)?;
            options.before_context = lines;
            options.after_context = lines;
        }
    }
    Ok(())
}

fn apply_flag(options: &mut Options, flag: char) -> Result<(), String> {
    match flag {
        'E' => options.syntax = Syntax::Extended,
        'F' => options.syntax = Syntax::Fixed,
        'G' => options.syntax = Syntax::Basic,
        'i' | 'y' => options.ignore_case = true,
        'w' => options.word = true,
        'x' => options.whole_line = true,
        'v' => options.invert = true,
        'c' => options.count = true,
        'l' => options.files_with_matches = true,
        'L' => options.files_without_match = true,
        'n' => options.line_number = true,
        'b' => options.byte_offset = true,
        'o' => options.only_matching = true,
        'H' => options.with_filename = Some(true),
        'h' => options.with_filename = Some(false),
        'q' => options.quiet = true,
        's' => options.no_messages = true,
        'a' => options.binary_as_text = true,
        'r' => options.recursion = Some(Recursion::CommandLineLinks),
        'R' => options.recursion = Some(Recursion::AllLinks),
        'Z' => options.null_after_name = true,
        _ => return Err(format!("invalid option -- '{flag}'")),
    }
    Ok(())
}

const LONG_FLAGS: [(&str, char); 21] = [
    ("extended-regexp", 'E'),
    ("fixed-strings", 'F'),
    ("basic-regexp", 'G'),
    ("ignore-case", 'i'),
    ("word-regexp", 'w'),
    ("line-regexp", 'x'),
    ("invert-match", 'v'),
    ("count", 'c'),
    ("files-with-matches", 'l'),
    ("files-without-match", 'L'),
    ("line-number", 'n'),
    ("byte-offset", 'b'),
    ("only-matching", 'o'),
    ("with-filename", 'H'),
    ("no-filename", 'h'),
    ("quiet", 'q'),
    ("no-messages", 's'),
    ("text", 'a'),
    ("recursive", 'r'),
    ("dereference-recursive", 'R'),
    ("null", 'Z'),
];

fn apply_long<'a>(
    options: &mut Options,
    long: &str,
    rest: &mut impl Iterator<Item = &'a String>,
) -> Result<(), String> {
    let (name, attached) = match long.split_once('=') {
        Some((name, value)) => (name, Some(value.to_owned())),
        None => (long, None),
    };
    if name == "silent" {
        return apply_flag(options, 'q');
    }
    if let Some((_, flag)) = LONG_FLAGS.iter().find(|(long, _)| *long == name) {
        return apply_flag(options, *flag);
    }
    if name == "color" || name == "colour" {
        return Ok(());
    }
    let mut value = || match &attached {
        Some(value) => Ok(value.clone()),
        None => rest
            .next()
            .cloned()
            .ok_or_else(|| format!("option '--{name}' requires an argument")),
    };
    let filter = &mut options.name_filter;
    match name {
        "include" => filter.include.push(value()?),
        "exclude" => filter.exclude.push(value()?),
        "exclude-dir" => filter.exclude_dirs.push(value()?),
        _ => {
            let Some((flag, _)) = VALUED.iter().find(|(_, long)| *long == name) else {
                return Err(format!("unrecognized option '--{name}'"));
            };
            apply_value(options, *flag, value()?)?;
        }
    }
    Ok(())
}

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let mut options = Options::default();
    let mut operands = Vec::new();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            operands.extend(rest.by_ref().cloned());
        } else if arg == "--help" {
            return Ok(Command::Help);
        } else if let Some(long) = arg.strip_prefix("--") {
            apply_long(&mut options, long, &mut rest)?;
        } else if arg.len() > 1 && arg.starts_with('-') {
            let flags = &arg[1..];
            for (index, flag) in flags.char_indices() {
                if VALUED.iter().any(|(short, _)| *short == flag) {
                    let attached = &flags[index + flag.len_utf8()..];
                    let value = if attached.is_empty() {
                        rest.next()
                            .cloned()
                            .ok_or_else(|| format!("option requires an argument -- '{flag}'"))?
                    } else {
                        attached.to_owned()
                    };
                    apply_value(&mut options, flag, value)?;
                    break;
                }
                apply_flag(&mut options, flag)?;
            }
        } else {
            operands.push(arg.clone());
        }
    }
    let mut operands = operands.into_iter();
    if options.patterns.is_empty() {
        let pattern = operands.next().ok_or("no pattern given")?;
        options.patterns.push(PatternSource::Text(pattern));
    }
    options.files = operands.collect();
    Ok(Command::Search(Box::new(options)))
}
