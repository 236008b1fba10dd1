//! Deny brokers: first-party components that serve a WASI interface family
//! by refusing every operation, for guests whose toolchain imports it
//! whether or not the program uses it (componentize-py imports all of
//! `wasi:sockets` in every component).
//!
//! The operator opts in per family (`--stub wasi:sockets`,
//! [`crate::EngineBuilder::stub`], [`crate::Grant::with_stub`], `#+STUB:` in
//! a toolkit manifest). At dock time an import of a stubbed family whose
//! cap is not granted is served by the deny broker, composed into the
//! guest (wac plug) exactly as a cap's broker is; the receipt names it.
//!
//! Invariant: a stub never widens a grant. Nothing of the host is linked
//! for a stubbed import (the composed artifact is re-checked and must not
//! import the family at all); a granted cap is always served by the host
//! instead, never by a refusal; and the deny broker itself imports only the
//! base `wasi:io` types its signatures name.

use super::brokers::Broker;
use crate::embedded;
use crate::policy::Stub;
use std::sync::OnceLock;

/// The deny broker of `stub`.
pub(crate) fn broker(stub: Stub) -> &'static Broker {
    static SOCKETS: OnceLock<Broker> = OnceLock::new();
    static HTTP: OnceLock<Broker> = OnceLock::new();
    match stub {
        Stub::Sockets => SOCKETS.get_or_init(|| Broker {
            serves: "wasi:sockets/* (every operation refused: access-denied)",
            name: embedded::DENY_SOCKETS.name.to_string(),
            artifact: embedded::DENY_SOCKETS.artifact(),
            replaced: false,
        }),
        Stub::Http => HTTP.get_or_init(|| Broker {
            serves: "wasi:http/outgoing-handler (every request refused: HTTP-request-denied)",
            name: embedded::DENY_HTTP.name.to_string(),
            artifact: embedded::DENY_HTTP.artifact(),
            replaced: false,
        }),
    }
}

/// Whether the deny broker of `stub` exports `import` (at a compatible
/// version): it exports the WASI 0.2 interfaces, so a 0.3 import of the
/// same family is not its to serve.
pub(crate) fn serves(stub: Stub, import: &str) -> bool {
    static SOCKETS: OnceLock<Vec<String>> = OnceLock::new();
    static HTTP: OnceLock<Vec<String>> = OnceLock::new();
    let exports = match stub {
        Stub::Sockets => &SOCKETS,
        Stub::Http => &HTTP,
    }
    .get_or_init(|| {
        super::imports::surface(broker(stub).artifact.bytes())
            .ok()
            .flatten()
            .map(|s| s.exports)
            .unwrap_or_default()
    });
    exports
        .iter()
        .any(|e| super::precheck::same_interface(e, import))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deny_broker_imports_no_network_and_exports_every_sockets_interface() {
        let broker = broker(Stub::Sockets);
        let surface = super::super::imports::surface(broker.artifact.bytes())
            .unwrap()
            .unwrap();
        assert!(!surface.imports.is_empty());
        for import in &surface.imports {
            assert_eq!(
                super::super::imports::classify(import),
                super::super::Need::Base,
                "the deny broker imports {import}"
            );
        }
        for iface in [
            "network",
            "instance-network",
            "ip-name-lookup",
            "tcp",
            "tcp-create-socket",
            "udp",
            "udp-create-socket",
        ] {
            let name = format!("wasi:sockets/{iface}@0.2.12");
            assert!(surface.exports.contains(&name), "{name} not exported");
        }
    }

    #[test]
    fn the_http_deny_broker_imports_only_the_http_values_and_base_wasi() {
        let surface = super::super::imports::surface(broker(Stub::Http).artifact.bytes())
            .unwrap()
            .unwrap();
        assert_eq!(surface.exports, ["wasi:http/outgoing-handler@0.2.12"]);
        assert!(serves(Stub::Http, "wasi:http/outgoing-handler@0.2.0"));
        assert!(!serves(Stub::Http, "wasi:http/client@0.3.0"));
        assert!(serves(Stub::Sockets, "wasi:sockets/tcp@0.2.3"));
        assert!(!serves(Stub::Sockets, "wasi:sockets/types@0.3.0"));
        assert!(
            surface
                .imports
                .iter()
                .any(|i| i.starts_with("wasi:http/types@"))
        );
        for import in &surface.imports {
            let need = super::super::imports::classify(import);
            assert!(
                need == super::super::Need::Base || Stub::Http.host_values(import),
                "the http deny broker imports {import}"
            );
        }
    }
}
