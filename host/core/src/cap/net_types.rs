//! `net-types`: the error every network broker reports, as the guest sees
//! it. Shared by `net`, `browse`, `tcp`, `udp` and `tls` the way the WIT
//! interface is shared: types only, no reach.

use crate::cadence::Denial;
use crate::cap::bindings::workbooks::engine::net_types::NetError;
use crate::egress::oneshot::{self, Proto};
use crate::egress::{EgressFailure, HttpError, NetAccess, NetDenial};

/// The guest-visible form of a broker failure.
pub(crate) fn to_net_error(f: EgressFailure) -> NetError {
    match f {
        EgressFailure::Denied(Denial::Revoked) => NetError::Revoked,
        EgressFailure::Denied(d) => match d {
            Denial::RateLimited => NetError::RateLimited,
            other => NetError::Denied(other.reason().to_string()),
        },
        EgressFailure::Failed(e) => match e {
            HttpError::Denied(NetDenial::Unparseable(why)) => NetError::InvalidDestination(why),
            HttpError::Denied(d) => NetError::Denied(d.to_string()),
            HttpError::Timeout(d) => NetError::Timeout(d.as_millis() as u64),
            HttpError::TooLarge(n) => NetError::TooLarge(n),
            HttpError::TooManyRedirects(n) => NetError::TooManyRedirects(n),
            HttpError::Connect { why, .. } => NetError::Connect(why),
            HttpError::Tls(why) => NetError::Tls(why),
            HttpError::Protocol(why) => NetError::Protocol(why),
        },
    }
}

/// The error for a store whose cap context holds no access (never linked
/// that way; a host bug if seen).
pub(crate) fn not_granted(cap: &str) -> NetError {
    NetError::Denied(format!("capability not granted: {cap}"))
}

/// A one-shot socket exchange for the `tcp`, `udp` and `tls` caps: the
/// cadence, then the floor and the pinned exchange.
pub(crate) async fn oneshot_request(
    access: Option<&NetAccess>,
    cap: &'static str,
    proto: Proto,
    host: &str,
    port: u16,
    data: &[u8],
) -> Result<Vec<u8>, NetError> {
    let access = access.ok_or_else(|| not_granted(cap))?;
    let scheme = match proto {
        Proto::Tcp => "tcp",
        Proto::Udp => "udp",
        Proto::Tls => "tls",
    };
    access
        .guarded(cap, host, async {
            access.in_scope(scheme, host, port)?;
            oneshot::request(&access.client, proto, host, port, data).await
        })
        .await
        .map_err(to_net_error)
}
