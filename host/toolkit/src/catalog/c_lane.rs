//! The C lane: C compiled in the sandbox by the catalog's clang (LLVM's
//! wasm32-wasip1 build from `@yowasp/clang`, its pinned bytes only),
//! against the wasi-libc sysroot that travels with it. It builds the
//! catalog's rows made from pinned source tarballs (`lua`, `zstd`) and a
//! toolkit's `#+BUILD_LANG: c`.
//!
//! Invariant: no compiler runs on the host. Each translation unit is one
//! run of the registered `clang` command, and the link one run of
//! `wasm-ld`, each under `compute` with [`C_LANE_MEMORY`], [`C_LANE_FUEL`]
//! and [`C_LANE_UNIT_TIMEOUT`], seeing three preopens only: the sources
//! read-only at `/src`, the sysroot read-only at `/usr`, and a fresh
//! output folder at `/out`. The host lists the files, passes argv (no
//! shell ever parses it) and reads back the linked wasm, within the
//! catalog's cap.

use super::{Catalog, Row, row};
use crate::limits::{
    C_LANE_FUEL, C_LANE_MEMORY, C_LANE_UNIT_TIMEOUT, CATALOG_MAX_BYTES, CATALOG_MAX_TREE_FILES,
};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use workbooks::LineOptions;
use workbooks::Preopen;

/// Translation units compiled at once: the machines this runs on have
/// few cores, and each unit holds up to [`C_LANE_MEMORY`].
const PARALLEL_UNITS: usize = 2;

/// Flags every unit gets, first.
const TARGET: &str = "--target=wasm32-wasip1";

/// Why the C lane gave nothing back.
#[derive(Debug, thiserror::Error)]
pub enum CLaneError {
    /// The compiler is not installed with its pinned bytes.
    #[error("lane_unavailable: {0}")]
    Unavailable(String),
    /// The sysroot could not be made ready.
    #[error("the c lane: the sysroot: {0}")]
    Sysroot(String),
    /// A source list names nothing, or something outside the tree.
    #[error("the c lane: sources: {0}")]
    Sources(String),
    /// A unit did not compile.
    #[error("the c lane: {unit} did not compile: {why}")]
    Compile {
        /// The source file.
        unit: String,
        /// The exit and the end of clang's stderr.
        why: String,
    },
    /// The objects did not link.
    #[error("the c lane: the link failed: {0}")]
    Link(String),
}

impl CLaneError {
    /// The message without the lane's name (for a caller that names it).
    pub fn reason(&self) -> String {
        let said = self.to_string();
        said.strip_prefix("the c lane: ")
            .unwrap_or(&said)
            .to_string()
    }
}

/// Sources compiled with the same flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Units {
    /// Paths below the tree's root; `dir/*.c` is every `.c` file of
    /// `dir` (`*.c`, of the root), in name order.
    pub sources: Vec<String>,
    /// Flags for these units, after the build's own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cflags: Vec<String>,
}

/// One program to build.
#[derive(Debug, Clone)]
pub struct CBuild {
    /// The program's name (the output is `/out/<name>.wasm`).
    pub name: String,
    /// The host folder holding the sources, seen at `/src`.
    pub tree: PathBuf,
    /// Flags for every unit.
    pub cflags: Vec<String>,
    /// The units, by flag set.
    pub units: Vec<Units>,
    /// Libraries (`-lsetjmp`) linked before `-lc`.
    pub libs: Vec<String>,
}

/// What a build gave.
#[derive(Debug)]
pub struct Built {
    /// The linked command.
    pub wasm: Vec<u8>,
    /// Translation units compiled.
    pub units: usize,
    /// Wall-clock time of the compiles.
    pub compile: Duration,
    /// Wall-clock time of the link.
    pub link: Duration,
}

impl Catalog {
    /// Builds `build` with the catalog's clang and wasm-ld, in the
    /// sandbox.
    pub async fn build_c(&self, build: &CBuild) -> Result<Built, CLaneError> {
        let clang = self.lane_tool("clang")?;
        self.lane_tool("wasm-ld")?;
        let mut jobs = Vec::new();
        for units in &build.units {
            for source in expand(&build.tree, &units.sources)? {
                let object = format!("/out/{}.o", source.replace('/', "__"));
                let mut argv = vec![TARGET.to_string()];
                argv.extend(build.cflags.iter().cloned());
                argv.extend(units.cflags.iter().cloned());
                argv.extend([
                    "-c".into(),
                    format!("/src/{source}"),
                    "-o".into(),
                    object.clone(),
                ]);
                jobs.push((source, argv, object));
            }
        }
        if jobs.is_empty() {
            return Err(CLaneError::Sources("the build names no source".into()));
        }
        let sysroot = self.sysroot(clang).await?;
        let out = tempfile::tempdir().map_err(|e| CLaneError::Sysroot(e.to_string()))?;
        let dirs = vec![
            preopen(&build.tree, "/src", true),
            preopen(sysroot.path(), "/usr", true),
            preopen(out.path(), "/out", false),
        ];
        let started = Instant::now();
        let objects: Vec<String> = {
            use futures::{StreamExt, TryStreamExt};
            let runs = jobs.into_iter().map(|(source, argv, object)| {
                let dirs = dirs.clone();
                async move {
                    self.run_tool("clang", argv, dirs)
                        .await
                        .map(|()| object)
                        .map_err(|why| CLaneError::Compile { unit: source, why })
                }
            });
            futures::stream::iter(runs)
                .buffered(PARALLEL_UNITS)
                .try_collect()
                .await?
        };
        let compile = started.elapsed();
        let started = Instant::now();
        let output = format!("/out/{}.wasm", build.name);
        let mut argv: Vec<String> = [
            "-m",
            "wasm32",
            "-L/usr/lib/wasm32-unknown-wasip1",
            "-L/usr/lib/wasm32-wasip1",
            "/usr/lib/wasm32-wasip1/crt1-command.o",
        ]
        .map(String::from)
        .to_vec();
        argv.extend(objects.iter().cloned());
        argv.extend(build.libs.iter().cloned());
        argv.extend(
            [
                "-lc",
                "/usr/lib/wasm32-unknown-wasip1/libclang_rt.builtins.a",
                "-o",
                &output,
            ]
            .map(String::from),
        );
        self.run_tool("wasm-ld", argv, dirs)
            .await
            .map_err(CLaneError::Link)?;
        let link = started.elapsed();
        let linked = out.path().join(format!("{}.wasm", build.name));
        let size = std::fs::metadata(&linked)
            .map_err(|e| CLaneError::Link(format!("no output: {e}")))?
            .len();
        if size > CATALOG_MAX_BYTES as u64 {
            return Err(CLaneError::Link(format!(
                "the output is more than {CATALOG_MAX_BYTES} bytes"
            )));
        }
        let wasm = std::fs::read(&linked).map_err(|e| CLaneError::Link(e.to_string()))?;
        Ok(Built {
            wasm,
            units: objects.len(),
            compile,
            link,
        })
    }

    /// Whether the lane's tools are installed with their pinned bytes.
    pub fn c_lane_ready(&self) -> Result<(), CLaneError> {
        self.lane_tool("clang")?;
        self.lane_tool("wasm-ld").map(drop)
    }

    /// The catalog row of a lane tool, installed with its pinned bytes.
    fn lane_tool(&self, name: &str) -> Result<&'static Row, CLaneError> {
        let row = row(name)
            .ok_or_else(|| CLaneError::Unavailable(format!("this build has no `{name}` row")))?;
        let held = self.engine.registry().get(name).ok().flatten();
        if !held.is_some_and(|e| row.is_held_by(&e)) {
            return Err(CLaneError::Unavailable(format!(
                "the c lane runs the catalog's {name}, which is not installed (wbx catalog install clang wasm-ld)"
            )));
        }
        Ok(row)
    }

    /// Runs a lane tool once; `Err` is why it failed.
    async fn run_tool(
        &self,
        name: &str,
        argv: Vec<String>,
        dirs: Vec<Preopen>,
    ) -> Result<(), String> {
        let options = LineOptions {
            profile: "compute".into(),
            dirs,
            stage_memory: Some(C_LANE_MEMORY),
            stage_fuel: Some(C_LANE_FUEL),
            stage_timeout: Some(C_LANE_UNIT_TIMEOUT),
            ..LineOptions::default()
        };
        let out = self
            .engine
            .commands()
            .run(name, argv, options)
            .await
            .map_err(|e| e.to_string())?;
        if out.exit_code == 0 {
            return Ok(());
        }
        Err(format!(
            "exit {}: {}",
            out.exit_code,
            super::stderr_tail(&out.stderr)
        ))
    }
}

fn preopen(host: &Path, guest: &str, read_only: bool) -> Preopen {
    Preopen {
        host: host.to_path_buf(),
        guest: guest.into(),
        read_only,
    }
}

/// The sources a list names below `tree`, with `dir/*.c` expanded; a
/// path must stay inside the tree and name a file.
fn expand(tree: &Path, sources: &[String]) -> Result<Vec<String>, CLaneError> {
    let mut found = Vec::new();
    for source in sources {
        let (dir, wildcard) = match source.strip_suffix("*.c") {
            Some("") => ("", true),
            Some(dir) if dir.ends_with('/') => (dir.trim_end_matches('/'), true),
            _ => (source.as_str(), false),
        };
        let parts = if dir.is_empty() {
            Vec::new()
        } else {
            super::archive::inside(dir).map_err(CLaneError::Sources)?
        };
        let path = parts.iter().fold(tree.to_path_buf(), |p, c| p.join(c));
        if !wildcard {
            if !path.is_file() {
                return Err(CLaneError::Sources(format!("{source}: no such file")));
            }
            found.push(parts.join("/"));
            continue;
        }
        let mut names: Vec<String> = std::fs::read_dir(&path)
            .map_err(|e| CLaneError::Sources(format!("{source}: {e}")))?
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| n.ends_with(".c"))
            .collect();
        if names.is_empty() {
            return Err(CLaneError::Sources(format!("{source} matches no file")));
        }
        names.sort();
        let prefix: String = parts.iter().map(|p| format!("{p}/")).collect();
        found.extend(names.into_iter().map(|n| format!("{prefix}{n}")));
        if found.len() > CATALOG_MAX_TREE_FILES {
            return Err(CLaneError::Sources("too many sources".into()));
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_list_is_expanded_in_name_order_and_cannot_leave_the_tree() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tree.path().join("lib")).unwrap();
        for f in ["lib/b.c", "lib/a.c", "lib/notes.txt", "main.c"] {
            std::fs::write(tree.path().join(f), "").unwrap();
        }
        let got = expand(tree.path(), &["lib/*.c".into(), "main.c".into()]).unwrap();
        assert_eq!(got, ["lib/a.c", "lib/b.c", "main.c"]);
        assert_eq!(expand(tree.path(), &["*.c".into()]).unwrap(), ["main.c"]);
        for bad in [
            "../main.c",
            "/etc/passwd",
            "../*.c",
            "missing.c",
            "empty/*.c",
        ] {
            assert!(expand(tree.path(), &[bad.into()]).is_err(), "{bad}");
        }
    }
}
