use super::ExchangeCtx;
use crate::cap::bindings::workbooks::host::exchange::{Host, NetError, Transport};
use crate::cap::net_types::{not_granted, oneshot_request};
use crate::egress::oneshot::Proto;
use crate::policy::Cap;

impl Host for ExchangeCtx {
    async fn exchange(
        &mut self,
        transport: Transport,
        host: String,
        port: u16,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, NetError> {
        let (cap, proto) = match transport {
            Transport::Tcp => (Cap::Tcp, Proto::Tcp),
            Transport::Udp => (Cap::Udp, Proto::Udp),
            Transport::Tls => (Cap::Tls, Proto::Tls),
        };
        if !self.granted.contains(cap) {
            return Err(not_granted(cap.word()));
        }
        oneshot_request(self.access.as_ref(), cap.word(), proto, &host, port, &data).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cadence::{Cadence, RateLimiter};
    use crate::egress::tls::tls_config;
    use crate::egress::{HttpClient, NetAccess, NetGuard, SystemResolver};
    use crate::policy::CapSet;
    use std::sync::Arc;
    use std::time::Duration;

    /// Access for tenant `t` through the floor with no allow-list.
    fn access() -> NetAccess {
        let guard = NetGuard::new(Vec::new(), Arc::new(SystemResolver));
        NetAccess {
            tenant: "t".into(),
            cadence: Cadence::new(None, RateLimiter::new(100, Duration::from_secs(3600))),
            client: Arc::new(HttpClient::new(guard, tls_config(&[]).unwrap())),
            max_body: 1 << 20,
            timeout: Duration::from_secs(5),
            scope: None,
            bindings: None,
        }
    }

    #[tokio::test]
    async fn a_transport_whose_cap_was_not_granted_is_refused_whatever_the_broker_asks() {
        let mut ctx = ExchangeCtx::new(access(), CapSet::of(&[Cap::Tcp]));
        for transport in [Transport::Udp, Transport::Tls] {
            let got = ctx
                .exchange(transport, "example.com".into(), 53, b"x".to_vec())
                .await;
            match got {
                Err(NetError::Denied(why)) => assert!(why.starts_with("capability not granted")),
                other => panic!("{transport:?}: {other:?}"),
            }
        }
        // The granted transport reaches the floor, which refuses loopback.
        let got = ctx
            .exchange(Transport::Tcp, "127.0.0.1".into(), 9, b"x".to_vec())
            .await;
        assert!(matches!(got, Err(NetError::Denied(_))), "{got:?}");
        let mut none = ExchangeCtx::default();
        let got = none
            .exchange(Transport::Tcp, "example.com".into(), 80, Vec::new())
            .await;
        assert!(matches!(got, Err(NetError::Denied(_))), "{got:?}");
    }
}
