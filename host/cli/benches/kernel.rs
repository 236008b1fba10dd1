//! Kernels and the fabric against their peers, in one run:
//! - a core kernel called on a 64-byte payload (one instance, one memory
//!   copy in and out per call) against the same function compiled
//!   natively, in calls per second;
//! - a 1 MiB payload through the kernel ABI (copy in, call, and the
//!   output copied out or lent in place), and through an echo kernel,
//!   against a plain 1 MiB memcpy;
//! - 10 000 small tasks through the fabric: kernel tasks and `true`
//!   command tasks at `instance`, width 1, 2 and 4; `true` over the `node`
//!   tier with 1, 2 and 4 local `wbx worker`s on a nats-server started
//!   here (skipped when `nats-server` is not installed); each row with its
//!   scaling ratio.
//!
//! `cargo bench -p workbooks-cli --bench kernel`

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;
use support::median;

use std::time::{Duration, Instant};
use workbooks::LineOptions;
use workbooks::kernel::{CoreKernel, KernelOptions};
use workbooks_fabric::{FabricOptions, Target, TaskInput};

/// Adds one to every byte (`guest_artifacts::KERNEL_BUMP_WAT`).
use guest_artifacts::KERNEL_BUMP_WAT as BUMP;

/// Answers its input as it is, with one bulk copy inside the kernel: the
/// least work a kernel can do on a payload.
const ECHO: &str = r#"(module (memory (export "memory") 2)
  (func (export "process") (param $n i32) (result i32)
    (memory.copy (i32.const 65536) (i32.const 1024) (local.get $n))
    (local.get $n)))"#;

/// Answers as many bytes as it was given, where its output lies, without
/// touching them: the kernel ABI's own cost and nothing else.
const ANSWER: &str = r#"(module (memory (export "memory") 2)
  (func (export "process") (param $n i32) (result i32) (local.get $n)))"#;

/// The same function, natively, through the same in/out copies.
fn native_bump(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(input.iter().map(|b| b.wrapping_add(1)));
}

fn main() {
    let full = support::start();
    let calls: u32 = if full { 2_000_000 } else { 10_000 };
    let home = tempfile::tempdir().expect("home");
    let engine = workbooks::Engine::builder()
        .home(home.path())
        .build()
        .expect("engine");
    let wasm = wat::parse_str(BUMP).expect("wat");
    workbooks::kernel::Kernels::of(&engine)
        .register("bump", wasm, "process", false)
        .expect("register");
    let artifact = workbooks::kernel::Kernels::of(&engine)
        .load("bump")
        .expect("load");
    let mut kernel =
        CoreKernel::load(&engine, &artifact, KernelOptions::default()).expect("kernel");

    // 64-byte calls per second.
    let payload = [b'a'; 64];
    let mut out = Vec::with_capacity(1 << 21);
    let rounds = |f: &mut dyn FnMut()| {
        let mut times = Vec::new();
        for _ in 0..5 {
            let start = Instant::now();
            f();
            times.push(start.elapsed());
        }
        median(times)
    };
    let kernel_64 = rounds(&mut || {
        for _ in 0..calls {
            kernel.call_into(&payload, &mut out).expect("call");
        }
    });
    assert_eq!(out, [b'b'; 64]);
    let native_64 = rounds(&mut || {
        for _ in 0..calls {
            native_bump(std::hint::black_box(&payload), &mut out);
        }
    });
    let rate = |d: Duration| f64::from(calls) / d.as_secs_f64();
    println!(
        "kernel 64 B: {:>12.0} calls/s   native: {:>12.0} calls/s   native/kernel {:.1}x",
        rate(kernel_64),
        rate(native_64),
        kernel_64.as_secs_f64() / native_64.as_secs_f64()
    );

    // 1 MiB through the kernel ABI against one memcpy of the same size:
    // what the ABI itself costs (the input copied in, the call, the output
    // copied out or lent where it lies), then an echo kernel, which adds
    // its own bulk copy inside.
    let big = vec![b'a'; 1 << 20];
    let n = if full { 200 } else { 5 };
    let mut copy = vec![0u8; 1 << 20];
    let memcpy_1m = rounds(&mut || {
        for _ in 0..n {
            copy.copy_from_slice(std::hint::black_box(&big));
            std::hint::black_box(&mut copy);
        }
    });
    let per = |d: Duration| d / n;
    println!("1 MiB payload: memcpy {:>10.2?}", per(memcpy_1m));
    let one_mib = |name: &str, wat: &str| {
        let wasm = wat::parse_str(wat).expect("wat");
        workbooks::kernel::Kernels::of(&engine)
            .register(name, wasm, "process", false)
            .expect("register");
        let loaded = workbooks::kernel::Kernels::of(&engine)
            .load(name)
            .expect("load");
        CoreKernel::load(&engine, &loaded, KernelOptions::default()).expect("kernel")
    };
    let report = |what: &str, d: Duration| {
        println!(
            "  {what:<46} {:>10.2?}/call   x memcpy {:.2}",
            per(d),
            d.as_secs_f64() / memcpy_1m.as_secs_f64()
        );
    };
    let mut answer = one_mib("answer", ANSWER);
    let owned = rounds(&mut || {
        for _ in 0..n {
            answer.call_into(&big, &mut out).expect("call");
        }
    });
    assert_eq!(out.len(), 1 << 20);
    report("ABI, output copied out (call_into)", owned);
    let lent = rounds(&mut || {
        for _ in 0..n {
            let len = answer
                .call_with(&big, |out| std::hint::black_box(out).len())
                .expect("call");
            assert_eq!(len, 1 << 20);
        }
    });
    report("ABI, output lent in place (call_with)", lent);
    let mut echo = one_mib("echo", ECHO);
    let echoed = rounds(&mut || {
        for _ in 0..n {
            echo.call_into(&big, &mut out).expect("call");
        }
    });
    assert_eq!(out, big);
    report("echo kernel (its own memory.copy), call_into", echoed);

    // Fabric throughput of small tasks, by width and tier.
    let tasks = if full { 10_000 } else { 200 };
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let inputs: Vec<TaskInput> = (0..tasks)
        .map(|i| TaskInput {
            args: Vec::new(),
            stdin: format!("task {i}"),
        })
        .collect();
    let fan = |target: &Target, opts: &FabricOptions| {
        let start = Instant::now();
        let results = rt
            .block_on(
                workbooks_fabric::Fabric::new(engine.clone()).fan_out_as_host(
                    LineOptions::default(),
                    target,
                    inputs.clone(),
                    opts,
                ),
            )
            .expect("fan out");
        assert!(
            results.len() == tasks && results.iter().all(|r| r.exit == Some(0)),
            "{:?}",
            results.iter().find(|r| r.exit != Some(0))
        );
        tasks as f64 / start.elapsed().as_secs_f64()
    };
    for (label, target) in [
        ("kernel `bump`", Target::Kernel("bump".into())),
        ("command `true`", Target::Command("true".into())),
    ] {
        println!("fabric, {tasks} {label} tasks at instance:");
        let mut base = None;
        for width in [1, 2, 4] {
            let opts = FabricOptions {
                width,
                ..FabricOptions::default()
            };
            let per_s = fan(&target, &opts);
            let base = *base.get_or_insert(per_s);
            println!(
                "  width {width}: {per_s:>10.0} tasks/s   scaling {:.2}x",
                per_s / base
            );
        }
    }
    node_rows(&fan, tasks);
}

/// The node tier's rows: a nats-server on a free loopback port, then 1, 2
/// and 4 workers of this build.
fn node_rows(fan: &dyn Fn(&Target, &FabricOptions) -> f64, tasks: usize) {
    use std::process::{Command, Stdio};
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let store = tempfile::tempdir().expect("store");
    let Ok(mut server) = Command::new("nats-server")
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(store.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        println!("node tier: skipped (nats-server not installed)");
        return;
    };
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(Duration::from_millis(20));
    }
    let url = format!("nats://127.0.0.1:{port}");
    let homes: Vec<tempfile::TempDir> =
        (0..4).map(|_| tempfile::tempdir().expect("home")).collect();
    let mut workers = Vec::new();
    let mut base = None;
    println!("fabric, {tasks} command `true` tasks over node:");
    for count in [1, 2, 4] {
        while workers.len() < count {
            let child = Command::new(env!("CARGO_BIN_EXE_wbx"))
                .arg("--home")
                .arg(homes[workers.len()].path())
                .args(["worker", "--nats", &url, "--concurrency", "2"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("worker");
            workers.push(child);
        }
        let opts = FabricOptions {
            width: 16,
            tier: Some(workbooks_fabric::Tier::Node),
            nats: Some(url.clone()),
            ..FabricOptions::default()
        };
        let per_s = fan(&Target::Command("true".into()), &opts);
        let base = *base.get_or_insert(per_s);
        println!(
            "  {count} worker(s): {per_s:>10.0} tasks/s   scaling {:.2}x",
            per_s / base
        );
    }
    for mut w in workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    let _ = server.kill();
    let _ = server.wait();
}
