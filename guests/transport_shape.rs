// The shape every one-shot transport broker (tcp, udp, tls) gives its
// guests, included by each: the destination is checked here so a malformed
// one fails without a host call, and the request cap is expressed before
// the bytes cross. The host checks the transport's grant, runs the floor,
// pins the address and caps the reply and the time whatever a broker asks.
// Expects `NetError` (the net-types error) in scope.

/// The longest DNS name.
const MAX_HOST_BYTES: usize = 253;
/// The most bytes one request sends; the host caps replies at the same.
const MAX_REQUEST_BYTES: usize = 1 << 20;

/// Refuses a destination or request no transport could carry.
fn shaped(host: &str, port: u16, data: &[u8]) -> Result<(), NetError> {
    if host.is_empty() || host.len() > MAX_HOST_BYTES {
        return Err(NetError::InvalidDestination(format!(
            "host must be 1 to {MAX_HOST_BYTES} bytes"
        )));
    }
    if host.bytes().any(|b| b.is_ascii_control() || b == b' ' || b == b'/') {
        return Err(NetError::InvalidDestination(
            "host holds a space, a slash or a control character".into(),
        ));
    }
    if port == 0 {
        return Err(NetError::InvalidDestination("port 0".into()));
    }
    if data.len() > MAX_REQUEST_BYTES {
        return Err(NetError::TooLarge(MAX_REQUEST_BYTES as u64));
    }
    Ok(())
}
