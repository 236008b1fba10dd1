//! `seq` behaviour.

use crate::support::{output, run};

fn seq(args: &[&str]) -> String {
    output("seq", args, "")
}

#[test]
fn seq_counts_from_one_to_last() {
    assert_eq!(seq(&["3"]), "1\n2\n3\n");
    assert_eq!(seq(&["0"]), "");
}

#[test]
fn seq_takes_first_and_last_or_first_increment_last() {
    assert_eq!(seq(&["5", "7"]), "5\n6\n7\n");
    assert_eq!(seq(&["4", "2", "8"]), "4\n6\n8\n");
    assert_eq!(seq(&["8", "-2", "4"]), "8\n6\n4\n");
    assert_eq!(seq(&["7", "5"]), "");
    assert_eq!(seq(&["1", "-15", "1"]), "1\n");
}

#[test]
fn seq_accepts_negative_numbers_as_operands() {
    assert_eq!(seq(&["-1", "1"]), "-1\n0\n1\n");
    assert_eq!(seq(&["-4", "-2", "-8"]), "-4\n-6\n-8\n");
    assert_eq!(
        seq(&["-2147483648", "-2147483647"]),
        "-2147483648\n-2147483647\n"
    );
}

#[test]
fn seq_fractions_take_precision_from_first_and_increment() {
    assert_eq!(seq(&["3", ".3", "4"]), "3.0\n3.3\n3.6\n3.9\n");
    assert_eq!(seq(&[".7", "-.9", "-2.2"]), "0.7\n-0.2\n-1.1\n-2.0\n");
    assert_eq!(seq(&["3", ".30", "4.000"]), "3.00\n3.30\n3.60\n3.90\n");
    assert_eq!(seq(&["1", "0.5", "2.75"]), "1.0\n1.5\n2.0\n2.5\n");
    assert_eq!(seq(&["-s,", "1.0e0", "2"]), "1.0,2.0\n");
}

#[test]
fn seq_steps_exactly_without_floating_point_drift() {
    let out = seq(&["0", "0.1", "1"]);
    assert_eq!(out.lines().count(), 11);
    assert!(out.ends_with("0.9\n1.0\n"));
}

#[test]
fn seq_keeps_the_sign_of_a_negative_zero_start() {
    assert_eq!(seq(&["-.0", "-.25", "-.9"]), "-0.00\n-0.25\n-0.50\n-0.75\n");
}

#[test]
fn seq_s_sets_the_separator() {
    assert_eq!(seq(&["-s", ":", "-1", "1"]), "-1:0:1\n");
    assert_eq!(seq(&["-s", "", "3"]), "123\n");
}

#[test]
fn seq_w_pads_to_equal_width_with_zeros() {
    assert_eq!(seq(&["-w", "8", "10"]), "08\n09\n10\n");
    assert_eq!(
        seq(&["-s,", "-w", "-2", "19", "120"]),
        "-02,017,036,055,074,093,112\n"
    );
    assert_eq!(
        seq(&["-w", "03", ".3", "0004"]),
        "0003.0\n0003.3\n0003.6\n0003.9\n"
    );
}

#[test]
fn seq_f_formats_each_number_printf_style() {
    assert_eq!(
        seq(&["-f", "%+01g", "-10", "5", "10"]),
        "-10\n-5\n+0\n+5\n+10\n"
    );
    assert_eq!(
        seq(&["-f", "%03g", "-s", ";", "5", "-1", "3"]),
        "005;004;003\n"
    );
    assert_eq!(seq(&["-f", "n=%.2f%%", "1", "2"]), "n=1.00%\nn=2.00%\n");
    assert_eq!(seq(&["-f", "%e", "1", "1"]), "1.000000e+00\n");
}

#[test]
fn seq_rejects_bad_formats_and_numbers_with_exit_1() {
    for args in [
        &["-f", "%d", "1"][..],
        &["-f", "%f %f", "1"],
        &["1f"],
        &["1", "1f", "2"],
        &["--", "x"],
    ] {
        let outcome = run("seq", args, b"");
        assert_eq!(outcome.code, 1, "{args:?}");
        assert!(outcome.stdout.is_empty());
    }
}

#[test]
fn seq_needs_one_to_three_operands() {
    assert_eq!(run("seq", &[], b"").code, 2);
    assert_eq!(run("seq", &["1", "2", "3", "4"], b"").code, 2);
}

#[test]
fn seq_counts_large_ranges_exactly() {
    assert_eq!(
        seq(&["9007199254740991", "9007199254740993"]),
        "9007199254740991\n9007199254740992\n9007199254740993\n"
    );
    let out = seq(&["99998", "100001"]);
    assert_eq!(out, "99998\n99999\n100000\n100001\n");
}

#[test]
fn seq_accepts_hex_and_exponent_operands() {
    assert_eq!(seq(&["0x3"]), "1\n2\n3\n");
    assert_eq!(seq(&["1e1", "1e1"]), "10\n");
}

#[test]
fn seq_counting_carries_into_new_digits_and_batches_long_runs() {
    let want: String = (1..=120_000).map(|n| format!("{n}\n")).collect();
    assert_eq!(seq(&["120000"]), want);
    assert_eq!(seq(&["-s", ", ", "8", "11"]), "8, 9, 10, 11\n");
    assert_eq!(seq(&["-s", "", "98", "101"]), "9899100101\n");
    assert_eq!(seq(&["0", "0"]), "0\n");
    // Runs that start and end on either side of a ten, and that cross from
    // eight digits to nine.
    for (first, last) in [
        (7, 33),
        (10, 19),
        (10, 20),
        (10, 21),
        (0, 10),
        (99_999_975, 100_000_012),
    ] {
        let want: String = (first..=last).map(|n: u64| format!("{n}\n")).collect();
        let (first, last) = (first.to_string(), last.to_string());
        assert_eq!(seq(&[&first, &last]), want, "seq {first} {last}");
    }
}
