//! The probe guests of `guests/test-programs`, built to wasm32-wasip2 by this
//! crate's build script. Each probe is a path constant (`DOCK_KV`, ...);
//! `foreach_<suite>!(mac)` calls `mac!(probe_name)` for every probe of a
//! suite, which lets a test module refuse to compile while a probe lacks a
//! test of the same name.

include!(concat!(env!("OUT_DIR"), "/gen.rs"));
