#![expect(clippy::unwrap_used, reason = "tests fail loudly by design")]

//! The core's engine tests, from its public API alone: one binary, one
//! module per probe suite or concern. Every probe of a suite tested here
//! must have a test named after it (`foreach_<suite>!(assert_test_exists)`
//! fails to compile otherwise). The tiers' children are the core's own
//! `workbooks-child`: nothing here needs `wbx`.

macro_rules! assert_test_exists {
    ($name:ident) => {
        #[expect(unused_imports, reason = "only checks that the test exists")]
        use self::$name as _;
    };
}

/// The child binary the `os_process` and `container` tiers start.
const CHILD: &str = env!("CARGO_BIN_EXE_workbooks-child");

mod brokers;
mod child;
mod commands;
mod common;
mod descriptors;
mod dock;
mod exec;
mod front;
mod instance;
mod kv;
mod limits;
mod loopback;
mod modules;
mod pipe;
mod queue;
mod sandbox;
mod secrets;
mod serve;
mod serve_tcp;
mod shell;
mod tamper;
mod tier;
mod vfs;
mod wasi03_shared;
