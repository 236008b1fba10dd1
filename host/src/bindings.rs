//! Host-side bindings for the interfaces the host implements itself: the
//! always-linked `session-info`; the host primitives that first-party
//! brokers import (`storage`, `http`, `keys`, `fifo`, `wire`, `launch`,
//! `volumes`, `egress`); and the shell broker's export, which the host
//! calls. Every guest-facing `workbooks:engine/*` interface with a cap is
//! served by a broker component and has no host binding.

wasmtime::component::bindgen!({
    path: ["../wit", "../wit/host"],
    world: "workbooks:host/served",
    imports: {
        "workbooks:host/launch.run": async | trappable,
        "workbooks:host/launch.start": async | trappable,
        "workbooks:host/launch.[method]job.wait": async | trappable,
        "workbooks:host/launch.[method]job.kill": trappable,
        "workbooks:host/egress.send": async,
        "workbooks:host/egress.get-many": async,
        "workbooks:host/wire.exchange": async,
        "workbooks:host/fifo.push": async,
        "workbooks:host/fifo.pop": async,
        "workbooks:host/fifo.len": async,
        "workbooks:host/http.get": async,
    },
    exports: { default: async },
    with: {
        "workbooks:host/launch.job": crate::cap::launch::Job,
    },
});
