//! `llm`: chat completion with the operator's model.
//!
//! Three layers, like browse. A guest imports `workbooks:engine/llm`; the
//! dock composes it with the llm broker (`guests/llm-broker`), which writes
//! the OpenAI-compatible request and reads the reply inside the sandbox,
//! and posts through the host primitive `workbooks:host/llm`
//! served here.
//!
//! Invariant: the endpoint and its key are operator configuration, held
//! here and nowhere else. No component sees the key or names the URL; the
//! host follows no redirect (the key goes to the configured origin only),
//! caps both bodies, and keeps every bound (per request, retries, the
//! outer deadline, `max_tokens` and the run's token budget: [`budget`])
//! whatever the broker asks. Each post passes the cadence as the store's
//! tenant, and under a stored grant its scope: a model the grant does not
//! name is answered 403 by the host, naming the grant, and never posted.

pub mod budget;
mod endpoint;
mod host;
pub mod tape;

/// The host side of `workbooks:host/llm`, bound here: its types are its
/// own (the agent binds them apart), and a post may wait.
pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: ["../../wit", "../../wit/host"],
        inline: "package workbooks:llm-unit;
                 world unit { import workbooks:host/llm@0.1.0; }",
        imports: { "workbooks:host/llm.post": async },
    });
}

pub use budget::{Spent, TokenBudget, TokenMeter};
pub use endpoint::{LlmBounds, LlmEndpoint};
pub(crate) use endpoint::{LlmService, PostFailure};

use crate::cadence::Cadence;
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::storage::StorageError;
use bindings::workbooks::host::llm;
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiCtxBuilder;

/// What one session's model calls are held to besides the cap: where
/// their answers are recorded or replayed from, and what the session may
/// still spend (an agent run's). The default records nothing and spends
/// within the cap's own bounds only.
#[derive(Debug, Clone, Default)]
pub struct LlmRun {
    /// Where the answers are recorded, or replayed from.
    pub tape: Option<tape::SharedTape>,
    /// What the session may still spend.
    pub budget: Option<Arc<TokenBudget>>,
}

/// The reach of one store: the endpoint and who is asking. The default
/// reaches nothing.
#[derive(Default)]
pub(crate) struct LlmCtx {
    reach: Option<(Arc<LlmService>, String, Arc<Cadence>)>,
    /// Where the answers are recorded, or replayed from ([`LlmRun`]).
    pub(crate) tape: Option<tape::SharedTape>,
    /// What the session may still spend ([`LlmRun`]).
    pub(crate) budget: Option<Arc<TokenBudget>>,
    /// The stored grant's scopes: the models it names, its expiry.
    pub(crate) scope: Option<crate::grants::Scope>,
}

impl LlmCtx {
    /// Reaches `service` as `tenant`, under `cadence`; nothing when the
    /// operator configured no endpoint.
    pub(crate) fn new(
        service: Option<Arc<LlmService>>,
        tenant: String,
        cadence: Arc<Cadence>,
    ) -> Self {
        Self {
            reach: service.map(|s| (s, tenant, cadence)),
            tape: None,
            budget: None,
            scope: None,
        }
    }
}

/// The `llm` unit: the host primitive the llm broker imports.
pub(crate) struct Llm;

impl CapUnit for Llm {
    const INTERFACE: &'static str = "workbooks:host/llm";
    const PER_TENANT: bool = false;
    type Ctx = LlmCtx;

    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        llm::add_to_linker::<T, HasSelf<LlmCtx>>(linker, T::context)
    }

    fn open(o: &Opening<'_>, _: &mut WasiCtxBuilder) -> Result<LlmCtx, StorageError> {
        let (tenant, cadence) = (o.tenant.to_string(), o.cadence.clone());
        let mut ctx = LlmCtx::new(o.llm.cloned(), tenant, cadence);
        ctx.tape = o.llm_run.tape.clone();
        ctx.budget = o.llm_run.budget.clone();
        ctx.scope = o.scope.cloned();
        Ok(ctx)
    }
}
