//! The probe guests of `guests/test-programs`, built to wasm32-wasip2 by this
//! crate's build script. Each probe is a path constant (`DOCK_KV`, ...);
//! `foreach_<suite>!(mac)` calls `mac!(probe_name)` for every probe of a
//! suite, which lets a test module refuse to compile while a probe lacks a
//! test of the same name.

include!(concat!(env!("OUT_DIR"), "/gen.rs"));

/// A core kernel (the reference ABI) in WAT: adds one to every byte of its
/// input, walking from the last byte down so an input long enough to reach
/// the output offset is read before it is overwritten. Its faults, by the
/// input's first byte: `!` or 0xff traps, 0xfe loops for ever, 0xfd
/// answers a length past its memory.
pub const KERNEL_BUMP_WAT: &str = r#"(module
  (memory (export "memory") 2)
  (func (export "process") (param $n i32) (result i32) (local $i i32) (local $first i32)
    (if (i32.gt_u (local.get $n) (i32.const 0)) (then
      (local.set $first (i32.load8_u (i32.const 1024)))
      (if (i32.or (i32.eq (local.get $first) (i32.const 255)) (i32.eq (local.get $first) (i32.const 33)))
        (then unreachable))
      (if (i32.eq (local.get $first) (i32.const 254)) (then (loop $forever (br $forever))))
      (if (i32.eq (local.get $first) (i32.const 253)) (then (return (i32.const 1000000))))))
    (local.set $i (local.get $n))
    (block $done (loop $next
      (br_if $done (i32.eqz (local.get $i)))
      (local.set $i (i32.sub (local.get $i) (i32.const 1)))
      (i32.store8 (i32.add (i32.const 65536) (local.get $i))
        (i32.add (i32.load8_u (i32.add (i32.const 1024) (local.get $i))) (i32.const 1)))
      (br $next)))
    (local.get $n)))"#;
