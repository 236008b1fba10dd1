//! The pooled engine gives memory back: a slot whose instance outgrew the
//! part kept resident returns its pages as the instance ends.

use super::{Engine, POOL_MEMORY_KEEP_RESIDENT};
use crate::{Artifact, Grant, SessionOptions};

#[tokio::test]
async fn a_pooled_slot_gives_its_pages_back_as_soon_as_a_large_instance_ends() {
    let home = tempfile::tempdir().expect("home");
    let engine = Engine::builder().home(home.path()).build().expect("engine");
    let metrics = engine
        .inner
        .wasmtime
        .pooling_allocator_metrics()
        .expect("the default engine is pooled");
    let bomb = Artifact::from_file(guest_artifacts::LIMITS_MEMORY_BOMB).expect("probe");
    let docked = engine
        .dock(&bomb, &Grant::profile("compute"))
        .expect("dock");
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
