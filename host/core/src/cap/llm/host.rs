use super::bindings::workbooks::host::llm::{Host, PostError, Reply};
use super::{LlmCtx, PostFailure};
use crate::cadence::Denial;
use crate::grants::CapNoun;

impl Host for LlmCtx {
    fn default_model(&mut self) -> String {
        self.reach
            .as_ref()
            .map(|(s, _, _)| s.endpoint().model.clone())
            .unwrap_or_default()
    }

    async fn post(&mut self, body: Vec<u8>) -> Result<Reply, PostError> {
        if let Some(refused) = self.out_of_scope(&body) {
            // On a run's tape like any answer, so its replay (which judges
            // by the recorded answers, not the grant) is given it too.
            let refused = Ok(refused);
            self.recorded(&body, &refused);
            return refused;
        }
        if let Some(line) = self.budget.as_ref().and_then(|b| b.stop_line()) {
            return Err(PostError::Transport(line));
        }
        let got = self.answered(&body).await;
        if let Ok(reply) = &got {
            let spent = super::Spent::of(&body, &reply.body);
            if let Some(budget) = &self.budget {
                budget.spend(spent);
            }
            // The grant's allowance counts what every session under it spent.
            if let Some(scope) = &self.scope {
                scope.spend_llm(spent.total_tokens);
            }
        }
        got
    }
}

/// How a model is named in a grant's refusal.
const SCOPED_AS: CapNoun = CapNoun {
    cap: "llm",
    noun: "model",
};

/// The sha256 (hex) a request's answer is kept under on a run's tape.
fn request_sha256(body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(body))
}

/// The model a request asks for: its `model` as the host sends it on (the
/// last of a repeated key, as the request is re-written), else `default`.
fn model_of(body: &[u8], default: String) -> String {
    let request: Result<serde_json::Map<String, serde_json::Value>, _> =
        serde_json::from_slice(body);
    request
        .ok()
        .and_then(|r| r.get("model").and_then(|m| m.as_str()).map(str::to_string))
        .unwrap_or(default)
}

impl LlmCtx {
    /// The answer to a request the stored grant refuses (expired, revoked,
    /// a model it does not name, or its token allowance spent), audited: a
    /// 403 with the refusal as an
    /// OpenAI-style error, which the broker hands the guest as
    /// `status(403, …)`. Nothing is posted.
    fn out_of_scope(&mut self, body: &[u8]) -> Option<Reply> {
        let scope = self.scope.as_ref()?;
        let (reason, why) = match scope.now() {
            Err(e) => (e.reason(), e.to_string()),
            Ok(scoped) => {
                let model = model_of(body, self.default_model());
                let why = scoped
                    .judge_named(SCOPED_AS, &model)
                    .err()
                    .or_else(|| scoped.llm_spent_refusal())?;
                ("out_of_scope", why)
            }
        };
        if let Some((_, tenant, cadence)) = &self.reach {
            cadence.deny(tenant, "llm", Denial::Guard(reason), &why);
        }
        let body = serde_json::json!({"error": {"message": why, "code": 403}});
        Some(Reply {
            status: 403,
            body: body.to_string().into_bytes(),
        })
    }

    /// The answer to `body`: posted now, or recorded / replayed by a run's
    /// tape.
    async fn answered(&mut self, body: &[u8]) -> Result<Reply, PostError> {
        use super::tape::{Tape, lock};
        let body = body.to_vec();
        let Some(tape) = self.tape.clone() else {
            return self.post_now(body).await;
        };
        // An agent run's: each answer is kept, or given back, with the
        // hash of its request.
        if let Tape::Replay(takes) = &mut *lock(&tape) {
            let take = takes.pop_front().ok_or_else(|| {
                PostError::Transport("replay: the record holds no more model answers".into())
            })?;
            if take.request_sha256 != request_sha256(&body) {
                return Err(PostError::Transport(
                    "replay diverged: this model request is not the recorded one".into(),
                ));
            }
            return take.answer.result();
        }
        let got = self.post_now(body.clone()).await;
        self.recorded(&body, &got);
        got
    }

    /// Puts `got`, the answer to `body`, on the run's tape when it is
    /// recording one.
    fn recorded(&self, body: &[u8], got: &Result<Reply, PostError>) {
        use super::tape::{Answer, Take, Tape, lock};
        let Some(tape) = &self.tape else {
            return;
        };
        if let Tape::Record(takes) = &mut *lock(tape) {
            takes.push(Take {
                request_sha256: request_sha256(body),
                answer: Answer::of(got),
            });
        }
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
        // Never more than the operator allows, nor than the run or the
        // grant's allowance has left.
        let grant_left = self
            .scope
            .as_ref()
            .and_then(|s| s.now().ok())
            .and_then(|s| s.llm_left());
        let cap = [self.budget.as_ref().and_then(|b| b.remaining()), grant_left]
            .into_iter()
            .flatten()
            .fold(service.endpoint().max_tokens, u64::min);
        if grant_left == Some(0) {
            // Spent by another session since this request was judged:
            // never `max_tokens: 0`, which some endpoints read as no limit.
            return Err(PostError::Transport(
                "the grant's llm allowance is spent".into(),
            ));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cadence::{Cadence, RateLimiter};
    use crate::cap::llm::{LlmEndpoint, LlmService};
    use crate::grants::{GrantBook, GrantRecord, Scope};
    use std::sync::Arc;
    use std::time::Duration;

    /// A request judged while the grant's allowance had some left, then
    /// spent by another session before it is sent: it is never sent with
    /// `max_tokens: 0` (which some endpoints read as no limit) but refused.
    #[tokio::test]
    async fn a_request_whose_allowance_another_session_spent_after_judging_is_never_sent() {
        let tls = crate::egress::tls::LazyTls::new(&[], None).unwrap();
        // Port 9 on loopback: a request sent would fail to connect.
        let endpoint = LlmEndpoint::new("http://127.0.0.1:9/v1", None, "m");
        let service = Arc::new(LlmService::new(endpoint, tls));
        let cadence = Cadence::new(None, RateLimiter::new(100, Duration::from_secs(3600)));
        let mut ctx = LlmCtx::new(Some(service), "t".into(), cadence);
        let book = Arc::new(GrantBook::new(None));
        let mut record = GrantRecord::new("t", "test");
        record.llm_tokens = Some(10);
        let id = book.add(record).unwrap().id;
        ctx.scope = Some(Scope::stored(book.clone(), &id));
        let body = br#"{"model":"m","messages":[]}"#;
        assert!(ctx.out_of_scope(body).is_none(), "ten tokens are left");
        // Another session under the grant spends them now.
        Scope::stored(book, &id).spend_llm(10);
        match ctx.post_now(body.to_vec()).await {
            Err(PostError::Transport(why)) => {
                assert_eq!(why, "the grant's llm allowance is spent")
            }
            other => panic!("sent, or refused for another reason: {other:?}"),
        }
    }
}
