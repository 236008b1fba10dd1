//! The WAT build lane against its peer: a module of 1 000 functions
//! compiled in the sandbox, as `toolkit build` does it (the build broker
//! docked fresh, running the `wat` command through `commands`: the text
//! in, the binary validated and handed back), the `wat` command alone (a
//! fresh instance under `compute`), and by the same `wat` and `wasmparser`
//! crates built natively, in one run; prints the medians and the ratios.
//!
//! `cargo bench -p workbooks-cli --bench wat_lane`

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;
use support::median;

use std::time::Instant;
use workbooks::{CapSet, LineOptions, Stdin};

/// A module of `n` functions, each adding its index to its argument.
fn module_text(n: usize) -> String {
    let mut text = String::from("(module\n");
    for i in 0..n {
        text.push_str(&format!(
            "  (func $f{i} (export \"f{i}\") (param i32) (result i32)\n    local.get 0\n    i32.const {i}\n    i32.add)\n"
        ));
    }
    text.push(')');
    text
}

fn native(text: &str) -> Vec<u8> {
    let bytes = wat::parse_str(text).expect("wat");
    let mut v = wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all());
    v.validate_all(&bytes).expect("valid");
    bytes
}

fn main() {
    let full = support::start();
    let rounds = if full { 30 } else { 2 };
    let text = module_text(1000);
    let home = tempfile::tempdir().expect("home");
    let engine = workbooks::Engine::builder()
        .home(home.path())
        .build()
        .expect("engine");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let expected = native(&text);
    let lane = || {
        let opts = LineOptions {
            profile: "compute".into(),
            caps: Some(CapSet::EMPTY),
            stdin: Stdin::Bytes(text.clone().into()),
            ..LineOptions::default()
        };
        rt.block_on(engine.commands().run("wat", Vec::new(), opts))
            .expect("the lane runs")
    };
    let broker = || {
        rt.block_on(workbooks_toolkit::build_in_sandbox(
            &engine,
            "wat",
            text.clone().into_bytes(),
        ))
        .expect("the broker builds")
    };
    // Warm: the compile caches, the native allocator.
    assert_eq!(broker(), expected, "the broker and the crate disagree");
    let out = lane();
    assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        out.stdout.to_vec(),
        expected,
        "the lane and the crate disagree"
    );
    let mut brokered = Vec::new();
    let mut sandboxed = Vec::new();
    let mut natively = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        std::hint::black_box(broker());
        brokered.push(t.elapsed());
        let t = Instant::now();
        let out = lane();
        sandboxed.push(t.elapsed());
        assert_eq!(out.exit_code, 0);
        let t = Instant::now();
        std::hint::black_box(native(&text));
        natively.push(t.elapsed());
    }
    let (b, s, n) = (median(brokered), median(sandboxed), median(natively));
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "wat lane, 1000 functions ({} bytes of text → {} bytes): through the build broker {:.2} ms ({:.2}×), the wat command alone {:.2} ms ({:.2}×), native {:.2} ms",
        text.len(),
        expected.len(),
        ms(b),
        b.as_secs_f64() / n.as_secs_f64(),
        ms(s),
        s.as_secs_f64() / n.as_secs_f64(),
        ms(n),
    );
}
