//! Grants that scope by name, attacked from a guest in process and in a
//! `container` child (whose kv, queue and signing calls its parent
//! answers under the same grant): a key or queue outside the grant's
//! prefixes, a listing of everything, a secret or command it does not
//! name; each refused naming the grant, and nothing read, signed or run.

use crate::grants::operator_book;
use crate::scope::engine;
use workbooks::grants::GrantRecord;

/// A line of tenant `t` under `profile` and stored grant `id`.
fn under(e: &workbooks::Engine, id: &str, profile: &str) -> workbooks::shell::LineOptions {
    workbooks::shell::LineOptions {
        profile: profile.into(),
        tenant: "t".into(),
        scope: Some(e.granted_scope(id, "t", "line").unwrap()),
        ..Default::default()
    }
}

/// Registers each probe as an instance-tier command of its name.
fn register(e: &workbooks::Engine, probes: &[(&str, &str)]) {
    use workbooks::commands::{ArgMode, Tier};
    for (name, bytes) in probes {
        let bytes = std::fs::read(bytes).unwrap();
        e.registry()
            .register(name, bytes, ArgMode::Argv, Tier::Instance)
            .unwrap();
    }
}

/// Runs registered command `name` with `args` under `opts`: in process, or
/// in a `container` child through the fabric. Its stdout.
async fn ops(
    e: &workbooks::Engine,
    name: &str,
    args: &[&str],
    opts: workbooks::shell::LineOptions,
    container: bool,
) -> String {
    use workbooks_fabric::{FabricOptions, Target, TaskInput};
    if !container {
        let line = std::iter::once(name.to_string())
            .chain(args.iter().map(|a| format!("'{a}'")))
            .collect::<Vec<_>>()
            .join(" ");
        let out = e.commands().run_line(&line, opts).await.unwrap();
        return String::from_utf8_lossy(&out.stdout).into_owned();
    }
    let fabric = FabricOptions {
        tier: Some(workbooks::commands::Tier::Container),
        ..FabricOptions::default()
    };
    let input = TaskInput {
        args: args.iter().map(|a| a.to_string()).collect(),
        ..TaskInput::default()
    };
    let results = workbooks_fabric::Fabric::new(e.clone())
        .fan_out_as_host(opts, &Target::Command(name.into()), vec![input], &fabric)
        .await
        .unwrap();
    assert_eq!(results[0].error, None, "{:?}", results[0]);
    results[0].stdout.clone()
}

/// Key and queue-name prefixes, attacked from a guest in process and in a
/// `container` child (whose kv and queue calls its parent answers): a key
/// outside them, a listing of everything, a queue not named.
#[tokio::test]
async fn a_key_or_queue_outside_the_grant_s_prefixes_is_refused_in_process_and_in_a_child() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let mut r = GrantRecord::new("t", "test");
    r.prefixes.insert("kv".into(), vec!["users/".into()]);
    r.prefixes.insert("queue".into(), vec!["jobs.".into()]);
    let id = operator_book(&home).add(r).unwrap().id;
    register(
        &e,
        &[
            ("kv", guest_artifacts::KV_OPS),
            ("queue", guest_artifacts::QUEUE_OPS),
        ],
    );
    let opts = || under(&e, &id, "minimal");
    for container in [false, true] {
        let said = ops(
            &e,
            "kv",
            &[
                "set",
                "users/ada",
                "1",
                "set",
                "admin/root",
                "1",
                "list",
                "",
                "get",
                "admin/root",
            ],
            opts(),
            container,
        )
        .await;
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), 4, "container {container}: {said}");
        assert_eq!(lines[0], "Ok(())", "container {container}: {said}");
        let refused = format!("grant {id}: kv scope allows users/*; refused key admin/root");
        assert!(lines[1].contains(&refused), "container {container}: {said}");
        assert_eq!(
            lines[2], "1 keys: users/ada",
            "container {container}: {said}"
        );
        assert!(lines[3].contains(&refused), "container {container}: {said}");
        let said = ops(
            &e,
            "queue",
            &[
                "push",
                "jobs.mail",
                "hi",
                "push",
                "admin",
                "evil",
                "len",
                "admin",
            ],
            opts(),
            container,
        )
        .await;
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), 3, "container {container}: {said}");
        assert!(lines[0].starts_with("Ok("), "container {container}: {said}");
        let refused = format!("grant {id}: queue scope allows jobs.*; refused queue admin");
        assert!(lines[1].contains(&refused), "container {container}: {said}");
        assert!(lines[2].contains(&refused), "container {container}: {said}");
    }
    // Nothing outside the prefixes was written, by either.
    let kv = e.storage().unwrap().kv("t").unwrap();
    assert!(kv.get(b"admin/root").unwrap().is_none());
}

/// Secret and command names, attacked from a guest in process and in a
/// `container` child (whose signing calls its parent answers): a secret
/// the grant does not name, a command it does not name, each refused
/// naming the grant, and nothing signed or run.
#[tokio::test]
async fn a_secret_or_command_the_grant_does_not_name_is_refused_in_process_and_in_a_child() {
    use workbooks::{Secret, SecretKind};
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    for name in ["deploy", "payroll"] {
        let key = Secret::new(SecretKind::Hmac, name.as_bytes().to_vec()).unwrap();
        e.keyring().set("t", name, key).unwrap();
    }
    let mut r = GrantRecord::new("t", "test");
    r.names.insert("secrets".into(), vec!["deploy".into()]);
    r.names.insert(
        "commands".into(),
        vec!["sign".into(), "run".into(), "upper".into()],
    );
    let id = operator_book(&home).add(r).unwrap().id;
    register(
        &e,
        &[
            ("sign", guest_artifacts::SECRETS_OPS),
            ("run", guest_artifacts::COMMANDS_RUN),
        ],
    );
    let opts = |profile: &str| under(&e, &id, profile);
    for container in [false, true] {
        let said = ops(
            &e,
            "sign",
            &["hmac", "deploy", "data", "hmac", "payroll", "data"],
            opts("minimal"),
            container,
        )
        .await;
        let lines: Vec<&str> = said.lines().collect();
        assert_eq!(lines.len(), 2, "container {container}: {said}");
        assert_eq!(lines[0].len(), 64, "container {container}: {said}");
        assert!(
            lines[1].contains(&format!(
                "grant {id}: secrets scope allows deploy; refused secret payroll"
            )),
            "container {container}: {said}"
        );
        let said = ops(&e, "run", &["upper"], opts("posix"), container).await;
        assert!(said.ends_with("exit 0\n"), "container {container}: {said}");
        let said = ops(&e, "run", &["grep", "x"], opts("posix"), container).await;
        assert!(
            said.contains(&format!(
                "grant {id}: commands scope allows sign, run, upper; refused command grep"
            )),
            "container {container}: {said}"
        );
    }
    // A line's own stages are judged too: `grep` is not named.
    let refused = e
        .commands()
        .run_line("upper | grep X", opts("posix"))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("refused command grep"),
        "{refused}"
    );
    let audit = e.cadence().audit().summary();
    assert!(
        audit.counts.get("out_of_scope").copied().unwrap_or(0) >= 5,
        "{audit:?}"
    );
}
