//! The operator's chat/completions endpoint and the host's bounds on it.

use crate::egress::{HttpClient, HttpError, HttpLimits, HttpRequest};
use crate::limits::{
    LLM_HARD_DEADLINE, LLM_MAX_REPLY_BYTES, LLM_MAX_REQUEST_BYTES, LLM_MAX_RETRY_AFTER,
    LLM_MAX_TOKENS, LLM_REQUEST_TIMEOUT, LLM_RETRIES, LLM_RETRY_BACKOFF,
};
use bytes::Bytes;
use std::time::Duration;

/// The time bounds of one completion. Each defaults to the engine's
/// constant; tests and operators may shorten them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LlmBounds {
    /// One request.
    pub request_timeout: Duration,
    /// Retries of a transient failure.
    pub retries: u32,
    /// The whole completion, retries included.
    pub hard_deadline: Duration,
    /// The longest `Retry-After` honoured.
    pub max_retry_after: Duration,
    /// The wait before a retry without `Retry-After`.
    pub backoff: Duration,
}

impl Default for LlmBounds {
    fn default() -> Self {
        Self {
            request_timeout: LLM_REQUEST_TIMEOUT,
            retries: LLM_RETRIES,
            hard_deadline: LLM_HARD_DEADLINE,
            max_retry_after: LLM_MAX_RETRY_AFTER,
            backoff: LLM_RETRY_BACKOFF,
        }
    }
}

/// An OpenAI-compatible chat/completions endpoint, as the operator
/// configures it.
#[derive(Clone)]
pub struct LlmEndpoint {
    /// The full URL requests are posted to (`…/chat/completions`).
    pub url: String,
    /// The bearer key, if the endpoint wants one.
    pub api_key: Option<String>,
    /// The model used when a request names none.
    pub model: String,
    /// The most tokens one completion may answer with: every request
    /// leaves the host with `max_tokens` no larger (default
    /// [`LLM_MAX_TOKENS`]).
    pub max_tokens: u64,
    /// The time bounds.
    pub bounds: LlmBounds,
}

impl std::fmt::Debug for LlmEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmEndpoint")
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<held>"))
            .field("model", &self.model)
            .field("max_tokens", &self.max_tokens)
            .field("bounds", &self.bounds)
            .finish()
    }
}

impl LlmEndpoint {
    /// The endpoint under `base_url` (`…/chat/completions` is appended),
    /// with the default bounds.
    pub fn new(base_url: &str, api_key: Option<String>, model: impl Into<String>) -> Self {
        Self {
            url: format!("{}/chat/completions", base_url.trim_end_matches('/')),
            api_key,
            model: model.into(),
            max_tokens: LLM_MAX_TOKENS,
            bounds: LlmBounds::default(),
        }
    }
}

/// Why a completion got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PostFailure {
    /// The last attempt ran out of its request budget.
    Timeout(Duration),
    /// The outer deadline passed.
    HardTimeout,
    /// The request or the reply passed its cap (bytes).
    TooLarge(u64),
    /// The endpoint could not be reached.
    Transport(String),
}

/// The endpoint with its own client: the operator chose the address, so
/// it may be anywhere (a model server on loopback included); the guest's
/// floor does not apply, and no redirect is followed.
pub(crate) struct LlmService {
    endpoint: LlmEndpoint,
    client: HttpClient,
}

impl LlmService {
    /// A service for `endpoint`, verifying TLS peers with `tls`.
    pub(crate) fn new(endpoint: LlmEndpoint, tls: crate::egress::tls::LazyTls) -> Self {
        Self {
            endpoint,
            client: HttpClient::for_operator(tls),
        }
    }

    /// The configuration.
    pub(crate) fn endpoint(&self) -> &LlmEndpoint {
        &self.endpoint
    }

    /// Posts `body` and returns the last answer's status and body,
    /// retrying transient failures within the bounds.
    pub(crate) async fn post(&self, body: Vec<u8>) -> Result<(u16, Bytes), PostFailure> {
        if body.len() > LLM_MAX_REQUEST_BYTES {
            return Err(PostFailure::TooLarge(LLM_MAX_REQUEST_BYTES as u64));
        }
        let bounds = self.endpoint.bounds;
        tokio::time::timeout(bounds.hard_deadline, self.attempts(Bytes::from(body)))
            .await
            .unwrap_or(Err(PostFailure::HardTimeout))
    }

    async fn attempts(&self, body: Bytes) -> Result<(u16, Bytes), PostFailure> {
        let bounds = self.endpoint.bounds;
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        if let Some(key) = &self.endpoint.api_key {
            headers.push(("authorization".to_string(), format!("Bearer {key}")));
        }
        let request = HttpRequest {
            method: http::Method::POST,
            url: self.endpoint.url.clone(),
            headers,
            body,
        };
        let limits = HttpLimits {
            max_body: LLM_MAX_REPLY_BYTES,
            deadline: bounds.request_timeout,
            max_redirects: 0,
            shared: None,
        };
        let mut attempt = 0;
        loop {
            let got = self.client.fetch(request.clone(), &limits).await;
            // The wait before asking again, when the failure is transient.
            let again = match &got {
                Ok(r) if transient(r.status, &r.body) => Some(
                    retry_after(&r.headers)
                        .unwrap_or(bounds.backoff)
                        .min(bounds.max_retry_after),
                ),
                Err(e) if retried(e) => Some(bounds.backoff),
                _ => None,
            };
            match again {
                Some(wait) if attempt < bounds.retries => {
                    attempt += 1;
                    tokio::time::sleep(wait).await;
                }
                _ => {
                    return match got {
                        Ok(r) => Ok((r.status, r.body)),
                        Err(HttpError::Timeout(d)) => Err(PostFailure::Timeout(d)),
                        Err(HttpError::TooLarge(n)) => Err(PostFailure::TooLarge(n)),
                        Err(e) => Err(PostFailure::Transport(e.to_string())),
                    };
                }
            }
        }
    }
}

/// Whether an answer is worth asking again: 408, 409, 429 unless the quota
/// is spent, any 5xx. A 402 (payment) or a spent quota never is.
fn transient(status: u16, body: &[u8]) -> bool {
    match status {
        408 | 409 | 500..=599 => true,
        429 => !quota_spent(body),
        _ => false,
    }
}

/// Whether a 429's body says the account's quota or credit is spent (a
/// retry cannot help), as OpenAI-compatible endpoints word it.
fn quota_spent(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body).to_ascii_lowercase();
    [
        "insufficient_quota",
        "quota exceeded",
        "exceeded your current quota",
        "credits",
    ]
    .iter()
    .any(|w| text.contains(w))
}

/// Whether a failure to get an answer is worth another attempt.
fn retried(e: &HttpError) -> bool {
    matches!(
        e,
        HttpError::Timeout(_) | HttpError::Connect { .. } | HttpError::Protocol(_)
    )
}

/// A `Retry-After` given in seconds.
fn retry_after(headers: &[(String, String)]) -> Option<Duration> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("retry-after"))
        .and_then(|(_, v)| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(|s| Duration::from_secs_f64(s.min(86_400.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_answers_are_retried_but_a_spent_quota_or_payment_never_is() {
        for s in [408, 409, 429, 500, 502, 503, 599] {
            assert!(transient(s, b"{}"), "{s}");
        }
        for s in [200, 400, 401, 402, 403, 404, 422] {
            assert!(!transient(s, b"{}"), "{s}");
        }
        let spent = br#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#;
        assert!(!transient(429, spent));
    }

    #[test]
    fn retry_after_is_read_in_seconds_and_anything_else_is_ignored() {
        let h = |v: &str| vec![("Retry-After".to_string(), v.to_string())];
        assert_eq!(retry_after(&h("2")), Some(Duration::from_secs(2)));
        assert_eq!(retry_after(&h("0.5")), Some(Duration::from_millis(500)));
        assert_eq!(retry_after(&h("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(retry_after(&h("-3")), None);
        assert_eq!(retry_after(&[]), None);
    }

    #[tokio::test]
    async fn a_request_past_its_cap_is_refused_before_anything_is_sent() {
        let tls = crate::egress::tls::LazyTls::new(&[], None).unwrap();
        // Port 9 on loopback: a send would fail as a transport error.
        let service = LlmService::new(LlmEndpoint::new("http://127.0.0.1:9/v1", None, "m"), tls);
        let got = service.post(vec![b'x'; LLM_MAX_REQUEST_BYTES + 1]).await;
        assert_eq!(
            got,
            Err(PostFailure::TooLarge(LLM_MAX_REQUEST_BYTES as u64))
        );
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let e = LlmEndpoint::new("http://127.0.0.1:9/v1/", Some("sk-secret".into()), "m");
        assert_eq!(e.url, "http://127.0.0.1:9/v1/chat/completions");
        assert!(!format!("{e:?}").contains("sk-secret"));
    }
}
