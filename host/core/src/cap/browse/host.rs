use super::BrowseCtx;
use crate::cap::bindings::workbooks::host::http::{Document, Host, NetError};
use crate::cap::net_types::{not_granted, to_net_error};
use crate::egress::{HttpLimits, HttpRequest};
use crate::limits::{BROWSE_TIMEOUT, NET_MAX_REDIRECTS};
use std::time::Duration;

impl Host for BrowseCtx {
    async fn get(
        &mut self,
        url: String,
        max_bytes: u64,
        timeout_ms: u32,
    ) -> Result<Document, NetError> {
        let access = self.access.as_ref().ok_or_else(|| not_granted("browse"))?;
        let limits = HttpLimits {
            max_body: (max_bytes.min(access.max_body as u64)) as usize,
            deadline: Duration::from_millis(u64::from(timeout_ms)).min(BROWSE_TIMEOUT),
            max_redirects: NET_MAX_REDIRECTS,
            shared: None,
        };
        let r = access
            .fetch("browse", HttpRequest::get(url), &limits)
            .await
            .map_err(to_net_error)?;
        let content_type = r
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        Ok(Document {
            url: r.url,
            status: r.status,
            content_type,
            body: r.body.into(),
        })
    }
}
