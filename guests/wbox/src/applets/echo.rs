//! `echo`: print the arguments separated by spaces; `-n` drops the newline,
//! `-e` interprets backslash escapes and `-E` turns them back off.

use std::ffi::OsString;
use std::io;

use crate::streams::Io;

/// Runs `echo`. Only leading arguments made entirely of `n`, `e` and `E`
/// letters after a dash are options; everything else is printed as is.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let mut newline = true;
    let mut escapes = false;
    let mut first_word = 0;
    for arg in args {
        let bytes = arg.as_encoded_bytes();
        let is_option = bytes.len() > 1
            && bytes[0] == b'-'
            && bytes[1..].iter().all(|b| matches!(b, b'n' | b'e' | b'E'));
        if !is_option {
            break;
        }
        for letter in &bytes[1..] {
            match letter {
                b'n' => newline = false,
                b'e' => escapes = true,
                _ => escapes = false,
            }
        }
        first_word += 1;
    }
    let mut output = Vec::new();
    for (index, arg) in args[first_word..].iter().enumerate() {
        if index > 0 {
            output.push(b' ');
        }
        let bytes = arg.as_encoded_bytes();
        if escapes {
            if let Stop::Now = expand_escapes(bytes, &mut output) {
                newline = false;
                break;
            }
        } else {
            output.extend_from_slice(bytes);
        }
    }
    if newline {
        output.push(b'\n');
    }
    io.stdout.write_all(&output)?;
    Ok(0)
}

/// Whether `\c` asked for all further output to be suppressed.
enum Stop {
    Now,
    Continue,
}

fn expand_escapes(text: &[u8], output: &mut Vec<u8>) -> Stop {
    let mut index = 0;
    while index < text.len() {
        let byte = text[index];
        index += 1;
        if byte != b'\\' || index == text.len() {
            output.push(byte);
            continue;
        }
        let code = text[index];
        index += 1;
        let simple = match code {
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'e' => Some(0x1b),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'\\' => Some(b'\\'),
            _ => None,
        };
        if let Some(value) = simple {
            output.push(value);
            continue;
        }
        match code {
            b'c' => return Stop::Now,
            b'0' => {
                let (value, used) = radix_prefix(&text[index..], 8, 3);
                output.push(value);
                index += used;
            }
            b'1'..=b'7' => {
                let (value, used) = radix_prefix(&text[index - 1..], 8, 3);
                output.push(value);
                index += used - 1;
            }
            b'x' => match radix_prefix(&text[index..], 16, 2) {
                (_, 0) => output.extend_from_slice(b"\\x"),
                (value, used) => {
                    output.push(value);
                    index += used;
                }
            },
            _ => output.extend_from_slice(&[b'\\', code]),
        }
    }
    Stop::Continue
}

/// Reads up to `max_digits` digits of `radix` from the front of `text`;
/// returns the value (wrapped to a byte) and how many digits were used.
fn radix_prefix(text: &[u8], radix: u32, max_digits: usize) -> (u8, usize) {
    let mut value: u32 = 0;
    let mut used = 0;
    for &byte in text.iter().take(max_digits) {
        let Some(digit) = char::from(byte).to_digit(radix) else {
            break;
        };
        value = value * radix + digit;
        used += 1;
    }
    (value.to_le_bytes()[0], used)
}
