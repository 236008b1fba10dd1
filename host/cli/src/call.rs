//! `wbx call`: start a component of the `plugin` world (a file, or a
//! registered command by name) under a profile, call its
//! `run(input) -> result<string, string>` once and print the answer; an
//! `err` is printed on stderr and exits 1; a refusal exits 120, as `exec`'s
//! does, and every other failure with its code in [`crate::exit::TABLE`]. A plugin registered at
//! `os_process` is called in a child process, which answers in frames (see
//! `workbooks::child`).

use crate::options::{StageArgs, StageOptions as _};
use crate::{exit, fail};
use std::io::Read as _;
use std::path::PathBuf;
use workbooks::Supervisor;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    stage: StageArgs,
    /// The input to `run`; `-` reads it from stdin.
    #[arg(long, default_value = "", value_name = "TEXT|-")]
    input: String,
    /// The instance id (names its vfs volumes within the tenant; default:
    /// the file's stem or the command's name).
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// The component: a file, or the name of a registered command.
    target: String,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    // Resolved once the component is known: a grant may name it.
    let opts = match args.stage.ungranted_options() {
        Ok(o) => o,
        Err(code) => return code,
    };
    let input = if args.input == "-" {
        let mut text = String::new();
        if let Err(e) = std::io::stdin()
            .take(workbooks::limits::MAX_STDIN_BYTES as u64)
            .read_to_string(&mut text)
        {
            return fail("call", format!("stdin: {e}"), exit::USAGE);
        }
        text
    } else {
        args.input.clone()
    };
    let engine = match crate::options::engine(home) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let path = match crate::oci::local(std::path::Path::new(&args.target), engine.home()) {
        Ok((path, _)) => path,
        Err(code) => return code,
    };
    // The component: a file's bytes, or a registered plugin's entry.
    let target = match path.is_file() {
        true => match engine.load_artifact(&path) {
            Ok(a) => Plugin::File(a),
            Err(e) => return fail("call", e, exit::LOAD),
        },
        false => match engine.registry().get(&args.target) {
            Ok(Some(entry)) => Plugin::Registered(entry),
            Ok(None) => {
                let why = format!(
                    "`{}` is neither a file nor a registered command",
                    args.target
                );
                return fail("call", why, exit::NOT_FOUND);
            }
            Err(e) => return fail("call", e, exit::ENGINE),
        },
    };
    // A stored grant is judged for those bytes: it may name them.
    let subject = match &target {
        Plugin::File(a) => a.sha256_hex(),
        Plugin::Registered(e) => e.sha256.clone(),
    };
    let opts = crate::options::granted(&args.stage, &engine, opts, &format!("sha256:{subject}"));
    let mut opts = match opts {
        Ok(o) => o,
        Err(e) => return fail("refused", e, exit::REFUSED),
    };
    let (artifact, stem, stubs) = match target {
        Plugin::File(artifact) => {
            let named = std::path::Path::new(&args.target);
            let stem = crate::oci::instance_name(named).unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "plugin".into())
            });
            (artifact, stem, workbooks::Stubs::NONE)
        }
        Plugin::Registered(entry) => {
            // A registered plugin runs with no more than its registration
            // allows.
            if let Some(ceiling) = entry.ceiling() {
                let granted = opts
                    .caps
                    .unwrap_or_else(|| workbooks::Profile::resolve(&opts.profile).effective.caps());
                opts.caps = Some(granted.intersect(ceiling));
            }
            // A plugin registered at os_process is called in a child.
            if entry.tier == workbooks::commands::Tier::OsProcess {
                let id = args.id.clone().unwrap_or_else(|| args.target.clone());
                let answer = crate::options::runtime().map(|rt| {
                    rt.block_on(
                        engine
                            .commands()
                            .call_plugin_in_child(&entry, &input, &id, &opts),
                    )
                    .map_err(|e| (e.to_string(), exit::for_command_error(&e)))
                });
                return match answer {
                    Err(code) => code,
                    Ok(answer) => answered(answer, crate::out::json()),
                };
            }
            // A registered plugin brings the stubs its toolkit declared.
            match engine.registry().load(&entry) {
                Ok(a) => (a, args.target.clone(), entry.stub_set()),
                Err(e) => return fail("call", e, exit::LOAD),
            }
        }
    };
    let sup = match Supervisor::for_tenant(engine, &opts.tenant) {
        Ok(s) => s,
        Err(e) => return fail("call", e, exit::USAGE),
    };
    let start = opts.start_options(stubs);
    let id = args.id.clone().unwrap_or(stem);
    let answer = crate::options::runtime().map(|rt| {
        rt.block_on(async {
            sup.start(&id, &artifact, start).await?;
            let answer = sup.call_run(&id, &input).await;
            let _ = sup.stop(&id);
            answer
        })
    });
    match answer {
        Err(code) => code,
        Ok(answer) => answered(
            answer.map_err(|e| (e.to_string(), exit::for_instance_error(&e))),
            crate::out::json(),
        ),
    }
}

/// What `wbx call` calls.
enum Plugin {
    /// A component file, loaded.
    File(workbooks::Artifact),
    /// A registered plugin.
    Registered(workbooks::commands::Entry),
}

/// Prints an answer: `ok` on stdout, `err` on stderr (exit 1), a failure
/// to call with its code.
fn answered(answer: Result<Result<String, String>, (String, u8)>, json: bool) -> u8 {
    match answer {
        Err((e, code)) => fail("call", e, code),
        Ok(result) => {
            if json {
                let (ok, value) = match &result {
                    Ok(v) => (true, v),
                    Err(v) => (false, v),
                };
                let code = if ok { 0 } else { exit::FAILED };
                let report = serde_json::json!({"ok": ok, "value": value});
                outln!(
                    "{}",
                    crate::out::verdict(report, code, &format!("call: {value}"))
                );
            } else {
                match &result {
                    Ok(v) => outln!("{v}"),
                    Err(v) => eprintln!("{v}"),
                }
            }
            u8::from(result.is_err())
        }
    }
}
