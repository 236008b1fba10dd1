//! `wbx compose <file.wac>`: a WAC file composed from components given
//! with `--dep PACKAGE=FILE` and from built toolkits (`toolkit:<id>`),
//! validated, then written out or registered as a command.

use crate::{exit, fail};
use std::collections::BTreeMap;
use std::path::PathBuf;
use workbooks::commands::{ArgMode, Tier};
use workbooks_toolkit::compose;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The WAC file.
    file: PathBuf,
    /// A package's component: `PACKAGE=FILE` (repeatable). Packages named
    /// `toolkit:<id>` and not given here are the built toolkits'.
    #[arg(long = "dep", value_name = "PACKAGE=FILE")]
    deps: Vec<String>,
    /// The toolkits root for `toolkit:<id>` packages.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Write the composed component here.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Register the composed component as this command.
    #[arg(long, value_name = "NAME")]
    register: Option<String>,
    /// Replace a command registered under that name already.
    #[arg(long, requires = "register")]
    replace: bool,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    if args.output.is_none() && args.register.is_none() {
        return fail(
            "compose",
            "say where the result goes: -o FILE, --register NAME, or both",
            exit::USAGE,
        );
    }
    let mut deps = BTreeMap::new();
    for dep in &args.deps {
        let Some((pkg, file)) = dep.split_once('=') else {
            return fail(
                "compose",
                format!("--dep `{dep}` is not PACKAGE=FILE"),
                exit::USAGE,
            );
        };
        deps.insert(pkg.to_string(), PathBuf::from(file));
    }
    let source = match std::fs::metadata(&args.file).and_then(|m| {
        if m.len() > workbooks_toolkit::limits::COMPOSE_MAX_SOURCE_BYTES as u64 {
            Err(std::io::Error::other("past the 1 MiB cap"))
        } else {
            std::fs::read_to_string(&args.file)
        }
    }) {
        Ok(s) => s,
        Err(e) => {
            return fail(
                "compose",
                format!("{}: {e}", args.file.display()),
                exit::USAGE,
            );
        }
    };
    let engine = match crate::options::engine(home) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let kits = crate::toolkit::toolkits(args.root.clone());
    let mut third_party = false;
    let origin = args.file.display().to_string();
    let composed = compose::compose(&source, &origin, |package| {
        if let Some(file) = deps.get(package) {
            return engine
                .load_artifact(file)
                .map_err(|e| format!("{}: {e}", file.display()));
        }
        let (artifact, tier) =
            workbooks_toolkit::Builds::new(engine.clone()).built_toolkit(&kits, package)?;
        third_party |= tier == Tier::OsProcess;
        Ok(artifact)
    });
    let composed = match composed {
        Ok(c) => c,
        Err(e) => return fail("compose", e, 1),
    };
    if let Some(out) = &args.output
        && let Err(e) = workbooks::files::write_output(out, composed.artifact.bytes())
    {
        return fail("compose", format!("{}: {e}", out.display()), exit::ENGINE);
    }
    let mut registered = None;
    if let Some(name) = &args.register {
        let tier = if third_party {
            Tier::OsProcess
        } else {
            Tier::Instance
        };
        let bytes = composed.artifact.bytes().to_vec();
        let registry = engine.registry();
        let done = match args.replace {
            true => registry
                .replace(name, bytes, ArgMode::Argv, tier)
                .map(|(e, _)| e),
            false => registry.register(name, bytes, ArgMode::Argv, tier),
        };
        match done {
            Ok(entry) => registered = Some(entry),
            Err(e) => return fail("compose", e, 1),
        }
    }
    let sha = composed.artifact.sha256_hex();
    if crate::out::json() {
        outln!(
            "{}",
            serde_json::json!({
                "sha256": sha,
                "size": composed.artifact.bytes().len(),
                "parts": composed.parts,
                "output": args.output.as_ref().map(|p| p.display().to_string()),
                "registered": registered,
            })
        );
    } else {
        for part in &composed.parts {
            outln!("  {} sha256:{}", part.package, part.sha256);
        }
        outln!(
            "composed {} ({} bytes, sha256:{sha})",
            origin,
            composed.artifact.bytes().len()
        );
        if let Some(out) = &args.output {
            outln!("wrote {}", out.display());
        }
        if let Some(entry) = registered {
            outln!("registered {}", entry.name);
        }
    }
    0
}
