//! Docking: every profile × every interface the engine serves (each
//! `workbooks:engine/*` interface, `wasi:http`, `wasi:sockets`,
//! `wasi:filesystem`) instantiates iff granted, every refusal names the
//! capability, and every receipt lists exactly what was linked.

use crate::common::{Failure, artifact, engine, ok_stdout, own_engine, run, run_with};
use guest_artifacts::*;
use workbooks::dock::imports::{self, Need};
use workbooks::dock::{Role, analyse};
use workbooks::{Cap, CapSet, DockError, Grant, Profile, Receipt, RunOutput, SessionOptions};

guest_artifacts::foreach_dock!(assert_test_exists);

/// Runs `probe` under `profile` narrowed to `caps`.
async fn run_narrowed(
    probe: &str,
    profile: Profile,
    caps: &[workbooks::Cap],
) -> Result<RunOutput, Failure> {
    let grant = Grant::narrowed(profile.name(), CapSet::of(caps)).expect("narrowing");
    run_with(probe, &grant, SessionOptions::new("probe", "default")).await
}

/// Docks `probe` under every profile: it must run and print `prints`
/// exactly where the profile grants `cap`, and be refused naming `cap`,
/// the import and the profile everywhere else. Where it runs, the receipt
/// must list exactly what was linked: nothing outside the grant, and
/// `interface` itself when the host serves it, its host primitive (never
/// the interface) when a broker does.
async fn matrix(probe: &str, cap: Cap, interface: &str, args: &[&str], prints: &str) {
    for profile in Profile::ALL {
        let granted = profile.caps().contains(cap);
        match run(probe, profile, args).await {
            Ok(out) => {
                assert!(granted, "{probe} ran under {profile} without {cap}");
                assert_eq!(
                    crate::common::stdout(&out),
                    prints,
                    "{probe} under {profile}"
                );
                let grant = Grant::profile(profile.name());
                let docked = engine().dock(&artifact(probe), &grant).unwrap();
                receipt_is_exact(docked.receipt(), cap, interface);
            }
            Err(f) => {
                assert!(!granted, "{probe} refused under {profile}: {f:?}");
                let e = f.dock();
                assert!(
                    matches!(e, DockError::NotGranted { cap: c, .. } if c == cap),
                    "{e}"
                );
                let text = e.to_string();
                let head = format!("capability not granted: {} (import ", cap.word());
                assert!(text.starts_with(&head), "{text}");
                // It names every profile that grants the cap, in order.
                let granting: Vec<&str> = Profile::granting(CapSet::of(&[cap]))
                    .into_iter()
                    .map(Profile::name)
                    .collect();
                assert!(!granting.is_empty());
                let remedy = format!(
                    "under profile {profile}; granted by {}",
                    granting.join(", ")
                );
                assert!(text.contains(&remedy), "{text}");
                // The import it names is one of the probe's that needs the cap.
                let named = text[head.len()..].split(')').next().unwrap();
                assert_eq!(imports::classify(named), Need::Cap(cap), "{text}");
                let ours = analyse(&artifact(probe)).unwrap();
                assert!(ours.imports.iter().any(|i| i.name == named), "{text}");
            }
        }
    }
}

fn receipt_is_exact(r: &Receipt, cap: Cap, interface: &str) {
    assert!(r.caps.contains(cap));
    for name in &r.linked {
        let within = match imports::classify(name) {
            Need::Base => true,
            Need::Cap(c) => r.caps.contains(c),
            Need::HostPrimitive => !imports::primitive_caps(name).intersect(r.caps).is_empty(),
            Need::Unknown => false,
        };
        assert!(within, "{name} was linked under {}", r.caps);
    }
    let brokered = r.brokers.iter().find(|b| b.serves.starts_with(interface));
    let linked_itself = r.linked.iter().any(|l| l.starts_with(interface));
    match brokered {
        Some(b) => {
            assert!(
                !linked_itself,
                "{interface} is served by {} yet linked",
                b.name
            );
            assert!(
                r.linked
                    .iter()
                    .any(|l| imports::primitive_caps(l).contains(cap)),
                "no primitive of {cap} linked: {:?}",
                r.linked
            );
        }
        None => assert!(linked_itself, "{interface} not linked: {:?}", r.linked),
    }
    let line = r
        .imports
        .iter()
        .find(|i| i.name.starts_with(interface))
        .unwrap();
    assert_eq!(line.cap, cap.word());
}

/// One test per interface probe, each running [`matrix`].
macro_rules! matrix_tests {
    ($($test:ident = $probe:ident: $cap:ident, $interface:literal, $prints:literal;)*) => {$(
        #[tokio::test]
        async fn $test() {
            matrix($probe, Cap::$cap, $interface, &[], $prints).await;
        }
    )*};
}

matrix_tests! {
    dock_vfs = DOCK_VFS: Vfs, "workbooks:engine/vfs@", "vfs works\n";
    dock_kv = DOCK_KV: Kv, "workbooks:engine/kv@", "kv works\n";
    dock_commands = DOCK_COMMANDS: Commands, "workbooks:engine/commands@", "commands answers\n";
    dock_exec = DOCK_EXEC: Exec, "workbooks:engine/exec@", "exec answers\n";
    dock_net = DOCK_NET: Net, "workbooks:engine/net@", "net answers\n";
    dock_browse = DOCK_BROWSE: Browse, "workbooks:engine/browse@", "browse answers\n";
    dock_tcp = DOCK_TCP: Tcp, "workbooks:engine/tcp@", "tcp answers\n";
    dock_udp = DOCK_UDP: Udp, "workbooks:engine/udp@", "udp answers\n";
    dock_tls = DOCK_TLS: Tls, "workbooks:engine/tls@", "tls answers\n";
    dock_queue = DOCK_QUEUE: Queue, "workbooks:engine/queue@", "queue answers\n";
    dock_secrets = DOCK_SECRETS: Secrets, "workbooks:engine/secrets@", "secrets answers\n";
    dock_http_types = DOCK_HTTP_TYPES: Net, "wasi:http/types@", "http-types answers\n";
    dock_http_out = DOCK_HTTP_OUT: Net, "wasi:http/outgoing-handler@", "http answers\n";
    dock_sockets = DOCK_SOCKETS: Net, "wasi:sockets/", "sockets answers\n";
}

#[tokio::test]
async fn dock_fs() {
    matrix(
        DOCK_FS,
        Cap::Vfs,
        "wasi:filesystem/",
        &["/"],
        "/: error: No such file or directory (os error 44)\n",
    )
    .await;
    // wasi:filesystem is linked under vfs but sees no directory by default:
    // both listings fail, and they are the only lines.
    let out = ok_stdout(run(DOCK_FS, Profile::Posix, &["/", "."]).await);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("/: error: "), "{out}");
    assert!(lines[1].starts_with(".: error: "), "{out}");
}

/// A component served over HTTP reads its request through the
/// `wasi:http/types` values, so the handler role links them without `net`;
/// called, the same import needs `net`.
#[test]
fn http_types_come_with_net_or_with_being_served() {
    let probe = artifact(DOCK_HTTP_TYPES);
    let compute = Grant::profile("compute");
    let e = engine().dock(&probe, &compute).unwrap_err();
    assert!(
        matches!(e, DockError::NotGranted { cap: Cap::Net, .. }),
        "{e}"
    );
    let served = engine()
        .dock_on(&probe, &compute, Role::HttpHandler)
        .unwrap();
    assert!(
        served
            .receipt()
            .linked
            .iter()
            .any(|l| l.starts_with("wasi:http/types@"))
    );
    let out = engine().dock_on(&artifact(DOCK_HTTP_OUT), &compute, Role::HttpHandler);
    assert!(
        matches!(out, Err(DockError::NotGranted { cap: Cap::Net, .. })),
        "outbound needs net"
    );
}

#[tokio::test]
async fn narrowed_caps_take_interfaces_away() {
    // minimal grants both vfs and kv; narrowing removes each in turn.
    let e = run_narrowed(DOCK_KV, Profile::Minimal, &[Cap::Vfs])
        .await
        .unwrap_err()
        .dock();
    assert!(
        e.to_string().contains(
            "capability not granted: kv (import workbooks:engine/kv@0.1.0) under profile minimal"
        ),
        "{e}"
    );
    let e = run_narrowed(DOCK_VFS, Profile::Minimal, &[Cap::Kv])
        .await
        .unwrap_err()
        .dock();
    assert!(
        e.to_string()
            .contains("capability not granted: vfs (import workbooks:engine/vfs@0.1.0)"),
        "{e}"
    );
    let e = run_narrowed(DOCK_FS, Profile::Posix, &[Cap::Kv])
        .await
        .unwrap_err()
        .dock();
    assert!(
        e.to_string()
            .contains("capability not granted: vfs (import wasi:filesystem/"),
        "{e}"
    );
    assert_eq!(
        ok_stdout(run_narrowed(DOCK_KV, Profile::Minimal, &[Cap::Kv]).await),
        "kv works\n"
    );
}

#[tokio::test]
async fn dock_session() {
    for profile in Profile::ALL {
        let out = ok_stdout(run(DOCK_SESSION, profile, &[]).await);
        assert_eq!(
            out,
            format!(
                "id=probe tenant=default profile={profile} caps={}\n",
                profile.caps().words().join(",")
            )
        );
    }
    // An unknown profile runs, fail-closed, as compute.
    let grant = Grant::profile("superuser");
    assert!(grant.profile.fell_back());
    let d = engine().dock(&artifact(DOCK_SESSION), &grant).unwrap();
    assert_eq!(d.receipt().profile_requested, "superuser");
    assert_eq!(d.receipt().profile_effective, Profile::Compute);
}

#[tokio::test]
async fn a_brokered_import_is_composed_and_only_its_primitive_linked() {
    // The receipt shows the broker composed in and the primitive linked in
    // place of the engine interface.
    let d = engine()
        .dock(&artifact(DOCK_KV), &Grant::profile("minimal"))
        .unwrap();
    let r = d.receipt();
    assert_eq!(r.brokers.len(), 1);
    assert_eq!(r.brokers[0].serves, "workbooks:engine/kv@0.1.0");
    assert!(r.composed_sha256.is_some());
    assert!(r.linked.iter().any(|i| i == "workbooks:host/kv@0.1.0"));
    assert!(
        !r.linked
            .iter()
            .any(|i| i.starts_with("workbooks:engine/kv@")),
        "{:?}",
        r.linked
    );
    // The error type the guest and the primitive share is linked, and
    // reaches nothing: it has no functions.
    assert!(
        r.linked
            .iter()
            .any(|i| i == "workbooks:engine/kv-types@0.1.0"),
        "{:?}",
        r.linked
    );
    let kv = r
        .imports
        .iter()
        .find(|i| i.name == "workbooks:engine/kv@0.1.0")
        .unwrap();
    assert_eq!(
        (kv.cap.as_str(), kv.served_by.as_str()),
        ("kv", "broker workbooks:kv-broker")
    );
}

#[tokio::test]
async fn dock_host_kv() {
    for profile in Profile::ALL {
        let e = run(DOCK_HOST_KV, profile, &[]).await.unwrap_err().dock();
        assert!(matches!(e, DockError::HostPrimitive { .. }), "{e}");
        assert!(e.to_string().contains("workbooks:host/kv@0.1.0"), "{e}");
    }
}

#[tokio::test]
async fn dock_unknown_import() {
    for profile in Profile::ALL {
        let e = run(DOCK_UNKNOWN_IMPORT, profile, &[])
            .await
            .unwrap_err()
            .dock();
        assert_eq!(
            e.to_string(),
            "unknown imports refused: evil:probe/backdoor"
        );
    }
}

#[test]
fn core_modules_dock_as_commands_and_are_refused_on_the_handler_lane() {
    let module = workbooks::Artifact::from_bytes(b"\0asm\x01\0\0\0".to_vec()).unwrap();
    let docked = engine().dock(&module, &Grant::profile("posix")).unwrap();
    assert!(!docked.is_command(), "an empty module has no _start");
    let e = engine()
        .dock_on(
            &module,
            &Grant::profile("posix"),
            workbooks::dock::Role::HttpHandler,
        )
        .unwrap_err();
    assert!(matches!(e, DockError::NotAComponent), "{e}");
}

#[test]
fn an_artifact_is_validated_on_load_until_its_compiled_form_is_cached() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("hello.wasm");
    std::fs::copy(CLI_HELLO, &good).unwrap();
    // A well-formed header over a body that is not WebAssembly.
    let mut bytes = std::fs::read(CLI_HELLO).unwrap();
    let tail = bytes.len() - 64;
    bytes[tail..].fill(0xff);
    let bad = dir.path().join("bad.wasm");
    std::fs::write(&bad, &bytes).unwrap();

    let first = e.load_artifact(&good).unwrap();
    e.dock(&first, &Grant::profile("compute")).unwrap();
    // Cached now: loading it again gives the same artifact, and so would
    // a new engine on the same home (it reads the sealed cache).
    assert_eq!(e.load_artifact(&good).unwrap().sha256(), first.sha256());
    // The damaged copy hashes differently, so nothing vouches for it: it
    // is validated, and refused by name, before anything docks it.
    for engine in [&e, &own_engine(home.path())] {
        match engine.load_artifact(&bad) {
            Err(workbooks::ArtifactError::Invalid(why)) => assert!(!why.is_empty()),
            other => panic!("{:?}", other.map(|a| a.sha256_hex())),
        }
    }
}

#[test]
fn a_module_using_wasm_gc_types_is_refused_so_the_gc_advisories_are_out_of_reach() {
    // A struct allocated and read back: Wasm GC, which the engine leaves
    // off (wasmtime 48.0.8's open GC advisories need it).
    let wasm = wat::parse_str(
        r#"(module
             (type $pair (struct (field i32) (field i32)))
             (func (export "_start")
               (drop (struct.get $pair 0 (struct.new $pair (i32.const 1) (i32.const 2))))))"#,
    )
    .unwrap();
    let refused = match workbooks::Artifact::from_bytes(wasm) {
        Err(e) => e.to_string(),
        Ok(module) => engine()
            .dock(&module, &Grant::profile("posix"))
            .map(|_| ())
            .unwrap_err()
            .to_string(),
    };
    assert!(
        refused.contains("gc") || refused.contains("GC"),
        "{refused}"
    );
}
