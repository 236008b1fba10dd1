//! `wbx kernel`: the kernel registry, and calling a kernel.

use crate::options::{engine, read_file, runtime};
use crate::{exit, fail};
use std::io::Read;
use std::path::PathBuf;
use std::time::Instant;
use workbooks::commands::listing;
use workbooks::kernel::{KERNEL_ENTRY, Kernel, KernelError, KernelOptions};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum KernelCommand {
    /// Register (or hot-swap) a kernel: a core module exporting `memory`
    /// and `process(in_len) -> out_len`, or a component exporting
    /// `process: func(list<u8>) -> list<u8>`.
    Register {
        /// The name to bind (A-Z a-z 0-9 _ . -).
        name: String,
        /// The artifact.
        file: PathBuf,
        /// A core kernel's entry.
        #[arg(long, default_value = KERNEL_ENTRY)]
        entry: String,
        /// Replace a kernel registered under the name already.
        #[arg(long)]
        replace: bool,
    },
    /// List registered kernels.
    List,
    /// Remove a registered kernel (its bytes stay for calls in flight).
    Remove {
        /// The kernel's name.
        name: String,
    },
    /// Call a registered kernel on an input (stdin when --input is not
    /// given) and print its output.
    Run {
        /// The kernel's name.
        name: String,
        /// The input, as text.
        #[arg(long, value_name = "TEXT")]
        input: Option<String>,
        /// Call it this many times on the same instance (prints the last
        /// output, and the rate on stderr).
        #[arg(long, default_value_t = 1, value_name = "N")]
        repeat: u64,
        /// A core kernel's entry.
        #[arg(long, default_value = KERNEL_ENTRY)]
        entry: String,
    },
}

fn kernel_failure(e: &KernelError) -> u8 {
    let code = match e {
        KernelError::NotAKernel(_) => exit::LOAD,
        KernelError::Refused(why) if why.starts_with("unknown_kernel") => exit::NOT_FOUND,
        KernelError::Refused(_) | KernelError::InputTooLarge { .. } => exit::REFUSED,
        KernelError::BadOutput { .. } | KernelError::Trap { .. } => exit::TRAP,
        KernelError::Fuel { .. } => exit::FUEL,
        KernelError::Timeout { .. } => exit::TIMEOUT,
        KernelError::Memory { .. } => exit::MEMORY,
    };
    fail("kernel", e, code)
}

pub(crate) fn run(cmd: KernelCommand, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let engine = engine(home)?;
        match cmd {
            KernelCommand::Register {
                name,
                file,
                entry,
                replace,
            } => {
                let bytes = read_file(&file)?;
                let entry = workbooks::kernel::Kernels::of(&engine)
                    .register(&name, bytes, &entry, replace)
                    .map_err(|e| kernel_failure(&e))?;
                outln!("registered kernel {} → sha256:{}", entry.name, entry.sha256);
                Ok(0)
            }
            KernelCommand::Remove { name } => {
                let removed = engine.kernels().remove(&name).map_err(|e| {
                    let code = match e {
                        workbooks::commands::RegistryError::NotFound(_) => exit::NOT_FOUND,
                        workbooks::commands::RegistryError::InvalidName(_) => exit::USAGE,
                        _ => exit::ENGINE,
                    };
                    fail("kernel", e, code)
                })?;
                outln!(
                    "removed kernel {} (sha256:{})",
                    removed.name,
                    removed.sha256
                );
                Ok(0)
            }
            KernelCommand::List => {
                let entries = engine
                    .kernels()
                    .list()
                    .map_err(|e| fail("kernel", e, exit::ENGINE))?;
                outln!("{}", listing::list_text(&entries, crate::out::json()));
                Ok(0)
            }
            KernelCommand::Run {
                name,
                input,
                repeat,
                entry,
            } => {
                let json = crate::out::json();
                let input = match input {
                    Some(text) => text.into_bytes(),
                    None => {
                        let mut bytes = Vec::new();
                        std::io::stdin()
                            .read_to_end(&mut bytes)
                            .map_err(|e| fail("io", e, exit::ENGINE))?;
                        bytes
                    }
                };
                let artifact = workbooks::kernel::Kernels::of(&engine)
                    .load(&name)
                    .map_err(|e| kernel_failure(&e))?;
                let opts = KernelOptions {
                    entry,
                    ..KernelOptions::default()
                };
                let (output, calls, elapsed) = runtime()?.block_on(async {
                    let mut kernel = Kernel::load(&engine, &artifact, opts)
                        .await
                        .map_err(|e| kernel_failure(&e))?;
                    let start = Instant::now();
                    let mut output = Vec::new();
                    for _ in 0..repeat.max(1) {
                        output = kernel.call(&input).await.map_err(|e| kernel_failure(&e))?;
                    }
                    Ok::<_, u8>((output, kernel.calls(), start.elapsed()))
                })?;
                if json {
                    let line = serde_json::json!({
                        "kernel": name,
                        "output": String::from_utf8_lossy(&output),
                        "calls": calls,
                        "elapsed_us": elapsed.as_micros() as u64,
                    });
                    outln!("{line}");
                } else {
                    crate::out::write_bytes(&output);
                    if repeat > 1 {
                        let rate = calls as f64 / elapsed.as_secs_f64().max(1e-9);
                        eprintln!("{calls} calls in {elapsed:.2?} ({rate:.0} calls/s)");
                    }
                }
                Ok(0)
            }
        }
    };
    body().unwrap_or_else(|code| code)
}
