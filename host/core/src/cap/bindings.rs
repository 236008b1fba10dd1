//! Host-side bindings for the interfaces the host implements itself: the
//! always-linked `session-info`; `vfs` and `net`, served in the host
//! because they move bulk bytes (see their modules); the host primitives
//! that first-party brokers import (`kv`, `http`, `secrets`, `queue`,
//! `exchange`, `launch`, `llm`); and the exports the host calls (the shell
//! broker's, a TCP service's). The other guest-facing interfaces are served
//! by broker components and have no host binding; a service's own (the
//! agent's `tools` and `telemetry`) are bound in its crate.

wasmtime::component::bindgen!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/served",
    imports: {
        "workbooks:host/launch.run": async | trappable,
        "workbooks:host/launch.start": async | trappable,
        "workbooks:host/launch.pipeline": async | trappable,
        "workbooks:host/launch.run-many": async | trappable,
        "workbooks:host/launch.[method]job.wait": async | trappable,
        "workbooks:host/launch.[method]job.kill": trappable,
        "workbooks:engine/net.send": async,
        "workbooks:engine/net.fetch": async,
        "workbooks:engine/net.fetch-many": async,
        "workbooks:host/exchange.exchange": async,
        "workbooks:host/http.get": async,
    },
    exports: { default: async },
    with: {
        "workbooks:host/launch.job": crate::cap::launch::Job,
    },
});
