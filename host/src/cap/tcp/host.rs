use super::TcpCtx;
use crate::bindings::workbooks::engine::tcp::{Host, NetError};
use crate::broker::oneshot::Proto;
use crate::cap::net_types::oneshot_request;

impl Host for TcpCtx {
    async fn request(
        &mut self,
        host: String,
        port: u16,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, NetError> {
        oneshot_request(self.access.as_ref(), "tcp", Proto::Tcp, &host, port, &data).await
    }
}
