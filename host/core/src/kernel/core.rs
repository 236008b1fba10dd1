//! Core kernels: a core module with the reference ABI, called
//! synchronously on the caller's thread. One call is one memory copy in,
//! one function call and one memory copy out; no store is made per call.

use super::{
    KERNEL_INPUT_OFFSET, KERNEL_MAX_OUTPUT_BYTES, KERNEL_OUTPUT_OFFSET, KernelError, KernelOptions,
};
use crate::artifact::Artifact;
use crate::engine::Engine;
use crate::engine::run::{RunError, classify_with};
use crate::limits::{Deadline, HasDeadline, MemoryLimiter, install_blocking_deadline};
use wasmtime::{Instance, Memory, Module, Store, TypedFunc};

/// Bytes in one wasm page.
const PAGE: usize = 65_536;

struct KernelState {
    limiter: MemoryLimiter,
    deadline: Deadline,
}

impl HasDeadline for KernelState {
    fn deadline(&self) -> Deadline {
        self.deadline
    }
}

struct Live {
    store: Store<KernelState>,
    memory: Memory,
    entry: TypedFunc<i32, i32>,
}

/// A core-module kernel: compiled once, instantiated once, called many
/// times; re-instantiated only after a faulted call.
pub struct CoreKernel {
    /// The engine's handle, held so its epoch ticker (the deadline) lives
    /// as long as the kernel.
    _engine: Engine,
    wasmtime: wasmtime::Engine,
    module: Module,
    opts: KernelOptions,
    live: Option<Live>,
    calls: u64,
}

impl CoreKernel {
    /// Compiles (or takes from the cache) and instantiates `artifact`,
    /// after checking its shape.
    pub fn load(
        engine: &Engine,
        artifact: &Artifact,
        opts: KernelOptions,
    ) -> Result<CoreKernel, KernelError> {
        check_module(artifact.bytes(), &opts.entry)?;
        let (wasmtime, module) = engine
            .core_module(artifact)
            .map_err(|e| KernelError::Refused(e.to_string()))?;
        let mut kernel = CoreKernel {
            _engine: engine.clone(),
            wasmtime,
            module,
            opts,
            live: None,
            calls: 0,
        };
        kernel.live = Some(kernel.instantiate(0)?);
        Ok(kernel)
    }

    /// Calls made so far, faulted or not.
    pub fn calls(&self) -> u64 {
        self.calls
    }

    fn instantiate(&self, call: u64) -> Result<Live, KernelError> {
        let state = KernelState {
            limiter: MemoryLimiter::new(self.opts.memory),
            deadline: Deadline::after(self.opts.timeout),
        };
        let mut store = Store::new(&self.wasmtime, state);
        store.limiter(|s| &mut s.limiter);
        install_blocking_deadline(&mut store);
        store
            .set_fuel(self.opts.fuel)
            .map_err(|e| KernelError::Refused(format!("{e:#}")))?;
        // A start function runs here, under the same budgets as a call.
        let instance = Instance::new(&mut store, &self.module, &[])
            .map_err(|e| self.fault(call, e, &store))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| KernelError::NotAKernel("exports no `memory`".into()))?;
        let entry = instance
            .get_typed_func::<i32, i32>(&mut store, &self.opts.entry)
            .map_err(|e| KernelError::NotAKernel(format!("entry `{}`: {e}", self.opts.entry)))?;
        Ok(Live {
            store,
            memory,
            entry,
        })
    }

    fn fault(&self, call: u64, e: wasmtime::Error, store: &Store<KernelState>) -> KernelError {
        let s = store.data();
        match classify_with(e, &s.limiter, s.deadline, Some(self.opts.fuel)) {
            RunError::Timeout { budget } => KernelError::Timeout { call, budget },
            RunError::Fuel { .. } => KernelError::Fuel {
                call,
                fuel: self.opts.fuel,
            },
            RunError::Memory { limit, requested } => KernelError::Memory {
                call,
                needed: requested,
                limit,
            },
            other => KernelError::Trap {
                call,
                why: other.to_string(),
            },
        }
    }

    /// Calls the kernel on `input` and returns its output.
    pub fn call(&mut self, input: &[u8]) -> Result<Vec<u8>, KernelError> {
        self.call_with(input, <[u8]>::to_vec)
    }

    /// Calls the kernel on `input`, its output replacing `out`'s contents
    /// (no allocation once `out` is large enough). A fault retires the
    /// instance; the next call gets a fresh one.
    pub fn call_into(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), KernelError> {
        self.call_with(input, |answer| {
            out.clear();
            out.extend_from_slice(answer);
        })
    }

    /// Calls the kernel on `input` and lends its output to `read` where it
    /// lies, in the kernel's memory: the input is copied in, the output is
    /// not copied out. A fault retires the instance; the next call gets a
    /// fresh one.
    ///
    /// ```no_run
    /// # fn demo(kernel: &mut workbooks::kernel::CoreKernel) -> Result<(), workbooks::kernel::KernelError> {
    /// let checksum: u64 = kernel.call_with(b"payload", |out| out.iter().map(|&b| u64::from(b)).sum())?;
    /// # Ok(()) }
    /// ```
    pub fn call_with<R>(
        &mut self,
        input: &[u8],
        read: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, KernelError> {
        super::check_input(input)?;
        self.calls += 1;
        let call = self.calls;
        let mut live = match self.live.take() {
            Some(live) => live,
            None => self.instantiate(call)?,
        };
        // An input that does not fit leaves the instance as it was.
        if let Err(e) = self.fit(&mut live, call, input.len()) {
            self.live = Some(live);
            return Err(e);
        }
        let answer = self.call_live(&mut live, call, input)?;
        let read = read(&live.memory.data(&live.store)[answer]);
        self.live = Some(live);
        Ok(read)
    }

    /// Arms the call's budgets and grows the memory to hold `len` bytes of
    /// input, within the cap.
    fn fit(&self, live: &mut Live, call: u64, len: usize) -> Result<(), KernelError> {
        let store = &mut live.store;
        store.data_mut().deadline = Deadline::after(self.opts.timeout);
        store.data_mut().limiter.arm();
        store
            .set_fuel(self.opts.fuel)
            .map_err(|e| KernelError::Refused(format!("{e:#}")))?;
        let end = KERNEL_INPUT_OFFSET + len;
        let size = live.memory.data_size(&*store);
        if end > size {
            let pages = (end - size).div_ceil(PAGE) as u64;
            if live.memory.grow(&mut *store, pages).is_err() {
                return Err(KernelError::Memory {
                    call,
                    needed: size + pages as usize * PAGE,
                    limit: self.opts.memory,
                });
            }
        }
        Ok(())
    }

    /// Copies `input` in, calls the entry, and checks the answer: where
    /// the output lies in the kernel's memory.
    fn call_live(
        &self,
        live: &mut Live,
        call: u64,
        input: &[u8],
    ) -> Result<std::ops::Range<usize>, KernelError> {
        let store = &mut live.store;
        let end = KERNEL_INPUT_OFFSET + input.len();
        live.memory.data_mut(&mut *store)[KERNEL_INPUT_OFFSET..end].copy_from_slice(input);
        let len = live
            .entry
            .call(&mut *store, input.len() as i32)
            .map_err(|e| self.fault(call, e, store))?;
        let len = len as u32 as usize;
        if len > KERNEL_MAX_OUTPUT_BYTES {
            return Err(KernelError::BadOutput {
                call,
                why: format!("answered {len} bytes, over {KERNEL_MAX_OUTPUT_BYTES}"),
            });
        }
        let size = live.memory.data_size(&*store);
        let answer = KERNEL_OUTPUT_OFFSET..KERNEL_OUTPUT_OFFSET + len;
        if answer.end > size {
            return Err(KernelError::BadOutput {
                call,
                why: format!(
                    "answered {len} bytes at offset {KERNEL_OUTPUT_OFFSET}, past its {size} byte memory"
                ),
            });
        }
        Ok(answer)
    }
}

/// Checks a core module's kernel shape: no imports, `memory` exported,
/// `entry` exported as `(i32) -> i32`.
pub(super) fn check_module(bytes: &[u8], entry: &str) -> Result<(), KernelError> {
    use wasmparser::{ExternalKind, Parser, Payload, TypeRef, ValType};
    let bad = |why: String| KernelError::NotAKernel(why);
    let mut types = Vec::new();
    let mut funcs = Vec::new();
    let mut memory = false;
    let mut entry_func = None;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(|e| bad(e.to_string()))? {
            Payload::TypeSection(section) => {
                for ty in section.into_iter_err_on_gc_types() {
                    types.push(ty.map_err(|e| bad(e.to_string()))?);
                }
            }
            Payload::ImportSection(section) => {
                if let Some(import) = section.into_imports().next() {
                    let import = import.map_err(|e| bad(e.to_string()))?;
                    let kind = match import.ty {
                        TypeRef::Func(_) => "function",
                        TypeRef::Memory(_) => "memory",
                        TypeRef::Table(_) => "table",
                        TypeRef::Global(_) => "global",
                        _ => "item",
                    };
                    return Err(bad(format!(
                        "a kernel imports nothing; this one imports {kind} {}.{}",
                        import.module, import.name
                    )));
                }
            }
            Payload::FunctionSection(section) => {
                for f in section {
                    funcs.push(f.map_err(|e| bad(e.to_string()))?);
                }
            }
            Payload::ExportSection(section) => {
                for export in section {
                    let export = export.map_err(|e| bad(e.to_string()))?;
                    match (export.name, export.kind) {
                        ("memory", ExternalKind::Memory) => memory = true,
                        (name, ExternalKind::Func) if name == entry => {
                            entry_func = Some(export.index)
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !memory {
        return Err(bad("exports no `memory`".into()));
    }
    let index = entry_func.ok_or_else(|| bad(format!("exports no function `{entry}`")))?;
    let ty = funcs
        .get(index as usize)
        .and_then(|t| types.get(*t as usize))
        .ok_or_else(|| bad(format!("`{entry}` has no type")))?;
    if ty.params() != [ValType::I32] || ty.results() != [ValType::I32] {
        return Err(bad(format!(
            "`{entry}` must be (i32) -> i32 (input length in, output length out); it is {ty}"
        )));
    }
    Ok(())
}
