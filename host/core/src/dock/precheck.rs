//! The pre-check: what each import of a guest needs under a grant, and
//! what serves it (the host, a cap's broker or a deny broker), before
//! anything is composed or linked; then the same check again on the
//! composition, so no broker reaches past the grant.

use super::brokers;
use super::imports::{self, Need, Role, Surface};
use super::{DockError, ImportReceipt, deny, linker};
use crate::policy::{Cap, CapSet, Grant, Profile};

impl DockError {
    /// The refusal of `interface`, whose cap is not granted under
    /// `profile`, naming what would grant it.
    pub(crate) fn not_granted(cap: Cap, interface: String, profile: Profile) -> DockError {
        let granting: Vec<&str> = Profile::granting(CapSet::EMPTY.with(cap))
            .into_iter()
            .map(Profile::name)
            .collect();
        let mut remedy = if granting.is_empty() {
            "; no profile grants it".to_string()
        } else {
            format!("; granted by {}", granting.join(", "))
        };
        match crate::policy::stub_for(&interface) {
            Some(stub) if deny::serves(stub, &interface) || stub.host_values(&interface) => {
                remedy.push_str(&format!(
                    "; or serve it with the deny broker that refuses every call: --stub {stub}"
                ));
            }
            Some(stub) => remedy.push_str(&format!(
                "; the deny broker of {stub} does not serve it at this version"
            )),
            None => {}
        }
        DockError::NotGranted {
            cap,
            interface,
            profile,
            remedy,
        }
    }
}

/// Applies the pre-check to a guest's imports under a grant. Returns the
/// brokers to compose in and each import's receipt line.
pub(super) fn check<'b>(
    surface: &Surface,
    grant: &Grant,
    role: Role,
    served: &'b brokers::Brokers,
) -> Result<(Vec<&'b brokers::Broker>, Vec<ImportReceipt>), DockError> {
    let classified: Vec<(&String, Need)> = surface
        .imports
        .iter()
        .map(|n| (n, imports::classify_on(role, n)))
        .collect();
    if let Some((name, _)) = classified
        .iter()
        .find(|(_, need)| *need == Need::HostPrimitive)
    {
        return Err(DockError::HostPrimitive {
            interface: (*name).clone(),
        });
    }
    let unknown: Vec<String> = classified
        .iter()
        .filter(|(_, need)| *need == Need::Unknown)
        .map(|(n, _)| (*n).clone())
        .collect();
    if !unknown.is_empty() {
        return Err(DockError::UnknownImports { names: unknown });
    }
    let mut plugs: Vec<&brokers::Broker> = Vec::new();
    let mut receipts = Vec::new();
    for (name, need) in classified {
        let (cap, served_by) = match need {
            Need::Base => ("base".to_string(), "host".to_string()),
            Need::Cap(c) if !grant.caps.contains(c) => {
                let Some(stub) = grant.stubs.serving(name).filter(|s| s.cap() == c) else {
                    return Err(DockError::not_granted(
                        c,
                        name.clone(),
                        grant.profile.effective,
                    ));
                };
                if stub.host_values(name) {
                    receipts.push(ImportReceipt {
                        name: name.clone(),
                        cap: c.word().to_string(),
                        served_by: format!("host: values only, under --stub {stub}"),
                    });
                    continue;
                }
                if !deny::serves(stub, name) {
                    return Err(DockError::not_granted(
                        c,
                        name.clone(),
                        grant.profile.effective,
                    ));
                }
                let b = deny::broker(stub);
                if !plugs.iter().any(|p| p.name == b.name) {
                    plugs.push(b);
                }
                (c.word().to_string(), format!("deny broker {}", b.name))
            }
            Need::Cap(c) => {
                if !linker::served().contains(c) {
                    return Err(DockError::NotServed {
                        cap: c,
                        interface: name.clone(),
                    });
                }
                let by = match served.get(c) {
                    Some(b) if same_interface(b.serves, name) => {
                        if !plugs.iter().any(|p| p.name == b.name) {
                            plugs.push(b);
                        }
                        format!("broker {}", b.name)
                    }
                    _ => "host".to_string(),
                };
                (c.word().to_string(), by)
            }
            Need::HostPrimitive | Need::Unknown => unreachable!("refused above"),
        };
        receipts.push(ImportReceipt {
            name: name.clone(),
            cap,
            served_by,
        });
    }
    Ok((plugs, receipts))
}

/// The pre-check again, on the composed artifact: every import must be
/// base, a granted cap, or a host primitive of a cap whose broker was
/// composed in. Anything else means a broker reaches past its cap.
pub(super) fn recheck(
    imports: &[String],
    grant: &Grant,
    role: Role,
    plugged: &[&brokers::Broker],
    served: &brokers::Brokers,
) -> Result<(), DockError> {
    let brokered = grant
        .caps
        .iter()
        .filter(|c| {
            served
                .get(*c)
                .is_some_and(|b| plugged.iter().any(|p| p.serves == b.serves))
        })
        .fold(CapSet::EMPTY, CapSet::with);
    for name in imports {
        let why = match imports::classify_on(role, name) {
            Need::Base => None,
            Need::Cap(c) if grant.caps.contains(c) && linker::served().contains(c) => None,
            Need::Cap(c) => match grant.stubs.serving(name) {
                Some(stub) if stub.host_values(name) => None,
                Some(stub) => Some(format!(
                    "needs {c}, not granted, and the deny broker of {stub} does not serve it at this version"
                )),
                None => Some(format!("needs {c}, not granted")),
            },
            Need::HostPrimitive => {
                let caps = imports::primitive_caps(name);
                (caps.intersect(brokered).is_empty()).then(|| {
                    format!(
                        "is a host primitive of {}, and no broker of a granted cap it serves was composed in",
                        if caps.is_empty() { "no cap".to_string() } else { caps.to_string() }
                    )
                })
            }
            Need::Unknown => Some("is not served by this engine".to_string()),
        };
        if let Some(why) = why {
            return Err(DockError::ComposedImport {
                interface: name.clone(),
                why,
            });
        }
    }
    Ok(())
}

/// Whether two `pkg/iface@x.y.z` names are the same interface at
/// semver-compatible versions (same major, or same minor below 1.0).
pub(super) fn same_interface(a: &str, b: &str) -> bool {
    let key = |s: &str| {
        let (path, v) = s.split_once('@').unwrap_or((s, ""));
        let mut parts = v.split('.');
        let major = parts.next().unwrap_or("");
        let minor = parts.next().unwrap_or("");
        if major == "0" {
            format!("{path}@0.{minor}")
        } else {
            format!("{path}@{major}")
        }
    };
    key(a) == key(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dock::brokers::Brokers;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_stubbed_family_left_in_a_composition_is_refused_not_linked() {
        let served = Brokers::default();
        let deny = deny::broker(crate::policy::Stub::Sockets);
        let stubbed = Grant::profile("compute").with_stub(crate::policy::Stub::Sockets);
        // The deny broker did not take the import (say, a version it does
        // not export): the host must not link sockets for it.
        let left = names(&["wasi:sockets/tcp@0.2.12"]);
        match recheck(&left, &stubbed, Role::Call, &[deny], &served) {
            Err(DockError::ComposedImport { interface, why }) => {
                assert_eq!(interface, "wasi:sockets/tcp@0.2.12");
                assert_eq!(
                    why,
                    "needs net, not granted, and the deny broker of wasi:sockets does not serve it at this version"
                );
            }
            other => panic!("{other:?}"),
        }
        // The http stub's values are the host's, as data; its handler is not.
        let http = Grant::profile("compute").with_stub(crate::policy::Stub::Http);
        let values = names(&["wasi:http/types@0.2.12"]);
        assert!(recheck(&values, &http, Role::Call, &[], &served).is_ok());
        let handler = names(&["wasi:http/outgoing-handler@0.2.12"]);
        assert!(recheck(&handler, &http, Role::Call, &[], &served).is_err());
    }

    #[test]
    fn a_composition_importing_past_its_grant_is_refused() {
        let served = Brokers::default();
        let kv = served.get(Cap::Kv).unwrap();
        let minimal = Grant::profile("minimal");
        let fine = names(&["wasi:cli/stdout@0.2.6", "workbooks:host/kv@0.1.0"]);
        assert!(recheck(&fine, &minimal, Role::Call, &[kv], &served).is_ok());
        for (import, why) in [
            // A primitive of a cap whose broker was not composed in.
            (
                "workbooks:host/secrets@0.1.0",
                "is a host primitive of secrets",
            ),
            (
                "workbooks:host/unheard-of@0.1.0",
                "is a host primitive of no cap",
            ),
            ("wasi:sockets/tcp@0.2.6", "needs net, not granted"),
            ("wasi:http/types@0.2.6", "needs net, not granted"),
            ("evil:any/thing", "is not served by this engine"),
        ] {
            let imports = names(&["workbooks:host/kv@0.1.0", import]);
            match recheck(&imports, &minimal, Role::Call, &[kv], &served) {
                Err(DockError::ComposedImport {
                    interface,
                    why: got,
                }) => {
                    assert_eq!(interface, import);
                    assert!(got.starts_with(why), "{import}: {got}");
                }
                other => panic!("{import}: {other:?}"),
            }
        }
        // Granted but not composed in: the kv primitive is still out.
        assert!(recheck(&fine, &minimal, Role::Call, &[], &served).is_err());
        // A served handler reads its request through wasi:http/types.
        let handler = names(&["wasi:http/types@0.2.6"]);
        assert!(
            recheck(
                &handler,
                &Grant::profile("compute"),
                Role::HttpHandler,
                &[],
                &served
            )
            .is_ok()
        );
    }

    /// Linking happens in one place: `linker.rs` for components and
    /// `module.rs` for core modules. Any other file of the crate that makes
    /// a `Linker` fails this test.

    #[test]
    fn interfaces_match_across_compatible_versions_only() {
        assert!(same_interface(
            "workbooks:engine/kv@0.1.0",
            "workbooks:engine/kv@0.1.7"
        ));
        assert!(!same_interface(
            "workbooks:engine/kv@0.1.0",
            "workbooks:engine/kv@0.2.0"
        ));
        assert!(!same_interface(
            "workbooks:engine/kv@0.1.0",
            "workbooks:engine/vfs@0.1.0"
        ));
    }
}
