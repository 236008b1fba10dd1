//! The pooled engine gives slots back as their instances end: a small one
//! warm, for the next instance to reuse, and one whose instance outgrew the
//! part kept resident with its pages returned.

use super::{Engine, POOL_MEMORY_KEEP_RESIDENT};
use crate::{Artifact, Docked, Grant, SessionOptions};
use std::sync::Arc;
use wasmtime::PoolingAllocatorMetrics;

/// A pooled engine on the defaults, its pool's metrics, and `probe` docked
/// under `compute`; keep the directory alive.
fn pooled_with(
    probe: &str,
) -> (
    tempfile::TempDir,
    Engine,
    PoolingAllocatorMetrics,
    Arc<Docked>,
) {
    let home = tempfile::tempdir().expect("home");
    let engine = Engine::builder().home(home.path()).build().expect("engine");
    let metrics = engine
        .inner
        .wasmtime
        .of(crate::flavor::Flavor::Sync)
        .pooling_allocator_metrics()
        .expect("the default engine is pooled");
    let artifact = Artifact::from_file(probe).expect("probe");
    let docked = engine
        .dock(&artifact, &Grant::profile("compute"))
        .expect("dock");
    (home, engine, metrics, docked)
}

#[tokio::test]
async fn a_pooled_slot_gives_its_pages_back_as_soon_as_a_large_instance_ends() {
    let (_home, engine, metrics, docked) = pooled_with(guest_artifacts::LIMITS_MEMORY_BOMB);
    // Touches 64 MiB, all but the kept-resident part to be given back.
    let ended = engine
        .run(&docked, SessionOptions::new("bomb", "acme"))
        .await;
    assert!(ended.is_err(), "the bomb ends at its memory cap");
    assert_eq!(metrics.memories(), 0, "no memory is still live");
    let warm = metrics.unused_warm_memories() as usize;
    assert!(warm >= 1, "the bomb's slot is back in the pool, not queued");
    let resident = metrics.unused_memory_bytes_resident();
    assert!(
        resident <= warm * POOL_MEMORY_KEEP_RESIDENT,
        "{resident} bytes kept resident by {warm} free slots"
    );
}

#[tokio::test]
async fn a_small_instance_slot_is_back_in_the_pool_warm_as_soon_as_it_ends() {
    let (_home, engine, metrics, docked) = pooled_with(guest_artifacts::CLI_HELLO);
    for round in 1..=3 {
        let out = engine
            .run(&docked, SessionOptions::new("hello", "acme"))
            .await
            .expect("run");
        assert_eq!(&out.stdout[..], b"hello\n");
        assert_eq!(metrics.memories(), 0, "round {round}: no memory is live");
        // The same slot each time: one warm slot, however many runs.
        assert_eq!(
            metrics.unused_warm_memories(),
            1,
            "round {round}: the slot is back and reused"
        );
    }
}
