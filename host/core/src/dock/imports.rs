//! Reading a component's imports before anything is instantiated, and
//! mapping each to the cap word that grants it.
//!
//! The map is the policy's reach made concrete: base WASI (io, clocks,
//! random, cli) is always linked; `wasi:filesystem` needs `vfs`;
//! `wasi:sockets` and `wasi:http` need `net` (a component served over HTTP
//! gets the `wasi:http/types` values without it: see [`Role`]); `workbooks:engine/<word>`
//! needs `<word>` (`session-info` is always linked); `workbooks:host/*` is
//! refused for every guest, since those primitives are for first-party
//! brokers only; anything else is refused by name. Only top-level imports
//! count: a nested component's imports must be satisfied by its parent.

mod surface;

pub use surface::{Surface, surface};

use crate::policy::{Cap, CapSet};

/// What an import needs in order to be linked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Always linked.
    Base,
    /// Linked when this cap is granted.
    Cap(Cap),
    /// A host primitive: refused for guests.
    HostPrimitive,
    /// Not something the engine serves.
    Unknown,
}

/// What a docked component is for, where that changes what it may import.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Role {
    /// Called by the host (commands, plugins, instances).
    #[default]
    Call,
    /// Served over HTTP (`wbx serve`): it reads its request and writes its
    /// response through the `wasi:http/types` values, so those are linked
    /// for every grant; outbound `wasi:http` still needs `net`.
    HttpHandler,
    /// A service's own component: the host interfaces of the
    /// [`Extension`](super::Extension) are linked for it, and for nothing
    /// else.
    Extended(&'static super::Extension),
}

/// The caps whose brokers a host primitive serves: a broker of one of
/// them may import it, and it is linked when one of them is granted. Read
/// from what the shipped brokers import, so no table can drift from them;
/// anything that is not a host primitive serves no cap.
pub fn primitive_caps(name: &str) -> CapSet {
    if classify(name) != Need::HostPrimitive {
        return CapSet::EMPTY;
    }
    // The cap table's row of it, whose caps are read from the brokers.
    crate::state::caps::caps_of(unversioned(name))
}

fn unversioned(name: &str) -> &str {
    name.split_once('@').map_or(name, |(path, _)| path)
}

/// Maps an import to what it needs in `role`.
pub(crate) fn classify_on(role: Role, name: &str) -> Need {
    match classify(name) {
        Need::Cap(Cap::Net) if role == Role::HttpHandler && is_http_types(name) => Need::Base,
        // An extension may serve a host primitive's name or one the
        // engine does not know, never a cap's.
        Need::HostPrimitive | Need::Unknown if matches!(role, Role::Extended(e) if e.serves(name)) => {
            Need::Base
        }
        need => need,
    }
}

/// Whether `name` is `wasi:http/types` at any version.
pub(crate) fn is_http_types(name: &str) -> bool {
    name.split_once('@').map_or(name, |(p, _)| p) == "wasi:http/types"
}

/// The engine's types-only interfaces (`workbooks:engine/<name>-types`),
/// each shared by a cap's guest-facing interface and its primitive, or by
/// several caps: no functions, no reach, so every component may import
/// them (the base links each). Read from the shipped brokers, which
/// import each one they pass through, so a new cap's types need no line
/// here.
pub(crate) fn types_only() -> &'static [&'static str] {
    static TYPES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    TYPES.get_or_init(|| {
        let mut types: Vec<&'static str> = crate::embedded::BROKER_IMPORTS
            .iter()
            .flat_map(|(_, names)| names.iter())
            .filter_map(|name| name.strip_prefix("workbooks:engine/"))
            .filter(|name| name.ends_with("-types"))
            .collect();
        types.sort_unstable();
        types.dedup();
        types
    })
}

/// The newest `wasi:*@0.2.x` patch version the engine's WASI serves.
const WASI_PATCH_MAX: u64 = 12;

fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let core = v.split(['-', '+']).next()?;
    let mut it = core.split('.').map(|n| n.parse::<u64>().ok());
    Some((it.next()??, it.next()??, it.next()??))
}

/// The `wasi:cli` interfaces base at 0.2 and 0.3 alike (0.3 adds `types`).
const CLI: [&str; 10] = [
    "environment",
    "exit",
    "stdin",
    "stdout",
    "stderr",
    "terminal-input",
    "terminal-output",
    "terminal-stdin",
    "terminal-stdout",
    "terminal-stderr",
];

/// The one WASI 0.3 release the engine serves (wasmtime-wasi's `p3`).
/// A later 0.3.x may add functions the host lacks, so it is not served
/// under this one's name: it is refused as unknown.
const WASI_03: (u64, u64, u64) = (0, 3, 0);

/// WASI 0.3.0, interface by interface: the same words as 0.2 (cli, clocks
/// and random are base, filesystem is `vfs`, sockets and the http client
/// are `net`). `wasi:clocks/timezone` is unstable and not served.
fn classify_wasi_03(package: &str, iface: &str) -> Need {
    match (package, iface) {
        ("wasi:cli", "types") | ("wasi:clocks", "types" | "monotonic-clock" | "system-clock") => {
            Need::Base
        }
        ("wasi:cli", iface) if CLI.contains(&iface) => Need::Base,
        ("wasi:random", "random" | "insecure" | "insecure-seed") => Need::Base,
        ("wasi:filesystem", "types" | "preopens") => Need::Cap(Cap::Vfs),
        ("wasi:sockets", "types" | "ip-name-lookup") => Need::Cap(Cap::Net),
        ("wasi:http", "types" | "client") => Need::Cap(Cap::Net),
        _ => Need::Unknown,
    }
}

/// Why a `wasi:*` import the engine does not serve is not served, when
/// its version says more than "unknown": a release the engine is older or
/// newer than, or a release candidate.
pub(crate) fn unserved_version(name: &str) -> Option<String> {
    let (path, version) = name.split_once('@')?;
    if !path.starts_with("wasi:") {
        return None;
    }
    let served = format!("this engine serves WASI 0.2.0 to 0.2.{WASI_PATCH_MAX} and 0.3.0");
    if version.contains('-') {
        return Some(format!(
            "WASI {version} is a release candidate; rebuild against a release: {served}"
        ));
    }
    match parse_version(version)? {
        (0, 2, patch) if patch > WASI_PATCH_MAX => {
            Some(format!("WASI {version} is not served; {served}"))
        }
        (0, 2, _) | (0, 3, 0) if classify(name) == Need::Unknown => Some(format!(
            "{path} is not part of WASI {version} as served here"
        )),
        (0, 2, _) | (0, 3, 0) => None,
        _ => Some(format!("WASI {version} is not served; {served}")),
    }
}

/// Maps an import name (`ns:pkg/iface@version`) to what it needs.
pub fn classify(name: &str) -> Need {
    let (path, version) = name.split_once('@').unwrap_or((name, ""));
    let Some((package, iface)) = path.split_once('/') else {
        return Need::Unknown;
    };
    if package == "workbooks:host" {
        return Need::HostPrimitive;
    }
    // A release candidate is never linked to a release's definitions.
    if package.starts_with("wasi:") && version.contains('-') {
        return Need::Unknown;
    }
    let version = parse_version(version);
    let wasi_02 = matches!(version, Some((0, 2, patch)) if patch <= WASI_PATCH_MAX);
    let engine_01 = matches!(version, Some((0, 1, _)));
    if version == Some(WASI_03) {
        return classify_wasi_03(package, iface);
    }
    match package {
        "wasi:io" if wasi_02 && matches!(iface, "error" | "poll" | "streams") => Need::Base,
        "wasi:clocks" if wasi_02 && matches!(iface, "monotonic-clock" | "wall-clock") => Need::Base,
        "wasi:random" if wasi_02 && matches!(iface, "random" | "insecure" | "insecure-seed") => {
            Need::Base
        }
        "wasi:cli" if wasi_02 && CLI.contains(&iface) => Need::Base,
        "wasi:filesystem" if wasi_02 && matches!(iface, "types" | "preopens") => {
            Need::Cap(Cap::Vfs)
        }
        // The request and response values come with outbound HTTP; a
        // served component gets them in its own role (`classify_on`).
        "wasi:http" if wasi_02 && matches!(iface, "types" | "outgoing-handler") => {
            Need::Cap(Cap::Net)
        }
        "wasi:sockets" if wasi_02 => Need::Cap(Cap::Net),
        "workbooks:engine" if engine_01 => match iface {
            "session-info" => Need::Base,
            types if types_only().contains(&types) => Need::Base,
            word => Cap::from_word(word).map_or(Need::Unknown, Need::Cap),
        },
        _ => Need::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmparser::{Parser, Payload};

    const NESTING: &str = r#"(component
        (import "wasi:cli/stdout@0.2.6" (instance))
        (component $inner (import "evil:any/thing" (instance)))
        (core module $m (import "evil" "f" (func)))
        (export "inner" (component $inner))
    )"#;

    #[test]
    fn the_types_only_interfaces_are_read_from_the_brokers_and_every_component_may_import_them() {
        assert_eq!(
            types_only(),
            [
                "command-types",
                "kv-types",
                "llm-types",
                "net-types",
                "queue-types",
                "secrets-types"
            ]
        );
        for types in types_only() {
            let name = format!("workbooks:engine/{types}@0.1.0");
            assert_eq!(classify(&name), Need::Base, "{name}");
        }
        assert_eq!(
            classify("workbooks:engine/made-up-types@0.1.0"),
            Need::Unknown
        );
    }

    #[test]
    fn the_builds_broker_import_table_is_what_each_shipped_broker_imports() {
        let brokers = crate::embedded::BROKERS;
        assert_eq!(crate::embedded::BROKER_IMPORTS.len(), brokers.len());
        for ((cap, _, broker), (table_cap, names)) in
            brokers.iter().zip(crate::embedded::BROKER_IMPORTS)
        {
            assert_eq!(cap, table_cap);
            let surface = surface(broker.bytes).unwrap().unwrap();
            let read: Vec<&str> = surface.imports.iter().map(|i| unversioned(i)).collect();
            assert!(!read.is_empty(), "{cap} imports nothing");
            assert_eq!(&read[..], *names, "{cap}");
        }
        // A primitive a shipped broker imports serves its cap; base WASI
        // and a made-up name serve none.
        let (cap, names) = crate::embedded::BROKER_IMPORTS
            .iter()
            .find(|(_, names)| names.iter().any(|n| classify(n) == Need::HostPrimitive))
            .expect("a broker over a host primitive");
        let primitive = names
            .iter()
            .find(|n| classify(n) == Need::HostPrimitive)
            .unwrap();
        assert!(primitive_caps(&format!("{primitive}@0.1.0")).contains(*cap));
        assert_eq!(primitive_caps("wasi:cli/stdout@0.2.6"), CapSet::EMPTY);
        assert_eq!(
            primitive_caps("workbooks:host/nothing@0.1.0"),
            CapSet::EMPTY
        );
    }

    #[test]
    fn only_the_outermost_imports_and_exports_are_read() {
        let bytes = wat::parse_str(NESTING).unwrap();
        let outer = surface(&bytes).unwrap().unwrap();
        assert_eq!(outer.imports, ["wasi:cli/stdout@0.2.6"]);
        assert_eq!(outer.exports, ["inner"]);
        let module = wat::parse_str("(module (import \"a\" \"b\" (func)))").unwrap();
        assert!(surface(&module).unwrap().is_none());
    }

    #[test]
    fn a_binary_cut_inside_a_nested_section_is_an_error_not_a_surface() {
        let bytes = wat::parse_str(NESTING).unwrap();
        let nested: Vec<_> = Parser::new(0)
            .parse_all(&bytes)
            .filter_map(|p| match p.unwrap() {
                Payload::ModuleSection {
                    unchecked_range, ..
                }
                | Payload::ComponentSection {
                    unchecked_range, ..
                } => Some(unchecked_range),
                _ => None,
            })
            .collect();
        assert_eq!(nested.len(), 2);
        for range in nested {
            for len in range.start + 1..range.end {
                let cut = &bytes[..len as usize];
                assert!(surface(cut).is_err(), "cut at {len} read as whole");
            }
        }
    }

    #[test]
    fn imports_map_to_their_cap_words() {
        assert_eq!(classify("wasi:cli/stdout@0.2.6"), Need::Base);
        assert_eq!(classify("wasi:io/streams@0.2.12"), Need::Base);
        assert_eq!(classify("wasi:filesystem/types@0.2.0"), Need::Cap(Cap::Vfs));
        assert_eq!(classify("wasi:sockets/tcp@0.2.3"), Need::Cap(Cap::Net));
        assert_eq!(
            classify("wasi:http/outgoing-handler@0.2.0"),
            Need::Cap(Cap::Net)
        );
        assert_eq!(classify("workbooks:engine/kv@0.1.0"), Need::Cap(Cap::Kv));
        assert_eq!(classify("workbooks:engine/session-info@0.1.3"), Need::Base);
    }

    #[test]
    fn wasi_03_imports_map_to_the_same_words_as_02() {
        assert_eq!(classify("wasi:cli/stdout@0.3.0"), Need::Base);
        assert_eq!(classify("wasi:cli/types@0.3.0"), Need::Base);
        assert_eq!(classify("wasi:clocks/system-clock@0.3.0"), Need::Base);
        assert_eq!(classify("wasi:random/random@0.3.0"), Need::Base);
        let vfs = Need::Cap(Cap::Vfs);
        assert_eq!(classify("wasi:filesystem/types@0.3.0"), vfs);
        assert_eq!(classify("wasi:filesystem/preopens@0.3.0"), vfs);
        let net = Need::Cap(Cap::Net);
        assert_eq!(classify("wasi:sockets/types@0.3.0"), net);
        assert_eq!(classify("wasi:sockets/ip-name-lookup@0.3.0"), net);
        assert_eq!(classify("wasi:http/client@0.3.0"), net);
        assert_eq!(classify("wasi:http/types@0.3.0"), net);
        assert_eq!(
            classify_on(Role::HttpHandler, "wasi:http/types@0.3.0"),
            Need::Base
        );
        assert_eq!(
            classify_on(Role::HttpHandler, "wasi:http/client@0.3.0"),
            net
        );
    }

    #[test]
    fn http_types_need_net_except_for_a_served_handler() {
        let types = "wasi:http/types@0.2.6";
        assert_eq!(classify(types), Need::Cap(Cap::Net));
        assert_eq!(classify_on(Role::Call, types), Need::Cap(Cap::Net));
        assert_eq!(classify_on(Role::HttpHandler, types), Need::Base);
        let out = "wasi:http/outgoing-handler@0.2.6";
        assert_eq!(classify_on(Role::HttpHandler, out), Need::Cap(Cap::Net));
    }

    #[test]
    fn an_extensions_interfaces_pass_on_its_own_lane_only_and_never_as_a_cap() {
        static EXTENSION: super::super::Extension = super::super::Extension {
            name: "test",
            interfaces: &["workbooks:host/tools", "acme:own/thing", "wasi:http/types"],
            link: |_| Ok(()),
        };
        let (tools, own) = ("workbooks:host/tools@0.1.0", "acme:own/thing@1.0.0");
        assert_eq!(classify_on(Role::Extended(&EXTENSION), tools), Need::Base);
        assert_eq!(classify_on(Role::Extended(&EXTENSION), own), Need::Base);
        assert_eq!(classify_on(Role::Call, tools), Need::HostPrimitive);
        assert_eq!(classify_on(Role::Call, own), Need::Unknown);
        // A cap's interface stays the cap's, whatever the extension lists.
        let types = "wasi:http/types@0.2.6";
        assert_eq!(
            classify_on(Role::Extended(&EXTENSION), types),
            Need::Cap(Cap::Net)
        );
        let kv = "workbooks:host/kv@0.1.0";
        assert_eq!(
            classify_on(Role::Extended(&EXTENSION), kv),
            Need::HostPrimitive
        );
    }

    #[test]
    fn each_host_primitive_serves_its_own_caps_only() {
        assert_eq!(
            primitive_caps("workbooks:host/kv@0.1.0"),
            CapSet::EMPTY.with(Cap::Kv)
        );
        assert!(primitive_caps("workbooks:host/exchange@0.1.0").contains(Cap::Udp));
        assert!(!primitive_caps("workbooks:host/exchange@0.1.0").contains(Cap::Net));
        assert!(primitive_caps("workbooks:host/unheard-of@0.1.0").is_empty());
        assert!(primitive_caps("workbooks:engine/kv@0.1.0").is_empty());
    }

    #[test]
    fn host_primitives_are_refused_at_any_version() {
        assert_eq!(classify("workbooks:host/kv@0.1.0"), Need::HostPrimitive);
        assert_eq!(classify("workbooks:host/kv"), Need::HostPrimitive);
        assert_eq!(
            classify("workbooks:host/anything@9.9.9"),
            Need::HostPrimitive
        );
    }

    #[test]
    fn an_unserved_wasi_version_is_named_with_what_is_served() {
        let newer_02 = unserved_version("wasi:cli/stdout@0.2.13").unwrap();
        assert!(newer_02.contains("WASI 0.2.13 is not served"), "{newer_02}");
        let newer = unserved_version("wasi:cli/stdout@0.3.1").unwrap();
        assert!(newer.contains("WASI 0.3.1 is not served"), "{newer}");
        assert!(newer.contains("0.3.0"), "{newer}");
        let rc = unserved_version("wasi:cli/stdout@0.3.0-rc-2026-03-15").unwrap();
        assert!(rc.contains("release candidate"), "{rc}");
        let tz = unserved_version("wasi:clocks/timezone@0.3.0").unwrap();
        assert!(tz.contains("wasi:clocks/timezone"), "{tz}");
        assert_eq!(unserved_version("wasi:cli/stdout@0.3.0"), None);
        assert_eq!(unserved_version("evil:probe/backdoor@9.0.0"), None);
    }

    #[test]
    fn unknown_or_unserved_versions_are_unknown() {
        for name in [
            "evil:probe/backdoor",
            "wasi:cli/stdout@0.3.1",
            "wasi:cli/stdout@0.3.0-rc-2026-03-15",
            "wasi:clocks/timezone@0.3.0",
            "wasi:clocks/wall-clock@0.3.0",
            "wasi:io/streams@0.3.0",
            "wasi:http/outgoing-handler@0.3.0",
            "wasi:cli/stdout@0.2.99",
            "wasi:clocks/timezone@0.2.12",
            "workbooks:engine/kv@0.2.0",
            "workbooks:engine/root@0.1.0",
            "run",
        ] {
            assert_eq!(classify(name), Need::Unknown, "{name}");
        }
    }
}
