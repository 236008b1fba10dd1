//! `sort` behaviour.

use crate::support::{Scratch, output, run};

const TABLE: &str =
    "42\t1\t3\twoot\n42\t1\t010\tzoology\negg\t1\t2\tpapyrus\n7\t3\t42\tsoup\n999\t3\t0\talgebra\n";

#[test]
fn sort_orders_bytes_like_the_c_locale() {
    assert_eq!(output("sort", &[], "c\na\nb\n"), "a\nb\nc\n");
    assert_eq!(output("sort", &[], "b\nB\na\n_\n"), "B\n_\na\nb\n");
    assert_eq!(output("sort", &[], "3\n1\n010\n"), "010\n1\n3\n");
}

#[test]
fn sort_orders_lines_that_share_their_first_eight_bytes_by_the_rest() {
    let lines = "prefix00b\nprefix00\nprefix00a\nprefix0\nprefix00\u{0}\nprefix00a\n";
    let sorted = "prefix0\nprefix00\nprefix00\u{0}\nprefix00a\nprefix00a\nprefix00b\n";
    assert_eq!(output("sort", &[], lines), sorted);
    let reversed: Vec<&str> = sorted.lines().rev().collect();
    assert_eq!(output("sort", &["-r"], lines), reversed.join("\n") + "\n");
    assert_eq!(
        output("sort", &["-u"], "a\u{0}\na\na\u{0}\n"),
        "a\na\u{0}\n"
    );
    // Many lines, more than one write batch of output.
    let many: String = (0..20_000).rev().map(|n| format!("{n:07}\n")).collect();
    let want: String = (0..20_000).map(|n| format!("{n:07}\n")).collect();
    assert_eq!(output("sort", &[], &many), want);
}

#[test]
fn sort_terminates_an_unterminated_last_line() {
    assert_eq!(output("sort", &[], "b\na"), "a\nb\n");
    assert_eq!(output("sort", &[], ""), "");
}

#[test]
fn sort_r_reverses() {
    assert_eq!(
        output("sort", &["-r"], "point\nwook\npabst\naargh\nwalrus\n"),
        "wook\nwalrus\npoint\npabst\naargh\n"
    );
}

#[test]
fn sort_n_compares_numbers_and_treats_text_as_zero() {
    assert_eq!(output("sort", &["-n"], "3\n1\n010\n"), "1\n3\n010\n");
    assert_eq!(
        output("sort", &["-n"], "1z\n0D\n3b\nC\n-1\n0A\n"),
        "-1\n0A\n0D\nC\n1z\n3b\n"
    );
    assert_eq!(
        output("sort", &["-n"], "1.5\n-2.25\n1.25\n"),
        "-2.25\n1.25\n1.5\n"
    );
}

#[test]
fn sort_k_selects_fields_with_per_key_options() {
    assert_eq!(
        output("sort", &["-k4,4"], TABLE),
        "999\t3\t0\talgebra\negg\t1\t2\tpapyrus\n7\t3\t42\tsoup\n42\t1\t3\twoot\n42\t1\t010\tzoology\n"
    );
    assert_eq!(
        output("sort", &["-k2,3n"], TABLE),
        "42\t1\t010\tzoology\n42\t1\t3\twoot\negg\t1\t2\tpapyrus\n7\t3\t42\tsoup\n999\t3\t0\talgebra\n"
    );
    assert_eq!(
        output("sort", &["-k2,3rn"], TABLE),
        "7\t3\t42\tsoup\n999\t3\t0\talgebra\n42\t1\t010\tzoology\n42\t1\t3\twoot\negg\t1\t2\tpapyrus\n"
    );
}

#[test]
fn sort_global_reverse_only_reverses_the_last_resort_for_keys_with_options() {
    assert_eq!(
        output("sort", &["-k2,3n", "-r"], TABLE),
        "egg\t1\t2\tpapyrus\n42\t1\t3\twoot\n42\t1\t010\tzoology\n999\t3\t0\talgebra\n7\t3\t42\tsoup\n"
    );
}

#[test]
fn sort_several_keys_break_ties_in_order() {
    assert_eq!(
        output("sort", &["-k", "2,2n", "-k", "1,1r"], "c 3\nb 2\nd 2\n"),
        "d 2\nb 2\nc 3\n"
    );
    assert_eq!(
        output(
            "sort",
            &["-t.", "-k", "1,1", "-k", "2n,2n", "-k", "3"],
            "GLIBC_2.21\nGLIBC_2.1.1\nGLIBC_2.2\nGLIBC_2.10\nGLIBC_2.1\n"
        ),
        "GLIBC_2.1\nGLIBC_2.1.1\nGLIBC_2.2\nGLIBC_2.10\nGLIBC_2.21\n"
    );
}

#[test]
fn sort_t_splits_fields_on_a_separator() {
    assert_eq!(
        output(
            "sort",
            &["-t,", "-k3n"],
            "1,2,3,4\n2,3,4,1\n4,1,2,3\n3,4,1,2\n"
        ),
        "3,4,1,2\n4,1,2,3\n1,2,3,4\n2,3,4,1\n"
    );
    assert_eq!(
        output("sort", &["-t:", "-k1,1"], "a/a:a\na:b\n"),
        "a:b\na/a:a\n"
    );
    assert_eq!(
        output("sort", &["-n", "-k2", "-t", " "], " 2 \n 1 \n a \n"),
        " a \n 1 \n 2 \n"
    );
}

#[test]
fn sort_key_character_positions_count_within_fields() {
    assert_eq!(
        output("sort", &["-t.", "-k1,1.1", "-k2"], "aa.2\nab.1\n"),
        "ab.1\naa.2\n"
    );
    assert_eq!(output("sort", &["-k1.2"], "xb\nya\n"), "ya\nxb\n");
}

#[test]
fn sort_blank_fields_keep_leading_blanks_unless_b() {
    assert_eq!(output("sort", &["-k2,2"], "x  b\ny a\n"), "x  b\ny a\n");
    assert_eq!(output("sort", &["-k2b,2"], "x  b\ny a\n"), "y a\nx  b\n");
    assert_eq!(
        output("sort", &["-b", "-k2,2"], "x  b\ny a\n"),
        "y a\nx  b\n"
    );
}

#[test]
fn sort_f_folds_case_per_key_or_globally() {
    assert_eq!(
        output("sort", &["-k2,2f"], "a B a\nA b b\na B C\n"),
        "A b b\na B C\na B a\n"
    );
    assert_eq!(
        output("sort", &["-k2,2"], "a B a\nA b b\na B C\n"),
        "a B C\na B a\nA b b\n"
    );
    assert_eq!(output("sort", &["-f"], "b\nA\na\nB\n"), "A\na\nB\nb\n");
}

#[test]
fn sort_u_keeps_the_first_of_each_run_of_equal_keys() {
    assert_eq!(output("sort", &["-u"], "b\na\nb\na\n"), "a\nb\n");
    assert_eq!(
        output(
            "sort",
            &["-uk2,2n"],
            "zero 1\none 1\nfour 3\ntwo 1\nthree 2\nalso 1"
        ),
        "zero 1\nthree 2\nfour 3\n"
    );
    assert_eq!(output("sort", &["-u", "-k2"], "a c\nb c\n"), "a c\n");
    assert_eq!(output("sort", &["-fu"], "a\nA\n"), "a\n");
}

#[test]
fn sort_s_keeps_input_order_for_equal_keys() {
    assert_eq!(
        output("sort", &["-k2", "-r", "-s"], "a 1\nb 2\nc 1\nd 2\n"),
        "b 2\nd 2\na 1\nc 1\n"
    );
    assert_eq!(output("sort", &["-s", "-k1,1"], "1 b\n1 a\n"), "1 b\n1 a\n");
}

#[test]
fn sort_g_h_and_m_order_floats_sizes_and_months() {
    assert_eq!(
        output(
            "sort",
            &["-g"],
            "01.37\n1.222\n2.1\n0.4\nNaN\nbork\n-inf\n+infinity\n1e1\n"
        ),
        "bork\nNaN\n-inf\n0.4\n1.222\n01.37\n2.1\n1e1\n+infinity\n"
    );
    assert_eq!(
        output("sort", &["-h"], "1M\n3k\n2K\n1023\n5y\n"),
        "5y\n1023\n2K\n3k\n1M\n"
    );
    assert_eq!(
        output("sort", &["-k2,2M"], "2 April\n1  May\n3 March\nx Foo\n"),
        "x Foo\n3 March\n2 April\n1  May\n"
    );
}

#[test]
fn sort_d_and_i_ignore_some_characters() {
    assert_eq!(output("sort", &["-d"], "-b\na\n"), "a\n-b\n");
    assert_eq!(run("sort", &["-i"], b"\x01b\na\n").stdout, b"a\n\x01b\n");
}

#[test]
fn sort_c_reports_the_first_disorder() {
    let outcome = run("sort", &["-c"], b"a\nb\na\nc\n");
    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.stderr, "sort: -:3: disorder: a\n");
    assert!(outcome.stdout.is_empty());
    assert_eq!(run("sort", &["-c"], b"a\nb\nb\n").code, 0);
    assert_eq!(run("sort", &["-uc"], b"a\nb\nb\n").code, 1);
    let quiet = run("sort", &["-C"], b"b\na\n");
    assert_eq!((quiet.code, quiet.stderr.as_str()), (1, ""));
}

#[test]
fn sort_z_uses_nul_terminated_lines() {
    assert_eq!(
        run("sort", &["-z"], b"one\0two\0three\0").stdout,
        b"one\0three\0two\0"
    );
}

#[test]
fn sort_o_writes_a_file_even_over_its_input() {
    let scratch = Scratch::new();
    let file = scratch.file("data", b"222\n111\n");
    let outcome = run("sort", &["-o", &file, &file], b"");
    assert_eq!(outcome.code, 0);
    assert_eq!(std::fs::read(&file).unwrap(), b"111\n222\n");
}

#[test]
fn sort_merges_several_files_and_reports_missing_ones() {
    let scratch = Scratch::new();
    let first = scratch.file("first", b"c\na");
    let second = scratch.file("second", b"b\n");
    let missing = scratch.path("missing");
    let outcome = run("sort", &[&first, &missing, &second], b"");
    assert_eq!(outcome.text(), "a\nb\nc\n");
    assert_eq!(outcome.code, 1);
    assert!(outcome.stderr.contains("No such file or directory"));
}

#[test]
fn sort_keeps_invalid_utf8_and_orders_it_by_bytes() {
    assert_eq!(
        run("sort", &[], b"\xff\n\x80\na\n").stdout,
        b"a\n\x80\n\xff\n"
    );
}

#[test]
fn sort_rejects_malformed_keys_and_separators() {
    for args in [&["-k", "0"][..], &["-k", "1x"], &["-t", "ab"], &["-k"]] {
        assert_eq!(run("sort", args, b"").code, 2, "{args:?}");
    }
}

#[test]
fn sort_handles_a_hundred_thousand_lines() {
    let input: String = (0..100_000u32)
        .map(|n| format!("{} {}\n", (n * 7919) % 100_000, n))
        .collect();
    let sorted = output("sort", &["-n"], &input);
    let firsts: Vec<u32> = sorted
        .lines()
        .map(|line| line.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(firsts.len(), 100_000);
    assert!(firsts.windows(2).all(|pair| pair[0] <= pair[1]));
    let by_key = output("sort", &["-k2,2nr"], &input);
    let expected_first = format!("{} 99999", (99_999u32 * 7919) % 100_000);
    assert_eq!(by_key.lines().next(), Some(expected_first.as_str()));
}

/// Lines of up to 31 bytes from a small alphabet (zero bytes, 0xff, a
/// shared start now and then), the same for a given `seed`.
fn assorted_lines(count: usize, seed: u64, delimiter: u8) -> Vec<Vec<u8>> {
    let alphabet = [0u8, 1, b'0', b'1', b'9', b'a', b'b', 0x7f, 0x80, 0xff];
    let mut state = seed;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    (0..count)
        .map(|_| {
            // Half the lines share a start of 0 to 12 bytes, so lines meet
            // that differ first at every byte of the 8-byte prefix and past it.
            let mut line = if next() % 2 == 0 {
                b"sharedprefix"[..next() % 13].to_vec()
            } else {
                Vec::new()
            };
            for _ in 0..next() % 20 {
                line.push(alphabet[next() % alphabet.len()]);
            }
            line.retain(|&b| b != delimiter);
            line
        })
        .collect()
}

#[test]
fn sort_plain_byte_order_agrees_with_a_comparison_sort_on_every_size_and_flag() {
    for (count, delimiter, flag) in [
        (63, b'\n', ""),
        (64, b'\n', ""),
        (65, b'\n', "-r"),
        (1000, b'\n', "-u"),
        (1000, 0, "-z"),
        (5000, b'\n', "-r"),
        (5000, b'\n', ""),
    ] {
        let lines = assorted_lines(count, count as u64 + u64::from(delimiter), delimiter);
        let mut input = Vec::new();
        for line in &lines {
            input.extend_from_slice(line);
            input.push(delimiter);
        }
        let mut want = lines.clone();
        want.sort();
        match flag {
            "-r" => want.reverse(),
            "-u" => want.dedup(),
            _ => {}
        }
        let mut expected = Vec::new();
        for line in &want {
            expected.extend_from_slice(line);
            expected.push(delimiter);
        }
        let args: Vec<&str> = [flag].into_iter().filter(|f| !f.is_empty()).collect();
        let outcome = run("sort", &args, &input);
        assert_eq!(outcome.code, 0, "{count} lines {flag}: {}", outcome.stderr);
        assert_eq!(outcome.stdout, expected, "{count} lines {flag}");
    }
}

#[test]
fn sort_plain_byte_order_keeps_a_line_longer_than_the_input_batch() {
    // One line of 100 000 bytes among short ones: written on its own, whole.
    let long = "x".repeat(100_000);
    let input = format!("b\n{long}\na\n");
    assert_eq!(output("sort", &[], &input), format!("a\nb\n{long}\n"));
    assert_eq!(output("sort", &["-r"], &input), format!("{long}\nb\na\n"));
}
