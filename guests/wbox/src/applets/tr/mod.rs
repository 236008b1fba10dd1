//! `tr`: translate, delete (`-d`) or squeeze (`-s`) bytes of stdin, with a
//! complemented first set (`-c`) and truncation of SET1 to SET2 (`-t`).

mod sets;

use std::ffi::OsString;
use std::io;

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::streams::{Io, report};

const NAME: &str = "tr";
const SYNOPSIS: &str = "[-cdst] SET1 [SET2]";
const SPEC: OptSpec = OptSpec {
    short: "cCdst",
    long: &[
        ("complement", 'c'),
        ("delete", 'd'),
        ("squeeze-repeats", 's'),
        ("truncate-set1", 't'),
    ],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: true,
};

/// The compiled work: a byte map plus delete and squeeze membership tables.
struct Plan {
    map: [u8; 256],
    delete: [bool; 256],
    squeeze: [bool; 256],
}

#[derive(Default)]
struct Flags {
    complement: bool,
    delete: bool,
    squeeze: bool,
    truncate: bool,
}

/// Runs `tr`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let mut flags = Flags::default();
    for opt in &parsed.opts {
        match opt.letter {
            'c' | 'C' => flags.complement = true,
            'd' => flags.delete = true,
            's' => flags.squeeze = true,
            _ => flags.truncate = true,
        }
    }
    let wanted = match (flags.delete, flags.squeeze) {
        (true, true) => 2..=2,
        (true, false) => 1..=1,
        (false, true) => 1..=2,
        (false, false) => 2..=2,
    };
    let count = parsed.operands.len();
    if !wanted.contains(&count) {
        let problem = if count < *wanted.start() {
            "missing operand"
        } else {
            "extra operand"
        };
        return usage_failure(io, NAME, SYNOPSIS, &UsageError::Message(problem.into()));
    }
    let operands: Vec<&[u8]> = parsed
        .operands
        .iter()
        .map(|operand| operand.as_encoded_bytes())
        .collect();
    let plan = match build_plan(&flags, &operands) {
        Ok(plan) => plan,
        Err(message) => {
            report(&mut *io.stderr, NAME, &message);
            return Ok(1);
        }
    };
    filter(&plan, io)
}

fn build_plan(flags: &Flags, operands: &[&[u8]]) -> Result<Plan, String> {
    let mut plan = Plan {
        map: std::array::from_fn(|index| index.to_le_bytes()[0]),
        delete: [false; 256],
        squeeze: [false; 256],
    };
    let mut first = sets::expand(&sets::parse(operands[0])?, 0);
    if flags.complement {
        let mut member = [false; 256];
        for &byte in &first {
            member[usize::from(byte)] = true;
        }
        first = (0..=255u8).filter(|&b| !member[usize::from(b)]).collect();
    }
    let second = match operands.get(1) {
        Some(text) => Some(sets::expand(&sets::parse(text)?, first.len())),
        None => None,
    };
    if flags.delete {
        mark(&mut plan.delete, &first);
        if let Some(second) = &second {
            mark(&mut plan.squeeze, second);
        }
        return Ok(plan);
    }
    match second {
        Some(mut second) => {
            if flags.truncate {
                first.truncate(second.len());
            } else if let Some(&last) = second.last() {
                second.resize(second.len().max(first.len()), last);
            } else if !first.is_empty() {
                return Err("when not truncating set1, string2 must be non-empty".into());
            }
            for (&from, &to) in first.iter().zip(&second) {
                plan.map[usize::from(from)] = to;
            }
            if flags.squeeze {
                mark(&mut plan.squeeze, &second);
            }
        }
        None => mark(&mut plan.squeeze, &first),
    }
    Ok(plan)
}

fn mark(table: &mut [bool; 256], members: &[u8]) {
    for &byte in members {
        table[usize::from(byte)] = true;
    }
}

fn filter(plan: &Plan, io: &mut Io) -> io::Result<u8> {
    let deletes = plan.delete.iter().any(|&d| d);
    let squeezes = plan.squeeze.iter().any(|&s| s);
    let mut output = Vec::new();
    let mut previous: Option<u8> = None;
    loop {
        let buffer = match io.stdin.fill_buf() {
            Ok(buffer) => buffer,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => {
                let message = format!("read error: {}", crate::streams::describe_error(&err));
                report(&mut *io.stderr, NAME, &message);
                return Ok(1);
            }
        };
        if buffer.is_empty() {
            return Ok(0);
        }
        output.clear();
        if !deletes && !squeezes {
            output.extend(buffer.iter().map(|&byte| plan.map[usize::from(byte)]));
        } else {
            for &byte in buffer {
                if plan.delete[usize::from(byte)] {
                    continue;
                }
                let mapped = plan.map[usize::from(byte)];
                if plan.squeeze[usize::from(mapped)] && previous == Some(mapped) {
                    continue;
                }
                previous = Some(mapped);
                output.push(mapped);
            }
        }
        let used = buffer.len();
        io.stdin.consume(used);
        io.stdout.write_all(&output)?;
    }
}
