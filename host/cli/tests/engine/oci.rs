//! `wbx push`, `wbx pull` and `oci://` references, against a real
//! registry (the CNCF distribution server on loopback).

use crate::common::{text, wbx_env};
use guest_artifacts::{CLI_EXIT_CODE, CLI_HELLO, NET_FETCH};
use workbooks_oci::testing::DistributionServer;

/// The author's key, and another one.
const AUTHOR_SEED: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
const STRANGER_SEED: &str = "BQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQU=";
/// The operator opens the loopback registry for itself (not for guests).
const OPEN: (&str, &str) = ("WB_OPERATOR_ALLOW", "127.0.0.1/32");

fn did_of(seed: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let o = wbx_env(home.path(), &["identity"], b"", &[("WB_SIGNING_KEY", seed)]);
    text(&o.stdout).lines().next().unwrap().to_string()
}

/// Pushes `file` to `reference` signed with `seed`; the manifest digest.
fn push(reference: &str, file: &str, seed: &str) -> String {
    let home = tempfile::tempdir().unwrap();
    let o = wbx_env(
        home.path(),
        &["push", file, reference, "--json"],
        b"",
        &[OPEN, ("WB_SIGNING_KEY", seed)],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["signer"], did_of(seed));
    v["digest"].as_str().unwrap().to_string()
}

#[test]
fn a_pushed_component_runs_by_reference_in_a_fresh_home_and_only_through_the_floor() {
    let server = DistributionServer::start();
    let reference = server.reference("tools/hello:v1");
    let digest = push(&reference, CLI_HELLO, AUTHOR_SEED);
    let home = tempfile::tempdir().unwrap();
    // The floor refuses a loopback registry the operator did not open.
    let o = wbx_env(home.path(), &["exec", &reference], b"", &[]);
    assert_eq!(o.status.code(), Some(120), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("WB_OPERATOR_ALLOW=127.0.0.1/32"),
        "{}",
        text(&o.stderr)
    );
    let o = wbx_env(home.path(), &["exec", &reference], b"", &[OPEN]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(0), "hello\n".into()),
        "{}",
        text(&o.stderr)
    );
    assert!(text(&o.stderr).contains(&digest), "{}", text(&o.stderr));
    // By digest, once pulled: the registry is not asked again, and with
    // no connection to make, the TLS roots file is not read either.
    let pinned = server.reference(&format!("tools/hello@{digest}"));
    drop(server);
    let endless = ("WB_TLS_CA_FILE", "/dev/zero");
    for args in [
        vec!["exec", pinned.as_str()],
        vec!["inspect", pinned.as_str()],
    ] {
        let o = wbx_env(home.path(), &args, b"", &[OPEN, endless]);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    }
}

#[test]
fn signers_required_by_flag_env_or_trust_file_refuse_an_unsigned_or_strangers_artifact() {
    let server = DistributionServer::start();
    let signed = server.reference("x:signed");
    let stranger = server.reference("x:stranger");
    let unsigned = server.reference("x:unsigned");
    push(&signed, CLI_HELLO, AUTHOR_SEED);
    // Other bytes (a signature is over a digest: the same bytes pushed
    // twice share one manifest, and its signatures).
    push(&stranger, CLI_EXIT_CODE, STRANGER_SEED);
    let author = tempfile::tempdir().unwrap();
    let o = wbx_env(
        author.path(),
        &["push", CLI_HELLO, &unsigned, "--no-sign"],
        b"",
        &[OPEN, ("SOURCE_DATE_EPOCH", "1")],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let did = did_of(AUTHOR_SEED);
    let home = tempfile::tempdir().unwrap();
    for r in [&stranger, &unsigned] {
        let o = wbx_env(home.path(), &["pull", r, "--signer", &did], b"", &[OPEN]);
        assert_eq!(o.status.code(), Some(120), "{r}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains("unsigned:"), "{}", text(&o.stderr));
        let o = wbx_env(
            home.path(),
            &["exec", r],
            b"",
            &[OPEN, ("WB_OCI_SIGNERS", &did)],
        );
        assert_eq!(o.status.code(), Some(120), "{r}: {}", text(&o.stderr));
    }
    assert!(
        !home.path().join("store").exists()
            || std::fs::read_dir(home.path().join("store"))
                .unwrap()
                .count()
                == 0
    );
    let o = wbx_env(
        home.path(),
        &["pull", &signed, "--signer", &did, "--json"],
        b"",
        &[OPEN],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["signers"][0], did.as_str());
    // The home's trust file requires the author for every run.
    std::fs::create_dir_all(home.path().join("oci")).unwrap();
    std::fs::write(
        home.path().join("oci/trust.json"),
        serde_json::json!({ "signers": [did] }).to_string(),
    )
    .unwrap();
    let o = wbx_env(home.path(), &["exec", &stranger], b"", &[OPEN]);
    assert_eq!(o.status.code(), Some(120), "{}", text(&o.stderr));
    let o = wbx_env(home.path(), &["exec", &signed], b"", &[OPEN]);
    assert_eq!(text(&o.stdout), "hello\n", "{}", text(&o.stderr));
}

#[test]
fn a_name_registered_by_reference_keeps_its_digest_when_the_tag_moves() {
    let server = DistributionServer::start();
    let stable = server.reference("tools/t:stable");
    let first = push(&stable, CLI_HELLO, AUTHOR_SEED);
    let home = tempfile::tempdir().unwrap();
    let o = wbx_env(
        home.path(),
        &["command", "register", "t", &stable],
        b"",
        &[OPEN],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let pinned = server.reference(&format!("tools/t@{first}"));
    assert!(
        text(&o.stdout).contains(&format!("from {pinned}")),
        "{}",
        text(&o.stdout)
    );
    // The tag moves to other bytes.
    push(&stable, CLI_EXIT_CODE, AUTHOR_SEED);
    let o = wbx_env(home.path(), &["run", "t"], b"", &[OPEN]);
    assert_eq!(text(&o.stdout), "hello\n", "{}", text(&o.stderr));
    let o = wbx_env(home.path(), &["command", "show", "t"], b"", &[]);
    let shown = text(&o.stdout);
    assert!(shown.contains(&pinned), "{shown}");
    // Run by the tag, the new bytes.
    let o = wbx_env(home.path(), &["exec", &stable, "--", "3"], b"", &[OPEN]);
    assert_eq!(
        (o.status.code(), text(&o.stdout)),
        (Some(3), "out\n".into()),
        "{}",
        text(&o.stderr)
    );
    // Registered again from a file, the origin goes.
    let o = wbx_env(
        home.path(),
        &["command", "register", "t", CLI_HELLO, "--replace"],
        b"",
        &[],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = wbx_env(home.path(), &["command", "show", "t"], b"", &[]);
    assert!(!text(&o.stdout).contains("origin"), "{}", text(&o.stdout));
}

#[test]
fn a_registry_with_htpasswd_takes_the_docker_config_or_the_password_on_stdin() {
    use base64::Engine as _;
    let server = DistributionServer::start_with(&[("ann", "s3cret")]);
    let reference = server.reference("private/hello:1");
    let home = tempfile::tempdir().unwrap();
    let o = wbx_env(
        home.path(),
        &["push", CLI_HELLO, &reference, "--no-sign"],
        b"",
        &[OPEN],
    );
    assert_eq!(o.status.code(), Some(126), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("not authorized"),
        "{}",
        text(&o.stderr)
    );
    let args = [
        "push",
        CLI_HELLO,
        &reference,
        "--no-sign",
        "--username",
        "ann",
        "--password-stdin",
    ];
    let o = wbx_env(home.path(), &args, b"s3cret\n", &[OPEN]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let docker = home.path().join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode("ann:s3cret");
    std::fs::write(
        docker.join("config.json"),
        serde_json::json!({ "auths": { server.registry(): { "auth": auth } } }).to_string(),
    )
    .unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let o = wbx_env(
        fresh.path(),
        &["exec", &reference],
        b"",
        &[OPEN, ("DOCKER_CONFIG", docker.to_str().unwrap())],
    );
    assert_eq!(text(&o.stdout), "hello\n", "{}", text(&o.stderr));
}

#[test]
fn a_toolkit_builds_from_an_oci_digest_signed_by_its_named_signer_and_never_from_a_tag() {
    let server = DistributionServer::start();
    let digest = push(&server.reference("tools/hello:1"), CLI_HELLO, AUTHOR_SEED);
    let root = tempfile::tempdir().unwrap();
    let kit = |src: &str, signer: &str| {
        let dir = root.path().join("hello-oci");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("manifest.org"),
            format!(
                "#+TITLE: Hello by reference\n#+TOOLKIT: hello-oci\n#+EXEC: command\n#+CLI_BIN: hello-oci\n#+BUILD_SRC: {src}\n#+OCI_SIGNER: {signer}\n\n* Hello by reference :toolkit:\n:PROPERTIES:\n:ID: hello-oci\n:CLI_BIN: hello-oci\n:END:\nA component pulled by digest.\n"
            ),
        )
        .unwrap();
    };
    let home = tempfile::tempdir().unwrap();
    let r = root.path().to_str().unwrap();
    let build = || {
        wbx_env(
            home.path(),
            &["toolkit", "--root", r, "build", "hello-oci", "--replace"],
            b"",
            &[OPEN],
        )
    };
    let by_digest = format!("oci:{}/tools/hello@{digest}", server.registry());
    kit(
        &format!("oci:{}/tools/hello:1", server.registry()),
        &did_of(AUTHOR_SEED),
    );
    let o = build();
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("not a tag"), "{}", text(&o.stderr));
    kit(&by_digest, &did_of(STRANGER_SEED));
    let o = build();
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("not signed by a required signer"),
        "{}",
        text(&o.stderr)
    );
    kit(&by_digest, &did_of(AUTHOR_SEED));
    let o = build();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = wbx_env(home.path(), &["run", "hello-oci"], b"", &[]);
    assert_eq!(text(&o.stdout), "hello\n", "{}", text(&o.stderr));
}

#[test]
fn pull_output_onto_a_symlink_replaces_the_link_and_leaves_its_target_alone() {
    let server = DistributionServer::start();
    let reference = server.reference("tools/hello:link");
    push(&reference, CLI_HELLO, AUTHOR_SEED);
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The attacker's link points at a file the user did not name.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"keep me").unwrap();
    let out = dir.path().join("hello.wasm");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    let o = wbx_env(
        home.path(),
        &["pull", &reference, "-o", out.to_str().unwrap()],
        b"",
        &[OPEN],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&victim).unwrap(), b"keep me");
    assert!(
        !out.symlink_metadata().unwrap().is_symlink(),
        "still a link"
    );
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(CLI_HELLO).unwrap()
    );
}

/// The attack of issue 54: the operator opens a registry on this machine
/// for itself, and a guest it pulls from there turns to the registry's
/// API (or any other loopback port) through its own network.
#[test]
fn a_registry_opened_for_the_operator_is_closed_to_the_guests_it_pulls_from_there() {
    let server = DistributionServer::start();
    let reference = server.reference("tools/fetch:1");
    push(&reference, NET_FETCH, AUTHOR_SEED);
    let api = format!("http://{}/v2/_catalog", server.registry());
    let home = tempfile::tempdir().unwrap();
    let guest = |mode: &str, env: &[(&str, &str)]| {
        let args = ["exec", "--profile", "network", &reference, "--", mode, &api];
        let o = wbx_env(home.path(), &args, b"", env);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    // Through the engine's net interface and through wasi:http alike, the
    // guest's floor holds: the registry's address is not the guests'.
    for mode in ["fetch", "http"] {
        let out = guest(mode, &[OPEN]);
        assert!(
            out.starts_with(&format!("{api}: error")) && !out.contains("repositories"),
            "{mode}: {out}"
        );
    }
    // The control: opened to guests on purpose, the same guest lists the
    // registry's repositories, so the refusal above is the split's.
    let out = guest("fetch", &[OPEN, ("WB_NET_ALLOW", "127.0.0.1/32")]);
    assert!(out.contains("repositories"), "{out}");
}
