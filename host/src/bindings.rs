//! Host-side bindings for the interfaces the host implements itself: the
//! always-linked `session-info`; the `vfs`, `commands`, `exec`, `net`,
//! `tcp`, `udp`, `tls`, `queue` and `secrets` caps; the host primitives
//! that first-party brokers import (`storage`, `http`); and the shell
//! broker's export, which the host calls. Guest-facing interfaces served by
//! broker components (kv, browse) have no host bindings: the broker serves
//! them.

wasmtime::component::bindgen!({
    path: ["../wit", "../wit/host"],
    world: "workbooks:host/served",
    imports: {
        "workbooks:engine/commands.run-command": async,
        "workbooks:engine/exec.spawn": trappable,
        "workbooks:engine/exec.[method]process.wait": async | trappable,
        "workbooks:engine/exec.[method]process.kill": trappable,
        "workbooks:engine/net.send": async,
        "workbooks:engine/net.fetch": async,
        "workbooks:engine/net.fetch-many": async,
        "workbooks:engine/tcp.request": async,
        "workbooks:engine/udp.request": async,
        "workbooks:engine/tls.request": async,
        "workbooks:engine/queue.push": async,
        "workbooks:engine/queue.pop": async,
        "workbooks:engine/queue.pop-wait": async,
        "workbooks:engine/queue.len": async,
        "workbooks:host/http.get": async,
    },
    exports: { default: async },
    with: {
        "workbooks:engine/exec.process": crate::cap::exec::Process,
    },
});
