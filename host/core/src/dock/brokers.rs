//! The broker components that serve guest-facing engine interfaces, one
//! per cap word that has one: the shipped ones (`guests/<word>-broker`,
//! embedded in the binary) and any an embedder swaps in without
//! rebuilding ([`crate::EngineBuilder::broker`], `wbx --broker CAP=FILE`).
//!
//! Threat: a replacement broker is third-party code that sits between a
//! guest and the host. It is checked like a first-party one, before any
//! guest is docked with it: it must be a component, export the cap's
//! guest-facing interface, and import nothing but base WASI and the host
//! primitives of its own cap (a kv broker cannot import `secrets`, the
//! filesystem or the network). Everything that must hold whatever a broker
//! does (the tenant, the cadence, the limits) is enforced in the primitive,
//! below it; the dock re-checks every composition's imports as well.

use super::imports::{self, Need};
use crate::artifact::{Artifact, ArtifactKind};
use crate::embedded::BROKERS;
use crate::policy::Cap;
use std::collections::BTreeMap;

/// A broker component and the interface it serves.
#[derive(Debug, Clone)]
pub(crate) struct Broker {
    /// The guest-facing interface it exports (`workbooks:engine/<word>@…`).
    pub(crate) serves: &'static str,
    /// Its package name in compositions and receipts.
    pub(crate) name: String,
    /// The component.
    pub(crate) artifact: Artifact,
    /// Whether an embedder supplied it in place of the shipped one.
    pub(crate) replaced: bool,
}

/// Why a replacement broker was refused.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// No broker serves this cap (it is served by the host, or not at all).
    #[error(
        "broker {cap}: this cap has no broker component to replace (brokered caps: {brokered})"
    )]
    NotBrokered {
        /// The cap word.
        cap: Cap,
        /// The caps that have one.
        brokered: String,
    },
    /// The bytes are not a valid component.
    #[error("broker {cap}: not a valid component: {why}")]
    Invalid {
        /// The cap word.
        cap: Cap,
        /// Why.
        why: String,
    },
    /// The component does not export the cap's interface.
    #[error("broker {cap}: does not export {interface}")]
    MissingExport {
        /// The cap word.
        cap: Cap,
        /// The interface it must export.
        interface: &'static str,
    },
    /// The component imports something a broker of this cap may not.
    #[error(
        "broker {cap}: import {interface} refused (a {cap} broker may import only base WASI and the host primitives of {cap})"
    )]
    ForbiddenImport {
        /// The cap word.
        cap: Cap,
        /// The import.
        interface: String,
    },
}

/// The broker of each brokered cap.
#[derive(Debug, Clone)]
pub(crate) struct Brokers(BTreeMap<Cap, Broker>);

impl Default for Brokers {
    fn default() -> Self {
        Self(
            BROKERS
                .iter()
                .map(|(cap, serves, e)| {
                    let broker = Broker {
                        serves,
                        name: e.name.to_string(),
                        artifact: e.artifact(),
                        replaced: false,
                    };
                    (*cap, broker)
                })
                .collect(),
        )
    }
}

impl Brokers {
    /// The broker serving `cap`, if it is brokered.
    pub(crate) fn get(&self, cap: Cap) -> Option<&Broker> {
        self.0.get(&cap)
    }

    /// The replaced brokers, by cap.
    pub(crate) fn replaced(&self) -> impl Iterator<Item = (Cap, &Artifact)> {
        self.0
            .iter()
            .filter(|(_, b)| b.replaced)
            .map(|(c, b)| (*c, &b.artifact))
    }

    /// Serves `cap` with `bytes` instead of the shipped broker, once they
    /// pass the checks every broker must.
    pub(crate) fn replace(&mut self, cap: Cap, bytes: Vec<u8>) -> Result<(), BrokerError> {
        let Some(shipped) = self.0.get(&cap) else {
            let brokered = self.0.keys().map(|c| c.word()).collect::<Vec<_>>();
            return Err(BrokerError::NotBrokered {
                cap,
                brokered: brokered.join(" "),
            });
        };
        let serves = shipped.serves;
        let invalid = |why: String| BrokerError::Invalid { cap, why };
        let artifact = Artifact::from_bytes(bytes).map_err(|e| invalid(e.to_string()))?;
        if artifact.kind() != ArtifactKind::Component {
            return Err(invalid("a core module, not a component".into()));
        }
        let surface = imports::surface(artifact.bytes())
            .map_err(invalid)?
            .ok_or_else(|| invalid("a core module, not a component".into()))?;
        check_imports(cap, &surface.imports)?;
        if !surface
            .exports
            .iter()
            .any(|e| super::precheck::same_interface(serves, e))
        {
            return Err(BrokerError::MissingExport {
                cap,
                interface: serves,
            });
        }
        let broker = Broker {
            serves,
            name: format!("embedder:{}-broker", cap.word()),
            artifact,
            replaced: true,
        };
        self.0.insert(cap, broker);
        Ok(())
    }
}

/// Refuses any import a broker of `cap` may not have: anything but base
/// WASI and the host primitives that serve `cap`.
fn check_imports(cap: Cap, names: &[String]) -> Result<(), BrokerError> {
    for name in names {
        let allowed = match imports::classify(name) {
            Need::Base => true,
            Need::HostPrimitive => imports::primitive_caps(name).contains(cap),
            Need::Cap(_) | Need::Unknown => false,
        };
        if !allowed {
            return Err(BrokerError::ForbiddenImport {
                cap,
                interface: name.clone(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broker_may_import_its_own_primitive_and_base_wasi_only() {
        let own = ["wasi:cli/stderr@0.2.6", "workbooks:host/kv@0.1.0"];
        assert!(check_imports(Cap::Kv, &own.map(String::from)).is_ok());
        for stolen in [
            "workbooks:host/secrets@0.1.0",
            "workbooks:host/exchange@0.1.0",
            "workbooks:host/unheard-of@0.1.0",
            "wasi:filesystem/preopens@0.2.6",
            "wasi:sockets/tcp@0.2.6",
            "wasi:http/outgoing-handler@0.2.6",
            "workbooks:engine/secrets@0.1.0",
            "evil:any/thing",
        ] {
            let err = check_imports(Cap::Kv, &[stolen.to_string()]).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("broker kv: import {stolen} refused")),
                "{err}"
            );
        }
    }

    #[test]
    fn the_exchange_primitive_serves_each_transport_broker_but_no_other() {
        let exchange = ["workbooks:host/exchange@0.1.0".to_string()];
        for cap in [Cap::Tcp, Cap::Udp, Cap::Tls] {
            assert!(check_imports(cap, &exchange).is_ok(), "{cap}");
        }
        assert!(check_imports(Cap::Queue, &exchange).is_err());
    }

    #[test]
    fn only_brokered_caps_can_be_replaced_and_only_by_a_component() {
        let mut brokers = Brokers::default();
        let err = brokers.replace(Cap::Posix, Vec::new()).unwrap_err();
        assert!(
            matches!(
                err,
                BrokerError::NotBrokered {
                    cap: Cap::Posix,
                    ..
                }
            ),
            "{err}"
        );
        let err = brokers.replace(Cap::Kv, b"not wasm".to_vec()).unwrap_err();
        assert!(
            matches!(err, BrokerError::Invalid { cap: Cap::Kv, .. }),
            "{err}"
        );
        // The shipped secrets broker exports secrets, not kv.
        let secrets = brokers.get(Cap::Secrets).unwrap().artifact.bytes().to_vec();
        let err = brokers.replace(Cap::Kv, secrets).unwrap_err();
        assert!(
            matches!(err, BrokerError::ForbiddenImport { cap: Cap::Kv, .. }),
            "{err}"
        );
        assert!(!brokers.get(Cap::Kv).unwrap().replaced);
    }
}
