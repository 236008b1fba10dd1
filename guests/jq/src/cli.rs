//! Command-line parsing: turns `jq`'s argv into [`Options`].
//!
//! Short flags may be bundled (`-nr`); long options take their values from
//! the following arguments, like jq.

use std::path::PathBuf;

/// Where the filter text comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterSource {
    /// Given inline as the first positional argument.
    Inline(String),
    /// Read from a file (`-f FILE`).
    File(PathBuf),
}

/// How pretty-printed output is indented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Indent {
    /// This many spaces per level; zero prints compactly.
    Spaces(usize),
    /// One tab per level.
    Tab,
}

/// A named variable given on the command line, before its value is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NamedArg {
    /// `--arg NAME VALUE`: the value as a string.
    Text(String, String),
    /// `--argjson NAME JSON`: the value parsed as JSON.
    Json(String, String),
    /// `--slurpfile NAME FILE`: an array of the JSON values in the file.
    SlurpFile(String, PathBuf),
    /// `--rawfile NAME FILE`: the file's contents as a string.
    RawFile(String, PathBuf),
}

/// How positional arguments after the filter are interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PositionalMode {
    Files,
    TextArgs,
    JsonArgs,
}

/// Everything the command line asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub filter: FilterSource,
    pub files: Vec<PathBuf>,
    pub raw_output: bool,
    pub join_output: bool,
    pub ascii_output: bool,
    pub indent: Indent,
    pub sort_keys: bool,
    pub null_input: bool,
    pub raw_input: bool,
    pub slurp: bool,
    pub exit_status: bool,
    pub named: Vec<NamedArg>,
    /// `--args` values (strings) and `--jsonargs` values (JSON text).
    pub positional: Vec<PositionalArg>,
}

/// One value of `$ARGS.positional`, before JSON arguments are parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PositionalArg {
    Text(String),
    Json(String),
}

/// What the command line asks to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Run(Box<Options>),
    Help,
}

pub const USAGE: &str = include_str!("usage.txt");

/// Parses the arguments after the program name.
pub fn parse(args: &[String]) -> Result<Command, String> {
    let mut parser = Parser::default();
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        if parser.only_positional || arg == "-" || !arg.starts_with('-') {
            parser.positional(arg);
        } else if arg == "--" {
            parser.only_positional = true;
        } else if let Some(long) = arg.strip_prefix("--") {
            if long == "help" {
                return Ok(Command::Help);
            }
            parser.long(long, &mut rest)?;
        } else {
            for flag in arg[1..].chars() {
                if flag == 'h' {
                    return Ok(Command::Help);
                }
                parser.short(flag, &mut rest)?;
            }
        }
    }
    parser
        .finish()
        .map(|options| Command::Run(Box::new(options)))
}

struct Parser {
    options: Options,
    filter_file: Option<PathBuf>,
    inline_filter: Option<String>,
    mode: PositionalMode,
    only_positional: bool,
}

impl Default for Parser {
    fn default() -> Self {
        Self {
            options: Options {
                filter: FilterSource::Inline(String::new()),
                files: Vec::new(),
                raw_output: false,
                join_output: false,
                ascii_output: false,
                indent: Indent::Spaces(2),
                sort_keys: false,
                null_input: false,
                raw_input: false,
                slurp: false,
                exit_status: false,
                named: Vec::new(),
                positional: Vec::new(),
            },
            filter_file: None,
            inline_filter: None,
            mode: PositionalMode::Files,
            only_positional: false,
        }
    }
}

fn value<'a>(option: &str, rest: &mut impl Iterator<Item = &'a String>) -> Result<String, String> {
    rest.next()
        .cloned()
        .ok_or_else(|| format!("{option} takes a parameter"))
}

impl Parser {
    fn positional(&mut self, arg: &str) {
        if self.filter_file.is_none() && self.inline_filter.is_none() {
            self.inline_filter = Some(arg.to_owned());
            return;
        }
        let options = &mut self.options;
        match self.mode {
            PositionalMode::Files => options.files.push(PathBuf::from(arg)),
            PositionalMode::TextArgs => options.positional.push(PositionalArg::Text(arg.into())),
            PositionalMode::JsonArgs => options.positional.push(PositionalArg::Json(arg.into())),
        }
    }

    fn short<'a>(
        &mut self,
        flag: char,
        rest: &mut impl Iterator<Item = &'a String>,
    ) -> Result<(), String> {
        let long = match flag {
            'n' => "null-input",
            'R' => "raw-input",
            's' => "slurp",
            'r' => "raw-output",
            'j' => "join-output",
            'a' => "ascii-output",
            'c' => "compact-output",
            'S' => "sort-keys",
            'e' => "exit-status",
            'f' => "from-file",
            _ => return Err(format!("unknown option: -{flag}")),
        };
        self.long(long, rest)
    }

    fn long<'a>(
        &mut self,
        name: &str,
        rest: &mut impl Iterator<Item = &'a String>,
    ) -> Result<(), String> {
        let options = &mut self.options;
        match name {
            "null-input" => options.null_input = true,
            "raw-input" => options.raw_input = true,
            "slurp" => options.slurp = true,
            "raw-output" => options.raw_output = true,
            "join-output" => {
                options.raw_output = true;
                options.join_output = true;
            }
            "ascii-output" => options.ascii_output = true,
            "compact-output" => options.indent = Indent::Spaces(0),
            "tab" => options.indent = Indent::Tab,
            "indent" => {
                let text = value("--indent", rest)?;
                let width = text
                    .parse::<usize>()
                    .ok()
                    .filter(|width| *width <= 7)
                    .ok_or_else(|| format!("--indent takes a number from 0 to 7, not {text}"))?;
                options.indent = Indent::Spaces(width);
            }
            "sort-keys" => options.sort_keys = true,
            "exit-status" => options.exit_status = true,
            "from-file" => self.filter_file = Some(value("--from-file", rest)?.into()),
            "arg" => {
                let name = value("--arg", rest)?;
                let text = value("--arg", rest)?;
                options.named.push(NamedArg::Text(name, text));
            }
            "argjson" => {
                let name = value("--argjson", rest)?;
                let json = value("--argjson", rest)?;
                options.named.push(NamedArg::Json(name, json));
            }
            "slurpfile" => {
                let name = value("--slurpfile", rest)?;
                let path = value("--slurpfile", rest)?;
                options.named.push(NamedArg::SlurpFile(name, path.into()));
            }
            "rawfile" => {
                let name = value("--rawfile", rest)?;
                let path = value("--rawfile", rest)?;
                options.named.push(NamedArg::RawFile(name, path.into()));
            }
            "args" => self.mode = PositionalMode::TextArgs,
            "jsonargs" => self.mode = PositionalMode::JsonArgs,
            _ => return Err(format!("unknown option: --{name}")),
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Options, String> {
        self.options.filter = match (self.filter_file, self.inline_filter) {
            (Some(path), first_positional) => {
                // With -f, the first positional argument is an input, not a filter.
                if let Some(first) = first_positional {
                    self.options.files.insert(0, PathBuf::from(first));
                }
                FilterSource::File(path)
            }
            (None, Some(code)) => FilterSource::Inline(code),
            (None, None) => return Err("no filter given".into()),
        };
        Ok(self.options)
    }
}
