//! `wbx command register` says what it would replace. (The registry, the
//! deny ladder, the envelope and the tiers: the core's tests.)

use crate::common::{text, wbx};
use guest_artifacts::*;

#[test]
fn wbx_command_register_says_what_it_would_replace_and_replaces_only_when_told() {
    let home = tempfile::tempdir().unwrap();
    let reg = |file: &str, extra: &[&str]| {
        let mut args = vec!["command", "register", "greet", file];
        args.extend_from_slice(extra);
        wbx(home.path(), &args, b"")
    };
    assert!(reg(CLI_HELLO, &[]).status.success());
    let o = reg(CLI_CAT, &[]);
    assert_eq!(o.status.code(), Some(120));
    assert!(
        text(&o.stderr).contains("pass --replace"),
        "{}",
        text(&o.stderr)
    );
    let o = reg(CLI_CAT, &["--replace"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("(replaced sha256:"),
        "{}",
        text(&o.stdout)
    );
}
