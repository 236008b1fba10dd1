use super::TlsCtx;
use crate::bindings::workbooks::engine::tls::{Host, NetError};
use crate::broker::oneshot::Proto;
use crate::cap::net_types::oneshot_request;

impl Host for TlsCtx {
    async fn request(
        &mut self,
        host: String,
        port: u16,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, NetError> {
        oneshot_request(self.access.as_ref(), "tls", Proto::Tls, &host, port, &data).await
    }
}
