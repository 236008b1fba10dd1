//! A run's model answers, recorded as they come and replayed in order:
//! `wbx agent replay` re-runs a finished run with no network. Each answer
//! is kept with the sha256 of the request it answered, so a replay whose
//! requests drift from the recorded ones stops at the first that does.

use super::bindings::workbooks::host::llm::{PostError, Reply};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// One model answer as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Take {
    /// The sha256 (hex) of the request body it answered.
    pub request_sha256: String,
    /// What came back.
    pub answer: Answer,
}

/// What a post returned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Answer {
    /// A status and body (the body as text).
    Reply {
        /// The HTTP status.
        status: u16,
        /// The body, as text.
        body: String,
    },
    /// No endpoint.
    NotConfigured,
    /// The tenant was revoked.
    Revoked,
    /// The tenant was over its rate limit.
    RateLimited,
    /// The last attempt timed out.
    Timeout {
        /// The attempt's bound, in milliseconds.
        ms: u64,
    },
    /// The outer deadline passed.
    HardTimeout,
    /// The exchange passed its cap.
    TooLarge {
        /// The cap it passed.
        bytes: u64,
    },
    /// The endpoint could not be reached.
    Transport {
        /// Why.
        why: String,
    },
}

impl Answer {
    pub(crate) fn of(got: &Result<Reply, PostError>) -> Answer {
        match got {
            Ok(r) => Answer::Reply {
                status: r.status,
                body: String::from_utf8_lossy(&r.body).into_owned(),
            },
            Err(PostError::NotConfigured) => Answer::NotConfigured,
            Err(PostError::Revoked) => Answer::Revoked,
            Err(PostError::RateLimited) => Answer::RateLimited,
            Err(PostError::Timeout(ms)) => Answer::Timeout { ms: *ms },
            Err(PostError::HardTimeout) => Answer::HardTimeout,
            Err(PostError::TooLarge(n)) => Answer::TooLarge { bytes: *n },
            Err(PostError::Transport(why)) => Answer::Transport { why: why.clone() },
        }
    }

    pub(crate) fn result(self) -> Result<Reply, PostError> {
        match self {
            Answer::Reply { status, body } => Ok(Reply {
                status,
                body: body.into_bytes(),
            }),
            Answer::NotConfigured => Err(PostError::NotConfigured),
            Answer::Revoked => Err(PostError::Revoked),
            Answer::RateLimited => Err(PostError::RateLimited),
            Answer::Timeout { ms } => Err(PostError::Timeout(ms)),
            Answer::HardTimeout => Err(PostError::HardTimeout),
            Answer::TooLarge { bytes } => Err(PostError::TooLarge(bytes)),
            Answer::Transport { why } => Err(PostError::Transport(why)),
        }
    }
}

/// Recording, or replaying.
#[derive(Debug)]
pub enum Tape {
    /// Answers so far.
    Record(Vec<Take>),
    /// Answers still to give.
    Replay(VecDeque<Take>),
}

/// A tape shared by a store and the run that reads it back.
pub type SharedTape = Arc<Mutex<Tape>>;

/// The tape, even when a holder panicked.
pub fn lock(t: &SharedTape) -> std::sync::MutexGuard<'_, Tape> {
    t.lock().unwrap_or_else(|p| p.into_inner())
}
