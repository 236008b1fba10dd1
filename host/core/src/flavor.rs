//! The two wasmtime engines a Workbooks engine runs guests on, and which
//! one a guest needs.
//!
//! A wasmtime engine built with concurrency support sets up the component
//! model's async machinery in every store it makes, used or not: measured
//! with `cargo bench -p workbooks-cli --bench instantiate`, instantiating
//! and calling a WASI 0.2 command took 10.8 µs on such an engine against
//! 8.7 µs on one without. So WASI 0.2 components and core modules run on a
//! [`Flavor::Sync`] engine, and only a component that needs the async ABI
//! (a WASI 0.3 import or export, an async function type, an async
//! canonical built-in) runs on the [`Flavor::Concurrent`] one. Both share
//! every setting but that one; each has its own instance pool and linkers,
//! and code compiled for one never loads on the other (the compile cache
//! names the flavor).

use std::sync::{Arc, OnceLock};

/// Which of the two engines a guest runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// No component-model concurrency: WASI 0.2 components, core modules.
    Sync,
    /// The component model's async ABI: WASI 0.3 components.
    Concurrent,
}

impl Flavor {
    /// The word naming it in compile cache entries.
    pub(crate) fn word(self) -> &'static str {
        match self {
            Flavor::Sync => "sync",
            Flavor::Concurrent => "concurrent",
        }
    }
}

/// The two wasmtime engines; cheap to clone, clones share both. The
/// concurrent one is built on first use, so a process that runs no WASI
/// 0.3 component never pays for a second engine and its instance pool.
#[derive(Clone)]
pub(crate) struct Engines {
    sync: wasmtime::Engine,
    concurrent: Arc<OnceLock<wasmtime::Engine>>,
    config: Arc<wasmtime::Config>,
}

impl Engines {
    /// Builds the sync engine from `config` (and keeps it for the
    /// concurrent one), turning concurrency off for it.
    pub(crate) fn new(mut config: wasmtime::Config) -> wasmtime::Result<Engines> {
        config.concurrency_support(false);
        let sync = wasmtime::Engine::new(&config)?;
        config.concurrency_support(true);
        Ok(Engines {
            sync,
            concurrent: Arc::default(),
            config: Arc::new(config),
        })
    }

    /// The engine of `flavor`.
    pub(crate) fn of(&self, flavor: Flavor) -> &wasmtime::Engine {
        match flavor {
            Flavor::Sync => &self.sync,
            Flavor::Concurrent => self.concurrent.get_or_init(|| {
                // The same settings as the sync engine, which built, with
                // concurrency at wasmtime's own default: a refusal here is
                // a bug in this engine, not in a guest.
                wasmtime::Engine::new(&self.config)
                    .expect("the concurrent engine takes the sync engine's settings")
            }),
        }
    }

    /// The flavor of `engine`, one of these two.
    pub(crate) fn flavor_of(&self, engine: &wasmtime::Engine) -> Flavor {
        if wasmtime::Engine::same(engine, &self.sync) {
            Flavor::Sync
        } else {
            Flavor::Concurrent
        }
    }

    /// Every engine built so far, for what each must get (the epoch tick).
    pub(crate) fn built(&self) -> impl Iterator<Item = &wasmtime::Engine> {
        std::iter::once(&self.sync).chain(self.concurrent.get())
    }
}
