use super::UdpCtx;
use crate::bindings::workbooks::engine::udp::{Host, NetError};
use crate::broker::oneshot::{self, Proto};
use crate::cap::net_types::{not_granted, to_net_error};

impl Host for UdpCtx {
    async fn request(
        &mut self,
        host: String,
        port: u16,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, NetError> {
        let access = self.access.as_ref().ok_or_else(|| not_granted("udp"))?;
        access
            .guarded(
                "udp",
                &host,
                oneshot::request(&access.client, Proto::Udp, &host, port, &data),
            )
            .await
            .map_err(to_net_error)
    }
}
