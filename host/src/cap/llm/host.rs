use super::{LlmCtx, PostFailure};
use crate::bindings::workbooks::host::completions::{Host, PostError, Reply};
use crate::cadence::Denial;

impl Host for LlmCtx {
    fn default_model(&mut self) -> String {
        self.reach
            .as_ref()
            .map(|(s, _, _)| s.endpoint().model.clone())
            .unwrap_or_default()
    }

    async fn post(&mut self, body: Vec<u8>) -> Result<Reply, PostError> {
        let Some((service, principal, cadence)) = &self.reach else {
            return Err(PostError::NotConfigured);
        };
        cadence.admit(principal, "llm").map_err(|d| match d {
            Denial::Revoked => PostError::Revoked,
            _ => PostError::RateLimited,
        })?;
        match service.post(body).await {
            Ok((status, body)) => Ok(Reply {
                status,
                body: body.into(),
            }),
            Err(PostFailure::Timeout(d)) => Err(PostError::Timeout(d.as_millis() as u64)),
            Err(PostFailure::HardTimeout) => Err(PostError::HardTimeout),
            Err(PostFailure::TooLarge(n)) => Err(PostError::TooLarge(n)),
            Err(PostFailure::Transport(why)) => Err(PostError::Transport(why)),
        }
    }
}
