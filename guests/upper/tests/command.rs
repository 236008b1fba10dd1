//! Tests of the `upper` command, run in memory through `upper::run`.

use std::io::Read;

fn upper(args: &[&str], stdin: &[u8]) -> (Vec<u8>, String, u8) {
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let code = upper::run(&args, &mut &stdin[..], &mut stdout, &mut stderr);
    (stdout, String::from_utf8_lossy(&stderr).into_owned(), code)
}

/// A reader that hands out its data a few bytes at a time.
struct Trickle<'d> {
    data: &'d [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let count = self.step.min(self.data.len()).min(buffer.len());
        buffer[..count].copy_from_slice(&self.data[..count]);
        self.data = &self.data[count..];
        Ok(count)
    }
}

#[test]
fn ascii_letters_from_stdin_are_uppercased() {
    let (stdout, _, code) = upper(&[], b"hello, World 42\n");
    assert_eq!((stdout.as_slice(), code), (&b"HELLO, WORLD 42\n"[..], 0));
}

#[test]
fn unicode_text_uses_full_uppercase_mapping() {
    let (stdout, _, _) = upper(&[], "straße ǆ éa".as_bytes());
    assert_eq!(String::from_utf8(stdout).unwrap(), "STRASSE Ǆ ÉA");
}

#[test]
fn invalid_utf8_bytes_pass_through_while_letters_are_uppercased() {
    let (stdout, _, _) = upper(&[], b"ab\xffcd\xc3(ef");
    assert_eq!(stdout, b"AB\xffCD\xc3(EF");
}

#[test]
fn a_character_split_across_reads_is_converted_whole() {
    let input = "éééß".repeat(10);
    for step in 1..5 {
        let mut out = Vec::new();
        upper::uppercase(
            &mut Trickle {
                data: input.as_bytes(),
                step,
            },
            &mut out,
        )
        .unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "ÉÉÉSS".repeat(10));
    }
}

#[test]
fn a_truncated_character_at_the_end_is_written_unchanged() {
    let (stdout, _, _) = upper(&[], b"a\xe2\x82");
    assert_eq!(stdout, b"A\xe2\x82");
}

#[test]
fn file_arguments_are_read_instead_of_stdin() {
    let path = std::env::temp_dir().join(format!("upper-test-{}", std::process::id()));
    std::fs::write(&path, "from file\n").unwrap();
    let (stdout, _, code) = upper(&[path.to_str().unwrap(), "-"], b"and stdin\n");
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        (stdout.as_slice(), code),
        (&b"FROM FILE\nAND STDIN\n"[..], 0)
    );
}

#[test]
fn a_missing_file_is_reported_and_exits_1() {
    let (stdout, stderr, code) = upper(&["/nonexistent/file", "-"], b"rest\n");
    assert_eq!(stdout, b"REST\n");
    assert_eq!(
        stderr,
        "upper: /nonexistent/file: No such file or directory\n"
    );
    assert_eq!(code, 1);
}
