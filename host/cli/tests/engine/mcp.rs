//! `wbx mcp` driven by a client that is not ours: the official MCP Python
//! SDK (PyPI `mcp`, installed by `.ci/run`), over stdio and over
//! streamable HTTP. `tests/mcp/client.py` does the calling and prints what
//! it saw; this test holds it to the promises.

use crate::common::{text, wbx};
use serde_json::Value;

/// The SDK version the client is written against; installed from PyPI
/// when missing (`.ci/run` installs it up front).
const MCP_SDK: &str = "mcp==2.3.0";

fn ensure_sdk() {
    let has = std::process::Command::new("python3")
        .args(["-c", "import mcp.client.streamable_http"])
        .status()
        .is_ok_and(|s| s.success());
    if !has {
        let installed = std::process::Command::new("python3")
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                MCP_SDK,
            ])
            .status()
            .is_ok_and(|s| s.success());
        assert!(installed, "could not install {MCP_SDK} from PyPI");
    }
}

fn client_saw(home: &std::path::Path) -> Value {
    ensure_sdk();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/client.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_wbx"))
        .arg(home)
        .env_remove("WB_MCP_TOKEN")
        .env_remove("WB_NET_ALLOW")
        .env_remove("WB_OPERATOR_ALLOW")
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the MCP client failed (is the `mcp` package installed? `python3 -m pip install mcp`):\n{}",
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)))
}

fn call(saw: &Value) -> (&str, bool) {
    (
        saw["text"].as_str().expect("text"),
        saw["is_error"].as_bool().expect("is_error"),
    )
}

#[test]
fn the_python_sdk_lists_and_calls_the_tools_and_a_denial_is_a_tool_error() {
    let home = tempfile::tempdir().unwrap();
    let registered = wbx(
        home.path(),
        &[
            "command",
            "register",
            "counter",
            guest_artifacts::EXAMPLE_RUST_COUNTER,
        ],
        b"",
    );
    assert!(registered.status.success(), "{}", text(&registered.stderr));
    let saw = client_saw(home.path());
    let stdio = &saw["stdio"];

    let tools = stdio["tools"].as_object().unwrap();
    for name in ["shell", "jq", "sort", "wc", "fetch", "counter"] {
        assert!(
            tools.contains_key(name),
            "no tool {name}: {:?}",
            tools.keys()
        );
    }
    // Schemas follow each world; descriptions state the grant.
    assert_eq!(
        tools["shell"]["schema"]["required"],
        serde_json::json!(["line"])
    );
    assert_eq!(tools["jq"]["schema"]["properties"]["args"]["type"], "array");
    assert_eq!(
        tools["counter"]["schema"]["required"],
        serde_json::json!(["input"])
    );
    let counter = tools["counter"]["description"].as_str().unwrap();
    assert!(
        counter.starts_with("Plugin component `counter`"),
        "{counter}"
    );
    assert!(
        counter.contains("Needs caps `kv`; runs under profile minimal."),
        "{counter}"
    );
    let fetch = tools["fetch"]["description"].as_str().unwrap();
    assert!(
        fetch.contains("granted by network, posix: refused under profile minimal"),
        "{fetch}"
    );

    assert_eq!(call(&stdio["jq"]), ("\"ada\"\n\"bob\"\n", false));
    assert_eq!(call(&stdio["shell"]), ("5\n4\n", false));
    assert_eq!(call(&stdio["false"]), ("exit 1", true));
    assert_eq!(call(&stdio["plugin"][0]), ("apple seen 1 time(s)", false));
    assert_eq!(call(&stdio["plugin"][1]), ("apple seen 2 time(s)", false));
    let (denied, is_error) = call(&stdio["denied"]);
    assert!(is_error, "{denied}");
    assert!(
        denied.contains("capability not granted: browse")
            && denied.contains("granted by network, posix"),
        "{denied}"
    );
    assert!(
        stdio["unknown"]
            .as_str()
            .unwrap()
            .contains("no tool `no-such-tool`"),
        "{}",
        stdio["unknown"]
    );
    // The slow line reported progress while it ran, and finished.
    assert_eq!(call(&stdio["slow"]), ("20000000\n", false));
    let progress = stdio["progress"].as_array().unwrap();
    assert!(!progress.is_empty(), "no progress reported");
    assert_eq!(progress[0], "shell running for 0.5 s");

    let http = &saw["http"];
    assert_eq!(http["no_token_status"], 401);
    assert_eq!(http["other_path_status"], 404);
    // A DNS-rebinding page's name, even with the token, is refused.
    let foreign = http["foreign_host_status"].as_u64().unwrap();
    assert!((400..500).contains(&foreign), "{http}");
    assert!(http["tools"].as_array().unwrap().iter().any(|t| t == "jq"));
    assert_eq!(call(&http["shell"]), ("OVER HTTP\n", false));
    // The endless call was given up on: its guest stopped (the server went
    // quiet) and the server went on serving.
    assert_eq!(http["cancelled"], "timed out");
    let cpu = http["cpu_after_cancel"].as_f64().unwrap();
    assert!(
        cpu < 0.5,
        "the cancelled guest kept running: {cpu} s of CPU in 2 s"
    );
    assert_eq!(call(&http["after_cancel"]), ("still serving\n", false));

    let open = &saw["open_listen"];
    assert_eq!(open["code"], 125);
    assert!(
        open["stderr"]
            .as_str()
            .unwrap()
            .contains("is not loopback: set a bearer token"),
        "{open}"
    );
}

#[tokio::test]
async fn a_tool_call_with_malformed_arguments_is_a_tool_error_naming_the_argument() {
    let e = crate::common::engine();
    let opts = workbooks::LineOptions::default;
    let args = |v: Value| v.as_object().unwrap().clone();
    for (kind, given, says) in [
        (
            workbooks_toolkit::tools::ToolKind::Shell,
            serde_json::json!({}),
            "`line` (a string) is required",
        ),
        (
            workbooks_toolkit::tools::ToolKind::Command("echo".into()),
            serde_json::json!({"args": "not a list"}),
            "`args` must be an array of strings",
        ),
        (
            workbooks_toolkit::tools::ToolKind::Command("echo".into()),
            serde_json::json!({"args": ["ok", 7]}),
            "`args` must be strings",
        ),
        (
            workbooks_toolkit::tools::ToolKind::Plugin("counter".into()),
            serde_json::json!({}),
            "`input` (a string) is required",
        ),
        (
            workbooks_toolkit::tools::ToolKind::Plugin("never-registered".into()),
            serde_json::json!({"input": "x"}),
            "no plugin `never-registered`",
        ),
    ] {
        let out = workbooks_toolkit::tools::Tools::new(e.clone())
            .call(&kind, &args(given), opts())
            .await;
        assert!(out.is_error, "{kind:?}");
        assert_eq!(out.text, says, "{kind:?}");
    }
    assert_eq!(
        workbooks_toolkit::tools::Tools::new(e.clone()).kind("no-such-tool"),
        None
    );
    assert_eq!(
        workbooks_toolkit::tools::Tools::new(e.clone()).kind("shell"),
        Some(workbooks_toolkit::tools::ToolKind::Shell)
    );
    assert_eq!(
        workbooks_toolkit::tools::Tools::new(e.clone()).kind("sort"),
        Some(workbooks_toolkit::tools::ToolKind::Command("sort".into()))
    );
}
