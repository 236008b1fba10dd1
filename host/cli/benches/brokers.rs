//! What a broker costs: the hop on every call, and docking a guest that
//! needs brokers. Same run, both sides, and the difference.
//!
//! Hop: a guest calls `kv.get` of a 100-byte (and a 1 MB) value N times through the
//! shipped kv broker (guest → broker → host primitive), against a
//! component calling the same host primitive N times itself (the test
//! replacement broker repeats a get inside one call). Each side is timed at
//! N and at 0 calls; the difference over N is the cost of one call, so
//! instantiation is not counted.
//!
//! Dock: a guest needing three brokers (tcp, udp, tls), docked first on an
//! empty cache (compose + compile), then from the disk cache by a new
//! engine, then again by the same engine.
//!
//! Scope: the check a scoped grant adds to every network call, a URL's
//! scheme, host and port judged against 16 destinations (allowed by the
//! last, and refused), per call, against its budget of 1 µs.
//!
//! `cargo bench -p workbooks-cli --bench brokers`

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;
use support::median;

use std::path::Path;
use std::time::{Duration, Instant};
use workbooks::{Artifact, Cap, Docked, Engine, Grant, SessionOptions};

/// Broker calls allowed per window: high enough never to be reached here.
const UNLIMITED: u64 = 1 << 40;

fn engine(home: &Path, broker: Option<Vec<u8>>) -> Engine {
    let mut b = Engine::builder()
        .home(home)
        .rate_limit(UNLIMITED, Duration::from_secs(60));
    if let Some(bytes) = broker {
        b = b.broker(Cap::Kv, bytes);
    }
    b.build().expect("engine")
}

struct Kv {
    engine: Engine,
    docked: std::sync::Arc<Docked>,
    rt: tokio::runtime::Runtime,
}

impl Kv {
    fn new(engine: Engine) -> Self {
        let artifact = Artifact::from_file(guest_artifacts::KV_OPS).expect("probe");
        let docked = engine
            .dock(&artifact, &Grant::profile("minimal"))
            .expect("dock");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        Kv { engine, docked, rt }
    }

    fn run(&self, args: &[&str]) -> String {
        let mut opts = SessionOptions::new("bench", "bench");
        opts.args = args.iter().map(|a| a.to_string()).collect();
        opts.timeout = Some(Duration::from_secs(600));
        let out = self
            .rt
            .block_on(self.engine.run(&self.docked, opts))
            .expect("run");
        String::from_utf8(out.stdout.to_vec()).expect("utf-8")
    }

    /// The median time of one run of `args`, which must print `expect`.
    fn time(&self, args: &[&str], expect: &str, samples: usize) -> Duration {
        let mut xs = Vec::with_capacity(samples);
        for _ in 0..samples {
            let t = Instant::now();
            let out = self.run(args);
            xs.push(t.elapsed());
            assert_eq!(out, expect);
        }
        median(xs)
    }
}

/// Per-call cost: (time of `at(n)` − time of `at(0)`) / n.
fn per_call(kv: &Kv, at: impl Fn(usize) -> Vec<String>, n: usize, samples: usize) -> Duration {
    let args = |k: usize| at(k);
    let found =
        |k: usize, guest_calls: usize| format!("found {}\n", if k == 0 { 0 } else { guest_calls });
    let run = |k: usize| {
        let a = args(k);
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        let guest_calls: usize = refs[2].parse().expect("count");
        kv.time(&refs, &found(k, guest_calls), samples)
    };
    run(n / 10); // warm
    let (t0, tn) = (run(0), run(n));
    tn.saturating_sub(t0) / n as u32
}

/// The hop for one value size: through the shipped broker against the
/// primitive called directly, per call.
fn hop(full: bool, bytes: usize, calls: usize) {
    let (n, samples) = if full {
        (calls, 15)
    } else {
        (calls / 100 + 2, 3)
    };
    let set = |kv: &Kv| assert_eq!(kv.run(&["setn", "k", &bytes.to_string()]), "Ok(())\n");
    let home = tempfile::tempdir().expect("home");
    let brokered = Kv::new(engine(home.path(), None));
    set(&brokered);
    let through_broker = per_call(
        &brokered,
        |k| vec!["getn".into(), "k".into(), k.to_string()],
        n,
        samples,
    );
    drop(brokered);
    let other = tempfile::tempdir().expect("home");
    let broker = std::fs::read(guest_artifacts::TEST_KV_BROKER).expect("broker");
    let direct = Kv::new(engine(other.path(), Some(broker)));
    set(&direct);
    // One guest call; the broker makes `k` primitive calls inside it. At
    // zero the guest call returns nothing found.
    let primitive = per_call(
        &direct,
        |k| {
            let guest_calls = if k == 0 { "0" } else { "1" };
            vec!["getn".into(), format!("repeat:{k}:k"), guest_calls.into()]
        },
        n,
        samples,
    );
    println!(
        "kv get, {bytes} bytes: through the broker {through_broker:?}/call, primitive called directly {primitive:?}/call, \
         the hop adds {:?}/call ({:.2}x)",
        through_broker.saturating_sub(primitive),
        through_broker.as_secs_f64() / primitive.as_secs_f64().max(1e-12)
    );
}

fn dock(full: bool) {
    let (firsts, reloads, repeats) = if full { (5, 20, 2_000) } else { (1, 2, 10) };
    let artifact = Artifact::from_file(guest_artifacts::NET_ONESHOT).expect("probe");
    let grant = Grant::profile("minimal");
    let mut first = Vec::new();
    let home = tempfile::tempdir().expect("home");
    for i in 0..firsts {
        let fresh = home.path().join(format!("first-{i}"));
        let engine = engine(&fresh, None);
        let t = Instant::now();
        let docked = engine.dock(&artifact, &grant).expect("dock");
        first.push(t.elapsed());
        assert_eq!(docked.receipt().brokers.len(), 3);
    }
    let warm = home.path().join("first-0");
    let mut reload = Vec::new();
    for _ in 0..reloads {
        let engine = engine(&warm, None);
        let t = Instant::now();
        engine.dock(&artifact, &grant).expect("dock");
        reload.push(t.elapsed());
    }
    let engine = engine(&warm, None);
    engine.dock(&artifact, &grant).expect("dock");
    let mut again = Vec::new();
    for _ in 0..repeats {
        let t = Instant::now();
        engine.dock(&artifact, &grant).expect("dock");
        again.push(t.elapsed());
    }
    println!(
        "dock, 3 brokers (tcp udp tls): first {:?} (compose + compile), new engine from the disk cache {:?}, same engine {:?}",
        median(first),
        median(reload),
        median(again)
    );
}

/// The scope check of one URL, as every hop of a scoped fetch makes it:
/// the floor parses the URL for itself, so what a scope adds is the grant
/// as it is now (a stored grant in the home's book: one clock read, the
/// file looked at once per refresh interval, its expiry) and the judgement
/// of its scheme, host and port (and, refused, the refusal naming it).
fn scope_check(full: bool) {
    use workbooks::grants::{Expiry, GRANTS_FILE, GrantBook, GrantRecord, Lists, Scope};
    let mut patterns: Vec<String> = (0..15)
        .map(|i| format!("https://api{i}.example.com"))
        .collect();
    patterns.push("https://*.target.example:443".into());
    let home = tempfile::tempdir().expect("home");
    let file = home.path().join(GRANTS_FILE);
    let engine_side = std::sync::Arc::new(GrantBook::new(Some(file.clone())));
    let operator = GrantBook::new(Some(file));
    let mut record = GrantRecord::new("t", "bench");
    record.net = Some(patterns);
    record.expires_ms = Some(workbooks::grants::now_ms() + 3_600_000);
    let id = operator.add(record).expect("grant").id;
    // As a session starts under it: the grant read, then judged as it is.
    let scope = Scope::for_session(&engine_side, &id, "t", "line").expect("in force");
    let n: u32 = if full { 1_000_000 } else { 1_000 };
    // The floor's parse gives the scheme, host and port.
    for (what, host, allowed) in [
        ("allowed by the last", "a.target.example", true),
        ("refused", "evil.example", false),
    ] {
        let url = format!("https://{host}/v1/items?page=2");
        let t = Instant::now();
        for _ in 0..n {
            let judged = scope.now().expect("in force").judge(
                "https",
                std::hint::black_box(host),
                443,
                &url,
            );
            assert_eq!(judged.is_ok(), allowed);
        }
        println!(
            "scope check, stored grant of 16 destinations, {what}: {:?}/call (budget 1µs)",
            t.elapsed() / n
        );
    }
    // A narrowing by another handle (as `wbx grant narrow` in another
    // process), until a running instance's next call sees it.
    // One round per destination it can drop (15 of the 16).
    let rounds = if full { 15 } else { 3 };
    let mut seen = Vec::new();
    for i in 0..rounds {
        let drop = format!("https://api{i}.example.com");
        let host = format!("api{i}.example.com");
        assert!(
            scope
                .now()
                .expect("in force")
                .judge("https", &host, 443, "")
                .is_ok()
        );
        let t = Instant::now();
        let drop = Lists {
            net: vec![drop],
            ..Lists::default()
        };
        operator
            .narrow(&id, &Lists::default(), &drop, Expiry::Keep, "bench")
            .expect("narrow");
        while scope
            .now()
            .expect("in force")
            .judge("https", &host, 443, "")
            .is_ok()
        {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        seen.push(t.elapsed());
    }
    seen.sort();
    println!(
        "grant narrowed by another handle, seen by a running instance's next call: median {:?}, worst {:?} of {rounds} (budget 100ms)",
        seen[seen.len() / 2],
        seen[seen.len() - 1]
    );
}

fn main() {
    let full = support::start();
    scope_check(full);
    hop(full, 100, 20_000);
    hop(full, 1_000_000, 200);
    dock(full);
}
