//! `wbx warm`: compile every component shipped inside the engine into the
//! home's cache ahead of time, with a progress bar on a terminal, so the
//! first real command on this machine starts from native code.

use crate::{exit, fail, options};
use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {}

pub(crate) fn run(_args: Args, home: PathBuf) -> u8 {
    let engine = match options::engine(home) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let bar = if std::io::stderr().is_terminal() && !crate::out::json() {
        indicatif::ProgressBar::new(engine.warm_steps() as u64)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let runtime = match options::runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let json = crate::out::json();
    let warmed = runtime.block_on(engine.warm(|step| {
        bar.inc(1);
        bar.set_message(step.name.clone());
        if json {
            // A closed stdout ends the listing, not the warming.
            let line = serde_json::to_string(step).unwrap_or_default();
            let _ = writeln!(std::io::stdout(), "{line}");
        }
    }));
    bar.finish_and_clear();
    match warmed {
        Ok(steps) => {
            if !json {
                let fresh = steps.iter().filter(|s| !s.cached).count();
                let took: std::time::Duration = steps.iter().map(|s| s.took).sum();
                outln!(
                    "warm: {} components ready ({fresh} compiled now) in {:.1}s",
                    steps.len(),
                    took.as_secs_f64()
                );
            }
            0
        }
        Err(e) => fail("warm", e, exit::ENGINE),
    }
}
