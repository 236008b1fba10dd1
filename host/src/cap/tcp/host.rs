use super::TcpCtx;
use crate::bindings::workbooks::engine::tcp::{Host, NetError};
use crate::broker::oneshot::{self, Proto};
use crate::cap::net_types::{not_granted, to_net_error};

impl Host for TcpCtx {
    async fn request(
        &mut self,
        host: String,
        port: u16,
        data: Vec<u8>,
    ) -> Result<Vec<u8>, NetError> {
        let access = self.access.as_ref().ok_or_else(|| not_granted("tcp"))?;
        access
            .guarded(
                "tcp",
                &host,
                oneshot::request(&access.client, Proto::Tcp, &host, port, &data),
            )
            .await
            .map_err(to_net_error)
    }
}
