//! Host-side bindings for the interfaces the host implements itself: the
//! always-linked `session-info`, the `vfs` cap, and the host primitives
//! that first-party brokers import. Guest-facing interfaces served by broker
//! components (kv) have no host bindings: the broker serves them.

wasmtime::component::bindgen!({
    path: ["../wit", "../wit/host"],
    world: "workbooks:host/served",
});
