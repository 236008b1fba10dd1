//! `wbx inspect`: what a component or core module imports, which caps that needs, which
//! profiles grant them, and the receipt it would dock with.

use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::{Artifact, Grant, Profile, dock};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The component to inspect.
    file: PathBuf,
    /// Dock under this profile (default: the narrowest that grants every
    /// import).
    #[arg(long, value_name = "P")]
    profile: Option<String>,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    let file = match crate::oci::local(&args.file, &home) {
        Ok((file, _)) => file,
        Err(code) => return code,
    };
    let artifact = match Artifact::from_file(&file) {
        Ok(a) => a,
        Err(e) => return fail("load", e, exit::LOAD),
    };
    let analysis = match dock::analyse(&artifact) {
        Ok(a) => a,
        Err(e) => return fail("load", e, exit::LOAD),
    };
    let profile = match &args.profile {
        Some(name) => match Profile::parse(name) {
            Ok(p) => p,
            Err(e) => return fail("usage", e, exit::USAGE),
        },
        None => analysis
            .granted_by
            .first()
            .copied()
            .unwrap_or(Profile::Compute),
    };
    let engine = match crate::options::engine(home) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let docked = engine.receipt(&artifact, &Grant::profile(profile.name()));
    if crate::out::json() {
        let (receipt, refusal) = match &docked {
            Ok(r) => (serde_json::to_value(r).ok(), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let out = serde_json::json!({
            "file": args.file,
            "sha256": artifact.sha256_hex(),
            "kind": artifact.kind(),
            "bytes": artifact.bytes().len(),
            "imports": analysis.imports,
            "exports": analysis.exports,
            "needs": analysis.caps,
            "granted_by": analysis.granted_by,
            "profile": profile,
            "receipt": receipt,
            "refused": refusal,
        });
        outln!("{out}");
    } else {
        outln!("artifact  {}", args.file.display());
        outln!("sha256    {}", artifact.sha256_hex());
        outln!("imports");
        let width = analysis
            .imports
            .iter()
            .map(|i| i.name.len())
            .max()
            .unwrap_or(0);
        for i in &analysis.imports {
            outln!("  {:<width$}  {}", i.name, i.needs);
        }
        outln!("exports");
        for e in &analysis.exports {
            outln!("  {e}");
        }
        let needs = if analysis.caps.is_empty() {
            "nothing beyond base".to_string()
        } else {
            analysis.caps.to_string()
        };
        outln!("needs     {needs}");
        let by: Vec<&str> = analysis.granted_by.iter().map(|p| p.name()).collect();
        outln!(
            "granted   {}",
            if by.is_empty() {
                "by no profile".to_string()
            } else {
                format!("by {}", by.join(", "))
            }
        );
        for note in dock::unbound_notes(profile.caps()) {
            outln!("note      {note}");
        }
        match &docked {
            Ok(r) => {
                outln!("receipt under {profile}:");
                for line in r.to_string().lines() {
                    outln!("  {line}");
                }
            }
            Err(e) => outln!("refused under {profile}: {e}"),
        }
    }
    match docked {
        Ok(_) => 0,
        Err(e) => exit::for_dock_error(&e),
    }
}
