use super::{CoreKernel, Kernel, KernelError, KernelOptions, check_shape};
use crate::artifact::Artifact;
use std::time::Duration;

/// Adds one to every byte; its faults by first byte: 0xff traps, 0xfe
/// loops, 0xfd answers a length past its memory.
use guest_artifacts::KERNEL_BUMP_WAT as BUMP;

fn artifact(wat: &str) -> Artifact {
    Artifact::from_bytes(wat::parse_str(wat).expect("wat")).expect("artifact")
}

fn bump(opts: KernelOptions) -> (tempfile::TempDir, CoreKernel) {
    let (dir, engine) = crate::engine::for_tests();
    let kernel = CoreKernel::load(&engine, &artifact(BUMP), opts).expect("load");
    (dir, kernel)
}

/// Answers how many calls its instance has served (a global), as 4 bytes;
/// traps on an input starting with 0xff.
const COUNT: &str = r#"(module
  (memory (export "memory") 2)
  (global $calls (mut i32) (i32.const 0))
  (func (export "process") (param $n i32) (result i32)
    (if (i32.gt_u (local.get $n) (i32.const 0)) (then
      (if (i32.eq (i32.load8_u (i32.const 1024)) (i32.const 255)) (then unreachable))))
    (global.set $calls (i32.add (global.get $calls) (i32.const 1)))
    (i32.store (i32.const 65536) (global.get $calls))
    (i32.const 4)))"#;

#[test]
fn a_core_kernel_answers_each_call_from_one_instance() {
    let (_dir, mut kernel) = bump(KernelOptions::default());
    for i in 0..1000u32 {
        // First bytes from 40 to 239: clear of the kernel's fault triggers.
        let input = (i % 200 + 40).to_le_bytes();
        let out = kernel.call(&input).expect("call");
        let want: Vec<u8> = input.iter().map(|b| b.wrapping_add(1)).collect();
        assert_eq!(out, want, "call {i}");
    }
    assert_eq!(kernel.calls(), 1000);
}

#[test]
fn state_carries_across_calls_until_a_trap_retires_the_instance() {
    let (_dir, engine) = crate::engine::for_tests();
    let mut kernel =
        CoreKernel::load(&engine, &artifact(COUNT), KernelOptions::default()).expect("load");
    let count =
        |k: &mut CoreKernel| u32::from_le_bytes(k.call(b"").expect("call").try_into().unwrap());
    assert_eq!(
        [count(&mut kernel), count(&mut kernel), count(&mut kernel)],
        [1, 2, 3]
    );
    let err = kernel.call(&[0xff]).unwrap_err();
    assert!(matches!(err, KernelError::Trap { call: 4, .. }), "{err}");
    // Nothing of the faulted instance survives: the count starts again.
    assert_eq!(count(&mut kernel), 1);
}

#[test]
fn a_trap_retires_the_instance_and_names_the_call() {
    let (_dir, mut kernel) = bump(KernelOptions::default());
    assert_eq!(kernel.call(b"a").expect("first"), b"b");
    let err = kernel.call(&[0xff]).unwrap_err();
    assert!(
        matches!(&err, KernelError::Trap { call: 2, why } if why.contains("unreachable")),
        "{err}"
    );
    // The next call runs on a fresh instance and succeeds.
    assert_eq!(kernel.call(b"z").expect("third"), b"{");
}

#[test]
fn a_lent_answer_is_the_owned_answer_and_a_fault_still_retires_the_instance() {
    let (_dir, mut kernel) = bump(KernelOptions::default());
    let input = vec![b'a'; 30_000];
    let owned = kernel.call(&input).expect("owned");
    let lent = kernel.call_with(&input, |out| out.to_vec()).expect("lent");
    assert_eq!((lent.len(), &lent), (30_000, &owned));
    assert_eq!(owned, vec![b'b'; 30_000]);
    // The reader never runs on a fault, and the next call is fresh.
    let mut read = false;
    let err = kernel.call_with(&[0xff], |_| read = true).unwrap_err();
    assert!(matches!(err, KernelError::Trap { call: 3, .. }), "{err}");
    assert!(!read);
    let past = kernel.call_with(&[0xfd], |_| read = true).unwrap_err();
    assert!(
        matches!(past, KernelError::BadOutput { call: 4, .. }),
        "{past}"
    );
    assert!(!read);
    assert_eq!(
        kernel.call_with(b"y", |out| out.to_vec()).expect("fresh"),
        b"z"
    );
}

#[test]
fn a_looping_kernel_is_stopped_by_its_fuel_then_by_its_deadline() {
    let (_dir, mut kernel) = bump(KernelOptions {
        fuel: 1_000_000,
        ..KernelOptions::default()
    });
    let err = kernel.call(&[0xfe]).unwrap_err();
    assert_eq!(
        err,
        KernelError::Fuel {
            call: 1,
            fuel: 1_000_000
        }
    );
    assert_eq!(kernel.call(b"a").expect("after fuel"), b"b");

    let (_dir, mut kernel) = bump(KernelOptions {
        fuel: u64::MAX,
        timeout: Duration::from_millis(100),
        ..KernelOptions::default()
    });
    let err = kernel.call(&[0xfe]).unwrap_err();
    assert!(matches!(err, KernelError::Timeout { call: 1, .. }), "{err}");
    assert_eq!(kernel.call(b"a").expect("after timeout"), b"b");
}

#[test]
fn an_answer_past_the_kernels_memory_is_refused() {
    let (_dir, mut kernel) = bump(KernelOptions::default());
    let err = kernel.call(&[0xfd]).unwrap_err();
    assert!(
        matches!(&err, KernelError::BadOutput { call: 1, why } if why.contains("past its 131072 byte memory")),
        "{err}"
    );
}

#[test]
fn a_large_input_grows_memory_up_to_the_cap_and_no_further() {
    let (_dir, mut kernel) = bump(KernelOptions {
        memory: 4 << 20,
        ..KernelOptions::default()
    });
    let input = vec![7u8; 1 << 20];
    let out = kernel.call(&input).expect("1 MiB");
    assert_eq!(out, vec![8u8; 1 << 20]);
    let err = kernel.call(&vec![7u8; 5 << 20]).unwrap_err();
    assert!(
        matches!(err, KernelError::Memory { call: 2, limit, .. } if limit == 4 << 20),
        "{err}"
    );
    // The refused input left the instance usable.
    assert_eq!(kernel.call(b"a").expect("after"), b"b");
}

/// Grows its memory past 64 MiB of output room, then answers exactly the
/// output cap (first input byte 1) or one byte more (2): both inside its
/// memory.
const HUGE: &str = r#"(module
  (memory (export "memory") 2)
  (func (export "process") (param $n i32) (result i32)
    (if (i32.lt_u (memory.size) (i32.const 1030)) (then
      (drop (memory.grow (i32.sub (i32.const 1030) (memory.size))))))
    (i32.add (i32.const 67108864)
      (i32.sub (i32.load8_u (i32.const 1024)) (i32.const 1)))))"#;

#[test]
fn an_answer_past_the_output_cap_is_refused_even_inside_the_kernels_memory() {
    let (_dir, engine) = crate::engine::for_tests();
    let opts = KernelOptions {
        memory: 80 << 20,
        ..KernelOptions::default()
    };
    let mut kernel = CoreKernel::load(&engine, &artifact(HUGE), opts).expect("load");
    let at_cap = kernel.call(&[1]).expect("an answer of exactly the cap");
    assert_eq!(at_cap.len(), super::KERNEL_MAX_OUTPUT_BYTES);
    let err = kernel.call(&[2]).unwrap_err();
    assert!(
        matches!(&err, KernelError::BadOutput { call: 2, why } if why == "answered 67108865 bytes, over 67108864"),
        "{err}"
    );
}

#[test]
fn an_input_past_the_input_cap_is_refused_before_any_call() {
    let (_dir, mut kernel) = bump(KernelOptions::default());
    let err = kernel
        .call(&vec![0u8; super::KERNEL_MAX_INPUT_BYTES + 1])
        .unwrap_err();
    assert_eq!(err.reason(), "input_too_large");
    assert_eq!(kernel.calls(), 0);
}

#[test]
fn modules_without_the_kernel_shape_are_refused_by_name() {
    let cases = [
        (
            r#"(module (import "env" "leak" (func)) (memory (export "memory") 1)
                (func (export "process") (param i32) (result i32) (local.get 0)))"#,
            "imports function env.leak",
        ),
        (
            r#"(module (func (export "process") (param i32) (result i32) (local.get 0)))"#,
            "exports no `memory`",
        ),
        (
            r#"(module (memory (export "memory") 1) (func (export "run") (param i32) (result i32) (local.get 0)))"#,
            "exports no function `process`",
        ),
        (
            r#"(module (memory (export "memory") 1) (func (export "process") (param i64) (result i32) (i32.const 0)))"#,
            "must be (i32) -> i32",
        ),
    ];
    for (wat, want) in cases {
        let err = check_shape(&artifact(wat), "process").unwrap_err();
        assert!(
            matches!(&err, KernelError::NotAKernel(why) if why.contains(want)),
            "{want}: {err}"
        );
    }
    assert!(check_shape(&artifact(BUMP), "process").is_ok());
    // The entry is the one named: another name is looked for, not assumed.
    let err = check_shape(&artifact(BUMP), "calls").unwrap_err();
    assert_eq!(
        err,
        KernelError::NotAKernel("exports no function `calls`".into())
    );
}

#[tokio::test]
async fn the_kernel_enum_loads_a_core_module_as_a_core_kernel() {
    let (_dir, engine) = crate::engine::for_tests();
    let mut kernel = Kernel::load(&engine, &artifact(BUMP), KernelOptions::default())
        .await
        .expect("load");
    assert!(matches!(kernel, Kernel::Core(_)));
    assert_eq!(kernel.call(b"HAL").await.expect("call"), b"IBM");
    assert_eq!(kernel.calls(), 1);
}
