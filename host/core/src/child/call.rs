//! A registered plugin's `run` called once for a parent (a plugin
//! registered at `os_process`): its `ok` text on the stdout frame, its
//! `err` text on the stderr frame, the verdict exit 0 or 1.

use super::{Answer, ChildRequest, refused};
use crate::commands::CommandError;
use crate::commands::frames::Verdict;
use crate::instance::Supervisor;
use crate::shell::LineOptions;
use bytes::Bytes;
use std::io::Read as _;

/// Calls the plugin registered as `name`, whose entry must hold
/// `sha256`, with the rest of stdin as its input.
pub(super) fn call(
    request: &ChildRequest,
    name: &str,
    sha256: &str,
) -> Result<Answer, CommandError> {
    let grant = super::grant(request)?;
    let engine = super::engine(request, Ok)?;
    // The child calls the registered bytes it was told, or nothing.
    let entry = engine
        .registry()
        .get(name)
        .map_err(refused)?
        .ok_or_else(|| refused(format!("`{name}` is not a registered command")))?;
    if entry.sha256 != sha256 {
        return Err(refused(format!(
            "`{name}` holds sha256 {} now, not the {sha256} its caller named",
            entry.sha256
        )));
    }
    // A registered plugin runs with no more than its registration allows.
    let mut caps = grant.caps;
    if let Some(ceiling) = entry.ceiling() {
        caps = caps.intersect(ceiling);
    }
    let artifact = engine.registry().load(&entry).map_err(refused)?;
    let mut input = String::new();
    std::io::stdin()
        .take(crate::limits::MAX_STDIN_BYTES as u64)
        .read_to_string(&mut input)
        .map_err(|e| refused(format!("stdin: {e}")))?;
    let opts = LineOptions {
        profile: request.profile.clone(),
        caps: Some(caps),
        tenant: request.tenant.clone(),
        dirs: super::dirs(request),
        scope: super::scope(request, &engine)?,
        stage_timeout: request.timeout_ms.map(std::time::Duration::from_millis),
        stage_fuel: request.fuel,
        stage_memory: request.memory,
        env: super::env(request)?,
        ..LineOptions::default()
    };
    let sup = Supervisor::for_tenant(engine.clone(), &request.tenant).map_err(refused)?;
    let start = opts.start_options(entry.stub_set());
    let id = request.id.as_str();
    let answer = super::runtime()?.block_on(async {
        sup.start(id, &artifact, start).await?;
        let answer = sup.call_run(id, &input).await;
        let _ = sup.stop(id);
        answer
    });
    engine.cadence().audit().flush();
    Ok(match answer.map_err(refused)? {
        Ok(text) => (text.into(), Bytes::new(), Verdict::Exit(0)),
        Err(text) => (Bytes::new(), text.into(), Verdict::Exit(1)),
    })
}
