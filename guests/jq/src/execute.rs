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
    let mut outcome = Outcome::default();

    let stream = InputStream::new(sources, settings.raw_input, &filename);
    let stream: Box<dyn Iterator<Item = Result<Val, String>>> = if settings.slurp {
        let slurped = if settings.raw_input {
            let (text, errors) = slurp_text(sources);
            errors
                .into_iter()
                .map(|error| Err(error.to_string()))
                .chain([Ok(text)])
                .collect()
        } else {
            let mut items = Vec::new();
            let mut values = Vec::new();
            for item in stream {
                match item {
                    Ok(value) => values.push(value),
                    Err(error) => items.push(Err(error.to_string())),
                }
            }
            items.push(Ok(values.into_iter().collect()));
            items
        };
        Box::new(slurped.into_iter())
    } else {
        Box::new(stream.map(|item| item.map_err(|error| error.to_string())))
    };
    let stream = RcIter::new(stream);
    let inputs: Inputs<'_, Val> = &stream;

    let session = Session {
        lut: &filter.lut,
        inputs,
        filename: &filename,
        diagnostics: &diagnostics,
    };
    let vars = Vars::new(globals);
    let mut printer = Printer {
        out: BufWriter::with_capacity(OUTPUT_BUFFER, &mut *stdout),
        writer: JsonWriter::new(settings.style),
        raw_output: settings.raw_output,
        join_output: settings.join_output,
    };

    let run_one = |value: Val, outcome: &mut Outcome, printer: &mut Printer| -> io::Result<()> {
        let ctx = Ctx::<Kind>::new(&session, vars.clone());
        for result in filter.id.run((ctx, value)) {
            match result {
                Ok(output) => {
                    outcome.last_output = Some(!matches!(output, Val::Null | Val::Bool(false)));
                    printer.print(&output)?;
                }
                Err(exception) => {
                    match exception.get_err() {
                        Ok(error) => {
                            printer.out.flush()?;
                            outcome.runtime_error = true;
                            let message = runtime_error_message(&filename.borrow(), error);
                            diagnose(&diagnostics, &message);
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
            }
        }
        Ok(())
    };

    let result = (|| -> io::Result<()> {
        if settings.null_input {
            return run_one(Val::Null, &mut outcome, &mut printer);
        }
        for item in inputs {
            match item {
                Ok(value) => run_one(value, &mut outcome, &mut printer)?,
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
        Ok(())
    })()
    .and_then(|()| printer.out.flush());

    if let Err(error) = result {
        if error.kind() != io::ErrorKind::BrokenPipe {
            let message = format!("jq: error: cannot write output: {error}\n");
            diagnose(&diagnostics, message.as_bytes());
        }
        return EXIT_INPUT_ERROR;
    }
    outcome.exit_code(settings.exit_status)
}
