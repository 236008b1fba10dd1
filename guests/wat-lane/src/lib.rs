//! `wat`: the WAT build lane. WebAssembly text on stdin (a core module or
//! a component) becomes its binary on stdout, validated before a byte is
//! written; `--check` only validates. Toolkits with `#+BUILD_LANG: wat`
//! are built by running this command in the sandbox, so their source is
//! parsed by untrusted-input code that holds no cap at all.
//!
//! Exit 0 with the binary; 1 with the parse or validation error on
//! stderr (nothing on stdout); 2 for bad usage or past [`MAX_TEXT_BYTES`].

use std::io::{Read, Write};

/// Bytes of WAT read at most.
pub const MAX_TEXT_BYTES: u64 = 32 << 20;

/// Text to a validated binary, or the error to print.
pub fn build(text: &str) -> Result<Vec<u8>, String> {
    let bytes = wat::parse_str(text).map_err(|e| format!("wat: {e}"))?;
    let mut validator = wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all());
    validator
        .validate_all(&bytes)
        .map_err(|e| format!("wat: invalid: {e}"))?;
    Ok(bytes)
}

/// The command's body.
pub fn run(
    args: &[String],
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let check = match args {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => {
            let _ = writeln!(stderr, "usage: wat [--check] < module.wat");
            return 2;
        }
    };
    let mut text = String::new();
    if let Err(e) = stdin.take(MAX_TEXT_BYTES + 1).read_to_string(&mut text) {
        let _ = writeln!(stderr, "wat: stdin: {e}");
        return 2;
    }
    if text.len() as u64 > MAX_TEXT_BYTES {
        let _ = writeln!(stderr, "wat: the text is over {MAX_TEXT_BYTES} bytes");
        return 2;
    }
    match build(&text) {
        Ok(bytes) if check => {
            let _ = writeln!(stdout, "ok: {} bytes", bytes.len());
            0
        }
        Ok(bytes) => match stdout.write_all(&bytes).and_then(|()| stdout.flush()) {
            Ok(()) => 0,
            Err(e) => {
                let _ = writeln!(stderr, "wat: stdout: {e}");
                1
            }
        },
        Err(e) => {
            let _ = writeln!(stderr, "{e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ran(args: &[&str], input: &str) -> (u8, Vec<u8>, String) {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = run(&args, &mut input.as_bytes(), &mut out, &mut err);
        (code, out, String::from_utf8_lossy(&err).into_owned())
    }

    #[test]
    fn a_module_and_a_component_build_and_bad_text_or_an_invalid_module_do_not() {
        let (code, out, _) = ran(
            &[],
            "(module (func (export \"f\") (result i32) i32.const 7))",
        );
        assert_eq!(code, 0);
        assert!(out.starts_with(b"\0asm\x01\0\0\0"));
        let (code, out, _) = ran(&[], "(component (core module))");
        assert_eq!(code, 0);
        assert!(out.starts_with(b"\0asm"));
        let (code, out, err) = ran(&[], "(module (func (result i32)))");
        assert_eq!((code, out.is_empty()), (1, true));
        assert!(err.starts_with("wat: invalid:"), "{err}");
        let (code, out, err) = ran(&[], "(module (fun))");
        assert_eq!((code, out.is_empty()), (1, true));
        assert!(err.starts_with("wat: "), "{err}");
        assert_eq!(ran(&["--check"], "(module)").1, b"ok: 8 bytes\n");
        assert_eq!(ran(&["-x"], "(module)").0, 2);
        let huge = " ".repeat(MAX_TEXT_BYTES as usize + 1);
        let (code, out, err) = ran(&[], &huge);
        assert_eq!((code, out.is_empty()), (2, true));
        assert!(err.contains("over"), "{err}");
    }
}
