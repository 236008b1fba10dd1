// The kv primitive's errors as the guest-facing kv errors, one to
// one. Included by the kv broker and by the test replacement broker (an
// embedder's broker would carry its own). Expects `StorageError` and
// `KvError` in scope.

fn map_error(e: StorageError) -> KvError {
    match e {
        StorageError::Revoked => KvError::Revoked,
        StorageError::RateLimited => KvError::RateLimited,
        StorageError::InvalidKey(why) => KvError::InvalidKey(why),
        StorageError::ValueTooLarge(limit) => KvError::ValueTooLarge(limit),
        StorageError::TooManyKeys(limit) => KvError::TooManyKeys(limit),
        StorageError::Unavailable(why) => KvError::Unavailable(why),
    }
}
