//! The build broker: `build(lang, source)` drives the compiler lane for
//! `lang` and checks what comes back. The lanes are commands run through
//! `workbooks:engine/commands` (the `wat` built-in; the catalog's QuickJS
//! as `qjs`), so each runs in its own sandboxed instance under the host's
//! deny ladder and cadence, and this component holds no reach but that.
//!
//! It owns the shape: which languages have a lane, the source cap of each,
//! the output cap, and that a `wat` result is WebAssembly. The host owns
//! what must be trusted: which QuickJS bytes may be `qjs` (the catalog's
//! pin), validating the artifact again, and registering it.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/build-broker",
    generate_all,
});

use workbooks::engine::commands;

/// Bytes of WAT text the `wat` lane takes.
const WAT_MAX_SOURCE: usize = 32 << 20;
/// Bytes of a script the `js` lane takes: it travels as an argument.
const JS_MAX_SOURCE: usize = 128 << 10;
/// Bytes of an artifact the broker hands back.
const MAX_OUTPUT: usize = 64 << 20;
/// What QuickJS is asked to do with a script: compile it as a function
/// body without running it; a syntax error is thrown, so it exits non-zero.
const JS_SYNTAX_CHECK: &str = "new Function(scriptArgs[0])";

/// The compiler component each language without a lane here would need.
fn missing(lang: &str) -> String {
    let what = match lang {
        "rust" => "the rust compiler component (mrustc + clang in the sandbox) is not shipped",
        "c" => "the clang component is not shipped",
        "zig" => "the zig compiler component is not shipped",
        "go" | "tinygo" => "the go compiler component is not shipped",
        "ts" => "the typescript compiler component is not shipped",
        "svelte" => "the svelte compiler component is not shipped",
        _ => "no build lane for this language",
    };
    format!("lane_unavailable: {what}")
}

/// Runs a lane command; its stderr is the refusal when it fails.
fn lane(name: &str, argv: &[String], stdin: &[u8]) -> Result<Vec<u8>, String> {
    let out = commands::run_command(name, argv, stdin)
        .map_err(|e| format!("refused: the {name} lane could not run: {e:?}"))?;
    if out.exit_code != 0 {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(format!("refused: {}", said.trim()));
    }
    if out.stdout.len() > MAX_OUTPUT {
        return Err(format!("output_too_large: past {MAX_OUTPUT} bytes"));
    }
    Ok(out.stdout)
}

fn too_large(cap: usize) -> String {
    format!("source_too_large: past {cap} bytes")
}

struct Builder;

impl Guest for Builder {
    fn build(lang: String, source: Vec<u8>) -> Result<Vec<u8>, String> {
        match lang.as_str() {
            "wat" => {
                if source.len() > WAT_MAX_SOURCE {
                    return Err(too_large(WAT_MAX_SOURCE));
                }
                let wasm = lane("wat", &[], &source)?;
                if !wasm.starts_with(b"\0asm") {
                    return Err("refused: the wat lane did not answer WebAssembly".into());
                }
                Ok(wasm)
            }
            "js" => {
                if source.len() > JS_MAX_SOURCE {
                    return Err(too_large(JS_MAX_SOURCE));
                }
                let text = String::from_utf8(source)
                    .map_err(|_| "refused: the script is not UTF-8".to_string())?;
                let argv = ["-e".to_string(), JS_SYNTAX_CHECK.to_string(), text];
                lane("qjs", &argv, &[])?;
                let [_, _, text] = argv;
                Ok(text.into_bytes())
            }
            other => Err(missing(other)),
        }
    }
}

export!(Builder);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_without_a_lane_names_the_missing_compiler() {
        assert_eq!(
            missing("rust"),
            "lane_unavailable: the rust compiler component (mrustc + clang in the sandbox) is not shipped"
        );
        assert!(missing("cobol").starts_with("lane_unavailable: "));
    }
}
