//! Entry point of the `jq` command: wires the standard streams to [`jq::run`].

/// jaq builds and drops a value per JSON node: small blocks from size
/// classes, not dlmalloc's coalescing lists.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
#[global_allocator]
static ALLOCATOR: wb_cmd::alloc::SizeClasses = wb_cmd::alloc::SizeClasses::new();

fn main() {
    wb_cmd::main(jq::run);
}
