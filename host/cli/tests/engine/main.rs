#![expect(clippy::unwrap_used, reason = "tests fail loudly by design")]

//! Integration tests of the engine: one binary, one module per probe suite.
//! Every probe in `guests/test-programs` must have a test named after it
//! (`foreach_<suite>!(assert_test_exists)` fails to compile otherwise).

/// The child binary the `os_process` and `container` tiers start.
const CHILD: &str = env!("CARGO_BIN_EXE_wbx");

macro_rules! assert_test_exists {
    ($name:ident) => {
        #[expect(unused_imports, reason = "only checks that the test exists")]
        use self::$name as _;
    };
}

mod agent;
mod agent_cost;
mod agent_exec;
mod agent_grant;
mod agent_model;
mod api;
mod bound;
mod brokers;
mod bundle;
mod call;
mod catalog;
mod cli;
mod commands;
mod common;
mod compiler;
mod compose;
mod container;
mod daemon;
mod defects;
mod docs;
mod fabric;
mod grant_children;
mod grant_lanes;
mod grant_names;
mod grants;
mod home;
mod knock;
mod lanes;
mod ledger;
mod mcp;
mod model_server;
mod net;
mod node;
mod node_grant;
mod node_trust;
mod oci;
mod operator;
mod pipe;
mod replay;
mod requests;
mod scope;
mod secrets;
mod serve;
mod servers;
mod stub;
mod tamper;
mod toolkit;
mod toolkit_ship;
mod verbs;
mod vfs;
mod wasi03;
mod wasip1;
