use super::bindings::workbooks::host::llm::{Host, PostError, Reply};
use super::{LlmCtx, PostFailure};
use crate::cadence::Denial;

impl Host for LlmCtx {
    fn default_model(&mut self) -> String {
        self.reach
            .as_ref()
            .map(|(s, _, _)| s.endpoint().model.clone())
            .unwrap_or_default()
    }

    async fn post(&mut self, body: Vec<u8>) -> Result<Reply, PostError> {
        if let Some(line) = self.budget.as_ref().and_then(|b| b.stop_line()) {
            return Err(PostError::Transport(line));
        }
        let got = self.answered(&body).await;
        if let (Ok(reply), Some(budget)) = (&got, &self.budget) {
            budget.spend(super::Spent::of(&body, &reply.body));
        }
        got
    }
}

impl LlmCtx {
    /// The answer to `body`: posted now, or recorded / replayed by a run's
    /// tape.
    async fn answered(&mut self, body: &[u8]) -> Result<Reply, PostError> {
        use super::tape::{Answer, Take, Tape, lock};
        let body = body.to_vec();
        let Some(tape) = self.tape.clone() else {
            return self.post_now(body).await;
        };
        // An agent run's: each answer is kept, or given back, with the
        // hash of its request.
        let request_sha256 = {
            use sha2::{Digest, Sha256};
            hex::encode(Sha256::digest(&body))
        };
        if let Tape::Replay(takes) = &mut *lock(&tape) {
            let take = takes.pop_front().ok_or_else(|| {
                PostError::Transport("replay: the record holds no more model answers".into())
            })?;
            if take.request_sha256 != request_sha256 {
                return Err(PostError::Transport(
                    "replay diverged: this model request is not the recorded one".into(),
                ));
            }
            return take.answer.result();
        }
        let got = self.post_now(body).await;
        if let Tape::Record(takes) = &mut *lock(&tape) {
            takes.push(Take {
                request_sha256,
                answer: Answer::of(&got),
            });
        }
        got
    }

    /// Posts to the endpoint, under the cadence.
    async fn post_now(&mut self, body: Vec<u8>) -> Result<Reply, PostError> {
        let Some((service, tenant, cadence)) = &self.reach else {
            return Err(PostError::NotConfigured);
        };
        cadence.admit(tenant, "llm").map_err(|d| match d {
            Denial::Revoked => PostError::Revoked,
            _ => PostError::RateLimited,
        })?;
        // Never more than the operator allows, nor than the run has left.
        let cap = self
            .budget
            .as_ref()
            .and_then(|b| b.remaining())
            .map_or(service.endpoint().max_tokens, |left| {
                left.min(service.endpoint().max_tokens)
            });
        let body = super::budget::capped(&body, cap).map_err(PostError::Transport)?;
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
