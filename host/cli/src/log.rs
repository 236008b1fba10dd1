//! The CLI's diagnostics on stderr. `WB_LOG` (an env-filter directive such
//! as `debug` or `workbooks=trace`) chooses what is shown; unset, warnings
//! and errors are. Coloured only when stderr is a terminal. A command that logs nothing should not pay for the
//! formatter at start (its registry, its filter, their first pages), so on
//! the default the formatting subscriber is built by the first warning,
//! and shows it exactly as it would have.

use std::sync::OnceLock;
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Dispatch, Event, Level, Metadata, Subscriber, span};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs the CLI's subscriber (and the bridge from the `log` crate).
pub(crate) fn init() {
    let _ = match EnvFilter::try_from_env("WB_LOG") {
        Ok(filter) => formatter(filter).try_init(),
        Err(_) => OnFirstWarning::default().try_init(),
    };
}

/// How diagnostics look: level and message on stderr, no target.
fn formatter(filter: EnvFilter) -> impl Subscriber + Send + Sync {
    use std::io::IsTerminal as _;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        // Colour codes only where a terminal reads them, never into a file.
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .finish()
}

/// The default subscriber: shows warnings and errors, through a formatter
/// it builds when the first one (or a span at that level) arrives.
#[derive(Default)]
struct OnFirstWarning {
    formatter: OnceLock<Dispatch>,
}

impl OnFirstWarning {
    /// What the default shows.
    const SHOWN: Level = Level::WARN;

    /// Targets whose warnings a guest triggers at will, one per call: a
    /// preview 1 socket call (wasmtime-wasi warns that it is not
    /// implemented) would otherwise write a line to stderr each time.
    const GUEST_TRIGGERED: &[&str] = &["wasmtime_wasi::p1"];

    fn shows(metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= Self::SHOWN
            && !Self::GUEST_TRIGGERED
                .iter()
                .any(|t| metadata.target().starts_with(t))
    }

    fn formatter(&self) -> &Dispatch {
        self.formatter
            .get_or_init(|| Dispatch::new(formatter(EnvFilter::new(Self::SHOWN.as_str()))))
    }

    /// Spans exist only once the formatter does (it made them).
    fn made_spans(&self) -> Option<&Dispatch> {
        self.formatter.get()
    }
}

impl Subscriber for OnFirstWarning {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        if Self::shows(metadata) {
            Interest::always()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        Self::shows(metadata)
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::from_level(Self::SHOWN))
    }

    fn new_span(&self, span: &span::Attributes<'_>) -> span::Id {
        self.formatter().new_span(span)
    }

    fn record(&self, span: &span::Id, values: &span::Record<'_>) {
        if let Some(made) = self.made_spans() {
            made.record(span, values);
        }
    }

    fn record_follows_from(&self, span: &span::Id, follows: &span::Id) {
        if let Some(made) = self.made_spans() {
            made.record_follows_from(span, follows);
        }
    }

    fn event(&self, event: &Event<'_>) {
        self.formatter().event(event);
    }

    fn enter(&self, span: &span::Id) {
        if let Some(made) = self.made_spans() {
            made.enter(span);
        }
    }

    fn exit(&self, span: &span::Id) {
        if let Some(made) = self.made_spans() {
            made.exit(span);
        }
    }

    fn clone_span(&self, span: &span::Id) -> span::Id {
        match self.made_spans() {
            Some(made) => made.clone_span(span),
            None => span.clone(),
        }
    }

    fn try_close(&self, span: span::Id) -> bool {
        self.made_spans().is_some_and(|made| made.try_close(span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(dispatch: &Dispatch) -> bool {
        let ours = dispatch.downcast_ref::<OnFirstWarning>().expect("ours");
        ours.formatter.get().is_some()
    }

    #[test]
    fn only_a_warning_builds_the_formatter() {
        let dispatch = Dispatch::new(OnFirstWarning::default());
        tracing::dispatcher::with_default(&dispatch, || {
            tracing::info!("below the default");
            tracing::debug_span!("not made").in_scope(|| tracing::trace!("nor this"));
        });
        assert!(!built(&dispatch), "built for events it does not show");
        tracing::dispatcher::with_default(&dispatch, || {
            tracing::warn!(target: "wasmtime_wasi::p1", "a guest-triggered warning, not shown");
        });
        assert!(!built(&dispatch), "built for a guest-triggered warning");
        tracing::dispatcher::with_default(&dispatch, || tracing::warn!("a warning, shown"));
        assert!(built(&dispatch), "a warning did not build it");
    }
}
