//! `verify`: the structural, exec-contract, cap and trust checks of one
//! toolkit, each a ✓ or a ✗ with the reason, and the grant it would get.
//!
//! The grant is the declared caps ∩ the profile, never wider; a
//! third-party toolkit must carry `#+AUTHOR_DID` (an Ed25519 did:key) and
//! a `#+SIGNATURE` that verifies over the canonical manifest, and runs one
//! tier stronger by default (`os_process` rather than `instance`).

use super::Toolkit;
use crate::discover::is_slug;
use serde::Serialize;
use workbooks::commands::{ArgMode, Registry, Tier, builtin};
use workbooks::policy::{Cap, CapSet, Profile, Stub};

/// The `#+EXEC` shapes.
pub const EXEC_SHAPES: [&str; 6] = [
    "command",
    "posix",
    "task",
    "federation",
    "component",
    "kernel",
];

/// One check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// Whether it holds.
    pub ok: bool,
    /// What was checked, and what was found.
    pub what: String,
}

/// What a toolkit would be granted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GrantView {
    /// The narrowest profiles granting every declared cap.
    pub profiles: Vec<&'static str>,
    /// The caps granted under the narrowest one: declared ∩ profile.
    pub caps: Vec<&'static str>,
    /// `first-party`, `third-party` or `unattested` (see
    /// [`crate::standing`]).
    pub trust: String,
    /// The default tier: one rung stronger unless first-party.
    pub tier: Tier,
    /// The WASI families `#+STUB:` has served by their deny brokers.
    pub stubs: Vec<&'static str>,
}

/// Every check of a toolkit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The toolkit's id.
    pub id: String,
    /// The checks, in order.
    pub checks: Vec<Check>,
    /// The grant, when the caps can be granted at all.
    pub grant: Option<GrantView>,
}

impl Report {
    /// Whether every check holds.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok)
    }

    /// The report as `wbx toolkit verify` prints it.
    pub fn text(&self) -> String {
        let mut out = format!("toolkit {}", self.id);
        for c in &self.checks {
            out.push_str(&format!("\n{} {}", if c.ok { "✓" } else { "✗" }, c.what));
        }
        if let Some(g) = &self.grant {
            let tier = g.tier.name();
            out.push_str(&format!(
                "\ngrant: {} under {} ({}, tier {tier})",
                if g.caps.is_empty() {
                    "no caps".to_string()
                } else {
                    g.caps.join(" ")
                },
                g.profiles.join(" / "),
                g.trust,
            ));
            if !g.stubs.is_empty() {
                out.push_str(&format!(
                    "\nstubs: {} (every call refused by a deny broker)",
                    g.stubs.join(" ")
                ));
            }
        }
        out
    }
}

/// Checks `tk`; `registry` says which commands are registered.
pub fn verify(tk: &Toolkit, registry: &Registry) -> Report {
    let m = &tk.manifest;
    let mut checks = Vec::new();
    let mut check = |ok: bool, what: String| checks.push(Check { ok, what });
    check(true, "manifest.org present".into());
    check(
        tk.dir.join("skills/overview.org").is_file(),
        "skills/overview.org present".into(),
    );
    for key in ["TITLE", "TOOLKIT", "VERSION", "STATUS", "TAGLINE"] {
        check(m.kw(key).is_some(), format!("#+{key} set"));
    }
    let id = m.kw("TOOLKIT").unwrap_or("");
    check(
        id == tk.id && is_slug(id),
        format!("#+TOOLKIT `{id}` is the folder's name `{}`", tk.id),
    );
    if let Some(status) = m.kw("STATUS") {
        check(
            ["stable", "experimental", "deprecated"].contains(&status),
            format!("#+STATUS `{status}` is stable, experimental or deprecated"),
        );
    }
    check(m.node.is_some(), "a :toolkit: node".into());
    for (key, drawer) in [
        ("TOOLKIT", "ID"),
        ("CLI_BIN", "CLI_BIN"),
        ("STATUS", "STATUS"),
    ] {
        if let (Some(kw), Some(d)) = (m.kw(key), m.drawer(drawer)) {
            check(kw == d, format!(":{drawer}: `{d}` mirrors #+{key} `{kw}`"));
        } else if key != "CLI_BIN" {
            check(
                m.drawer(drawer).is_some(),
                format!(":{drawer}: in the :toolkit: drawer"),
            );
        }
    }
    for c in exec_checks(m, registry) {
        checks.push(c);
    }
    if let Some(file) = m.kw("COMPOSE") {
        checks.push(compose_check(tk, file));
    }
    let standing = super::Standing::of(tk);
    let (cap_checks, grant) = cap_checks(m, &standing);
    checks.extend(cap_checks);
    checks.extend(trust_checks(m, &standing));
    Report {
        id: tk.id.clone(),
        checks,
        grant,
    }
}

/// `#+COMPOSE`: the file is inside the toolkit and is WAC.
fn compose_check(tk: &Toolkit, file: &str) -> Check {
    let parsed = crate::tree::compose_source(tk, file).and_then(|text| {
        wac_parser::Document::parse(&text)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    Check {
        ok: parsed.is_ok(),
        what: match parsed {
            Ok(()) => format!("#+COMPOSE `{file}` is a WAC file inside the toolkit"),
            Err(why) => format!("#+COMPOSE `{file}`: {why}"),
        },
    }
}

/// The `#+EXEC` contract's checks.
fn exec_checks(m: &super::Manifest, registry: &Registry) -> Vec<Check> {
    let mut out = Vec::new();
    let mut check = |ok: bool, what: String| out.push(Check { ok, what });
    let Some(exec) = m.kw("EXEC") else {
        check(true, "exec: none declared (discovery-only toolkit)".into());
        return out;
    };
    if !EXEC_SHAPES.contains(&exec) {
        check(false, format!("exec: unknown mode `{exec}`"));
        return out;
    }
    if let Some(mode) = m.kw("ARG_MODE") {
        check(
            ArgMode::parse(mode).is_some(),
            format!("#+ARG_MODE `{mode}` is argv or stdin1"),
        );
    }
    if let Some(src) = m.kw("BUILD_SRC") {
        out.extend(build_src_checks(m, src));
    }
    let mut check = |ok: bool, what: String| out.push(Check { ok, what });
    match exec {
        "command" => match m.cli_bin() {
            None => check(false, "exec command: #+CLI_BIN names the command".into()),
            Some(bin) if builtin::is_reserved(bin) => check(
                false,
                format!("exec command: CLI_BIN `{bin}` is a reserved built-in name"),
            ),
            Some(bin) => {
                let registered = registry.get(bin).ok().flatten().is_some();
                let buildable = m.kw("COMPOSE").is_some()
                    || m
                        .kw("BUILD_SRC")
                        .is_some_and(|s| s.starts_with("crate:") || s.starts_with("path:"));
                check(
                    registered || buildable,
                    format!(
                        "exec command: `{bin}` is registered, has a buildable #+BUILD_SRC (crate: or path:) or a #+COMPOSE file"
                    ),
                );
            }
        },
        "posix" => check(
            false,
            "exec posix: a native binary; this engine never runs native code (ship the CLI as a wasm command)"
                .into(),
        ),
        "task" => check(
            true,
            "exec task: structural only; its :role task blocks are DISABLED (native execution is banned)"
                .into(),
        ),
        "kernel" => match m.cli_bin() {
            None => check(false, "exec kernel: #+CLI_BIN names the kernel".into()),
            Some(bin) => check(
                registry.kernels_beside().get(bin).ok().flatten().is_some(),
                format!(
                    "exec kernel: `{bin}` is registered as a kernel (wbx kernel register {bin} FILE)"
                ),
            ),
        },
        // federation and component: structural.
        other => check(true, format!("exec {other}: structural")),
    }
    out
}

/// The `#+BUILD_SRC` spec's checks.
fn build_src_checks(m: &super::Manifest, src: &str) -> Vec<Check> {
    let known = [
        "crate:",
        "path:",
        "wasm:",
        "archive:",
        "git+",
        "gobuild:",
        "zigbuild:",
    ];
    let mut out = Vec::new();
    if src.starts_with("script:") {
        out.push(Check {
            ok: false,
            what: "#+BUILD_SRC script: is removed: native build scripts are banned".into(),
        });
    } else if !known.iter().any(|k| src.starts_with(k)) {
        out.push(Check {
            ok: false,
            what: format!("#+BUILD_SRC `{src}` is not a known source spec"),
        });
    }
    let pinned = m
        .kw("SHA256")
        .is_some_and(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()));
    if src.starts_with("wasm:") || src.starts_with("archive:") {
        out.push(Check {
            ok: pinned,
            what: "#+SHA256 pins the fetched bytes (64 hex digits)".into(),
        });
    } else if src.starts_with("path:") && needs_pin(m) {
        out.push(Check {
            ok: pinned,
            what: "signed: #+SHA256 pins the path: source, so the signature covers it".into(),
        });
    }
    out
}

/// The `#+CAPS` checks and the grant: every cap grantable by some
/// profile, and some profile granting them all.
fn cap_checks(m: &super::Manifest, standing: &super::Standing) -> (Vec<Check>, Option<GrantView>) {
    let mut out = Vec::new();
    let mut declared = CapSet::EMPTY;
    for word in m.caps() {
        match Cap::from_word(word) {
            Ok(cap) if Profile::ALL.iter().any(|p| p.caps().contains(cap)) => {
                declared = declared.with(cap);
            }
            _ => out.push(Check {
                ok: false,
                what: format!("cap `{word}` is not one any profile grants"),
            }),
        }
    }
    let profiles: Vec<Profile> = Profile::ALL
        .into_iter()
        .filter(|p| declared.is_subset(p.caps()))
        .collect();
    let Some(narrowest) = profiles.first().copied() else {
        out.push(Check {
            ok: false,
            what: format!(
                "no profile grants every cap of `{}`",
                declared.words().join(" ")
            ),
        });
        return (out, None);
    };
    // Profiles are ordered narrowest first; every one as narrow as the
    // first (the same caps) is named.
    let names: Vec<&'static str> = profiles
        .iter()
        .filter(|p| p.caps() == narrowest.caps())
        .map(|p| p.name())
        .collect();
    let what = if declared.is_empty() {
        format!("caps: none declared ({} grants that)", names.join(" / "))
    } else {
        let words = declared.words().join(" ");
        format!("caps `{words}` granted by {}", names.join(" / "))
    };
    out.push(Check { ok: true, what });
    let stubs = stub_checks(m, declared, &mut out);
    let grant = GrantView {
        profiles: names,
        caps: declared.intersect(narrowest.caps()).words(),
        trust: standing.word().into(),
        tier: standing.tier(),
        stubs: stubs.into_iter().map(Stub::name).collect(),
    };
    (out, Some(grant))
}

/// The stubs `#+STUB:` declares that a deny broker serves, for the
/// registration of the toolkit's command (unknown names are `verify`'s
/// to refuse, and are left out here).
pub(crate) fn declared_stubs(m: &super::Manifest) -> workbooks::policy::Stubs {
    stub_names(m).filter_map(|n| Stub::parse(n).ok()).fold(
        workbooks::policy::Stubs::NONE,
        workbooks::policy::Stubs::with,
    )
}

fn stub_names(m: &super::Manifest) -> impl Iterator<Item = &str> {
    m.kw("STUB")
        .unwrap_or("")
        .split([' ', ','])
        .filter(|n| !n.is_empty())
}

/// `#+STUB:` (space- or comma-separated families): each must name a deny
/// broker; a stub of a family whose cap is declared is pointless (the
/// host serves it) and said so.
fn stub_checks(m: &super::Manifest, declared: CapSet, out: &mut Vec<Check>) -> Vec<Stub> {
    let mut stubs = Vec::new();
    for name in stub_names(m) {
        match Stub::parse(name) {
            Ok(stub) if declared.contains(stub.cap()) => {
                out.push(Check {
                    ok: false,
                    what: format!(
                        "#+STUB: {stub} is served by the host here: the toolkit declares cap `{}`",
                        stub.cap()
                    ),
                });
            }
            Ok(stub) => {
                out.push(Check {
                    ok: true,
                    what: format!("#+STUB: {stub} served by its deny broker (every call refused)"),
                });
                stubs.push(stub);
            }
            Err(e) => out.push(Check {
                ok: false,
                what: format!("#+STUB: {e}"),
            }),
        }
    }
    stubs
}

/// The `#+TRUST` checks, and whose the toolkit is.
pub(crate) fn trust_checks(m: &super::Manifest, standing: &super::Standing) -> Vec<Check> {
    let trust = m.kw("TRUST").unwrap_or("first-party");
    match trust {
        "first-party" => vec![Check {
            ok: true,
            what: match standing {
                super::Standing::FirstParty(why) => format!("trust first-party: {why}"),
                _ => "trust unattested: no first-party root holds it (WB_FIRST_PARTY_TOOLKITS) and no trusted signer signed it (WB_TRUSTED_SIGNERS); its command runs one tier stronger (os_process)".into(),
            },
        }],
        "third-party" => {
            let did = m.kw("AUTHOR_DID");
            let mut out = vec![Check {
                ok: did.is_some_and(|d| workbooks::identity::public_key(d).is_ok()),
                what: "third-party: #+AUTHOR_DID is an Ed25519 did:key".into(),
            }];
            let signed = match (did, m.kw("SIGNATURE")) {
                (Some(did), Some(sig)) => {
                    workbooks::identity::verify(did, &m.signed_bytes(), sig).is_ok()
                }
                _ => false,
            };
            out.push(Check {
                ok: signed,
                what: "third-party: #+SIGNATURE verifies over the canonical manifest".into(),
            });
            out
        }
        other => vec![Check {
            ok: false,
            what: format!("#+TRUST `{other}` is first-party or third-party"),
        }],
    }
}

/// Whether a toolkit's `path:` source must hash to its `#+SHA256`: when
/// the toolkit is trusted for its signature (third-party, or signed by a
/// signer the operator trusts), whose cover must reach the source. The
/// signature covers the pin, so it covers the source too; bytes dropped
/// beside a signed manifest are not what was signed.
pub(crate) fn needs_pin(m: &super::Manifest) -> bool {
    m.kw("TRUST") == Some("third-party") || m.kw("SIGNATURE").is_some()
}
