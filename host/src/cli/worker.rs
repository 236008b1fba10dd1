//! `wbx worker`: the node tier's worker.

use crate::options::engine;
use crate::{exit, fail};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The NATS server (JetStream enabled), e.g. nats://127.0.0.1:4222.
    #[arg(long, value_name = "URL")]
    nats: String,
    /// Tasks run at once.
    #[arg(long, default_value_t = 4, value_name = "N")]
    concurrency: usize,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let engine = engine(home)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| fail("engine", e, exit::ENGINE))?;
        eprintln!(
            "{}: worker pulling from {} ({} at a time)",
            crate::BIN,
            args.nats,
            args.concurrency
        );
        let stats = rt
            .block_on(async {
                tokio::select! {
                    stats = workbooks::fabric::node::run_worker(&engine, &args.nats, args.concurrency) => stats,
                    _ = tokio::signal::ctrl_c() => Ok(Default::default()),
                }
            })
            .map_err(|e| fail("worker", e, exit::ENGINE))?;
        eprintln!(
            "{}: worker done: {} recorded, {} duplicates",
            crate::BIN,
            stats.recorded,
            stats.duplicates
        );
        Ok(0)
    };
    body().unwrap_or_else(|code| code)
}
