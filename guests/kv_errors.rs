// The kv primitive's errors as the guest-facing kv errors, one to
// one. Included by the kv broker and by the test replacement broker (an
// embedder's broker would carry its own). Expects `HostError` and
// `KvError` in scope.

fn map_error(e: HostError) -> KvError {
    match e {
        HostError::Revoked => KvError::Revoked,
        HostError::RateLimited => KvError::RateLimited,
        HostError::InvalidKey(why) => KvError::InvalidKey(why),
        HostError::ValueTooLarge(limit) => KvError::ValueTooLarge(limit),
        HostError::TooManyKeys(limit) => KvError::TooManyKeys(limit),
        HostError::Unavailable(why) => KvError::Unavailable(why),
    }
}
