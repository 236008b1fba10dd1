use super::UdpCtx;
use crate::bindings::workbooks::engine::udp::{Host, NetError};
use crate::broker::oneshot::Proto;
use crate::cap::net_types::oneshot_request;

impl Host for UdpCtx {
    async fn request(
        &mut self,
        host: String,
        port: u16,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, NetError> {
        oneshot_request(self.access.as_ref(), "udp", Proto::Udp, &host, port, &data).await
    }
}
