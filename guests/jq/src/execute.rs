//! The main loop: feeds each input value to the compiled filter, prints the
//! outputs, reports errors, and works out the exit code.

use crate::input::{InputStream, Source, slurp_text};
use crate::output::{JsonWriter, Style};
use crate::session::{Kind, Session};
use crate::{EXIT_FALSY_OUTPUT, EXIT_INPUT_ERROR, EXIT_NO_OUTPUT, EXIT_OK, EXIT_RUNTIME_ERROR};
use jaq_core::{Ctx, Filter, Vars};
use jaq_json::Val;
use jaq_std::input::{Inputs, RcIter};
use std::cell::RefCell;
use std::io::{self, BufWriter, Write};

/// Output buffer size; large writes keep system calls (and, in the
/// sandbox, host calls) rare.
const OUTPUT_BUFFER: usize = 1 << 16;

/// How inputs are read and outputs printed.
pub struct Settings {
    pub null_input: bool,
    pub raw_input: bool,
    pub slurp: bool,
    pub raw_output: bool,
    pub join_output: bool,
    pub exit_status: bool,
    pub style: Style,
}

/// What happened over the whole run.
#[derive(Default)]
struct Outcome {
    input_error: bool,
    runtime_error: bool,
    /// Truthiness of the most recent output, if any.
    last_output: Option<bool>,
    halted: Option<u8>,
}

impl Outcome {
    fn exit_code(&self, exit_status: bool) -> u8 {
        if let Some(code) = self.halted {
            code
        } else if self.input_error {
            EXIT_INPUT_ERROR
        } else if self.runtime_error {
            EXIT_RUNTIME_ERROR
        } else if !exit_status {
            EXIT_OK
        } else {
            match self.last_output {
                None => EXIT_NO_OUTPUT,
                Some(false) => EXIT_FALSY_OUTPUT,
                Some(true) => EXIT_OK,
            }
        }
    }
}

struct Printer<'w> {
    out: BufWriter<&'w mut dyn Write>,
    writer: JsonWriter,
    raw_output: bool,
    join_output: bool,
}

impl Printer<'_> {
    fn print(&mut self, value: &Val) -> io::Result<()> {
        if self.raw_output {
            self.writer.write_raw_or_value(&mut self.out, value)?;
        } else {
            self.writer.write_value(&mut self.out, value)?;
        }
        if !self.join_output {
            self.out.write_all(b"\n")?;
        }
        Ok(())
    }
}

fn diagnose(diagnostics: &RefCell<dyn Write + '_>, message: &[u8]) {
    let mut out = diagnostics.borrow_mut();
    let _ = out.write_all(message);
    let _ = out.flush();
}

/// Formats a runtime error like jq: strings verbatim, other values as JSON.
fn runtime_error_message(filename: &Val, error: jaq_core::Error<Val>) -> Vec<u8> {
    let location = match filename {
        Val::TStr(name) => String::from_utf8_lossy(name).into_owned(),
        _ => "<stdin>".to_owned(),
    };
    let mut message = format!("jq: error (at {location})").into_bytes();
    match error.into_val() {
        Val::TStr(text) => {
            message.extend_from_slice(b": ");
            message.extend_from_slice(&text);
        }
        other => {
            message.extend_from_slice(b" (not a string): ");
            let _ = JsonWriter::new(Style::compact()).write_value(&mut message, &other);
        }
    }
    message.push(b'\n');
    message
}

/// The stream of input values (one slurped value with `-s`); errors are
/// messages for the user.
fn input_items<'a>(
    sources: &'a [Source],
    settings: &Settings,
    filename: &'a RefCell<Val>,
) -> Box<dyn Iterator<Item = Result<Val, String>> + 'a> {
    let stream = InputStream::new(sources, settings.raw_input, filename);
    if !settings.slurp {
        return Box::new(stream.map(|item| item.map_err(|error| error.to_string())));
    }
    let (slurped, errors) = if settings.raw_input {
        slurp_text(sources)
    } else {
        let mut values = Vec::new();
        let mut errors = Vec::new();
        for item in stream {
            match item {
                Ok(value) => values.push(value),
                Err(error) => errors.push(error),
            }
        }
        (values.into_iter().collect(), errors)
    };
    let errors = errors.into_iter().map(|error| Err(error.to_string()));
    Box::new(errors.chain([Ok(slurped)]))
}

/// Runs the filter on one input value, printing outputs and reporting the
/// first error (which ends this input's outputs, as in jq).
fn run_value<'a>(
    filter: &Filter<Kind>,
    session: &'a Session<'a>,
    vars: &Vars<Val>,
    value: Val,
    outcome: &mut Outcome,
    printer: &mut Printer,
) -> io::Result<()> {
    let ctx = Ctx::<Kind>::new(session, vars.clone());
    for result in filter.id.run((ctx, value)) {
        let exception = match result {
            Ok(output) => {
                outcome.last_output = Some(!matches!(output, Val::Null | Val::Bool(false)));
                printer.print(&output)?;
                continue;
            }
            Err(exception) => exception,
        };
        match exception.get_err() {
            Ok(error) => {
                printer.out.flush()?;
                outcome.runtime_error = true;
                let message = runtime_error_message(&session.filename.borrow(), error);
                diagnose(session.diagnostics, &message);
            }
            Err(exception) => {
                let code = exception
                    .get_halt()
                    .unwrap_or(i32::from(EXIT_RUNTIME_ERROR));
                outcome.halted = Some(code.rem_euclid(256) as u8);
            }
        }
        break;
    }
    Ok(())
}

/// Runs `filter` over the inputs from `sources`, binding `globals` in order.
pub fn execute(
    filter: &Filter<Kind>,
    globals: Vec<Val>,
    sources: &[Source],
    settings: Settings,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let diagnostics = RefCell::new(stderr);
    let filename = RefCell::new(Val::Null);
    let stream = RcIter::new(input_items(sources, &settings, &filename));
    let inputs: Inputs<'_, Val> = &stream;
    let session = Session {
        lut: &filter.lut,
        inputs,
        filename: &filename,
        diagnostics: &diagnostics,
    };
    let vars = Vars::new(globals);
    let mut outcome = Outcome::default();
    let mut printer = Printer {
        out: BufWriter::with_capacity(OUTPUT_BUFFER, &mut *stdout),
        writer: JsonWriter::new(settings.style),
        raw_output: settings.raw_output,
        join_output: settings.join_output,
    };

    let mut run_all = || -> io::Result<()> {
        if settings.null_input {
            return run_value(
                filter,
                &session,
                &vars,
                Val::Null,
                &mut outcome,
                &mut printer,
            );
        }
        for item in inputs {
            match item {
                Ok(value) => run_value(filter, &session, &vars, value, &mut outcome, &mut printer)?,
                Err(message) => {
                    printer.out.flush()?;
                    outcome.input_error = true;
                    diagnose(&diagnostics, format!("jq: error: {message}\n").as_bytes());
                }
            }
            if outcome.halted.is_some() {
                break;
            }
        }
        printer.out.flush()
    };

    if let Err(error) = run_all() {
        if error.kind() != io::ErrorKind::BrokenPipe {
            let message = format!("jq: error: cannot write output: {error}\n");
            diagnose(&diagnostics, message.as_bytes());
        }
        return EXIT_INPUT_ERROR;
    }
    outcome.exit_code(settings.exit_status)
}
