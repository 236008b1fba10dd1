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
    let mut opts = match args.stage.to_options() {
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
    // A registered plugin runs with no more than its registration allows.
    if !path.is_file()
        && let Ok(Some(entry)) = engine.registry().get(&args.target)
        && let Some(ceiling) = entry.ceiling()
    {
        let granted = opts
            .caps
            .unwrap_or_else(|| workbooks::Profile::resolve(&opts.profile).effective.caps());
        opts.caps = Some(granted.intersect(ceiling));
    }
    // A plugin registered at os_process is called in a child.
    if !path.is_file()
        && let Ok(Some(entry)) = engine.registry().get(&args.target)
        && entry.tier == workbooks::commands::Tier::OsProcess
    {
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
    let mut stubs = workbooks::Stubs::NONE;
    let (artifact, stem) = if path.is_file() {
        let stem =
            crate::oci::instance_name(std::path::Path::new(&args.target)).unwrap_or_else(|| {
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "plugin".into())
            });
        let loaded = engine
            .load_artifact(&path)
            .map_err(|e| (e.to_string(), exit::LOAD));
        (loaded, stem)
    } else {
        let loaded = match engine.registry().get(&args.target) {
            Ok(Some(entry)) => {
                stubs = entry.stub_set();
                engine
                    .registry()
                    .load(&entry)
                    .map_err(|e| (e.to_string(), exit::LOAD))
            }
            Ok(None) => Err((
                format!(
                    "`{}` is neither a file nor a registered command",
                    args.target
                ),
                exit::NOT_FOUND,
            )),
            Err(e) => Err((e.to_string(), exit::ENGINE)),
        };
        (loaded, args.target.clone())
    };
    let artifact = match artifact {
        Ok(a) => a,
        Err((e, code)) => return fail("call", e, code),
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
