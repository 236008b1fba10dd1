//! Host-side bindings for the interfaces the host implements itself: the
//! always-linked `session-info`, the `vfs`, `commands` and `exec` caps, and
//! the host primitives that first-party brokers import. Guest-facing
//! interfaces served by broker components (kv) have no host bindings: the
//! broker serves them.

wasmtime::component::bindgen!({
    path: ["../wit", "../wit/host"],
    world: "workbooks:host/served",
    imports: {
        "workbooks:engine/commands.run-command": async,
        "workbooks:engine/exec.spawn": trappable,
        "workbooks:engine/exec.[method]process.wait": async | trappable,
        "workbooks:engine/exec.[method]process.kill": trappable,
    },
    exports: { default: async },
    with: {
        "workbooks:engine/exec.process": crate::cap::exec::Process,
    },
});
