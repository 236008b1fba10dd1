//! What a run may spend on the operator's model, counted by the host.
//!
//! Every completion request leaves the host with a `max_tokens` no larger
//! than the operator's (`LlmEndpoint::max_tokens`) nor than what is left
//! of the run's budget, whatever the broker wrote; the reply's `usage`
//! (or, when the endpoint sends none, an estimate of four bytes a token
//! over the request and the reply) is charged to the run ([`TokenBudget`])
//! and, for runs started over the API, to their tenant's window
//! ([`TokenMeter`]). A run with nothing left gets no more completions: its
//! next request is refused before it leaves, and the run ends
//! `stopped: token budget …`.
//!
//! Threat: a model that never stops talking, on the operator's key. With
//! no `max_tokens` a rambling model filled its whole context on every
//! turn and held it for minutes; twelve such turns were an hour and
//! twelve full contexts, billed to the operator, and anyone who reaches
//! the agent API may start runs.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Bytes counted as one token where the endpoint reports no usage.
const BYTES_PER_TOKEN: u64 = 4;

/// The tokens one completion used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spent {
    /// Tokens of the request.
    pub prompt_tokens: u64,
    /// Tokens of the answer.
    pub completion_tokens: u64,
    /// Both.
    pub total_tokens: u64,
    /// The endpoint reported no usage: estimated from the bytes.
    pub estimated: bool,
}

impl Spent {
    /// Of a completion: the reply's `usage` when it has one, else an
    /// estimate from the request's and the reply's sizes.
    pub fn of(request: &[u8], reply: &[u8]) -> Spent {
        #[derive(Deserialize)]
        struct Usage {
            prompt_tokens: Option<u64>,
            completion_tokens: Option<u64>,
            total_tokens: Option<u64>,
        }
        #[derive(Deserialize)]
        struct Reply {
            usage: Option<Usage>,
        }
        let usage = serde_json::from_slice::<Reply>(reply)
            .ok()
            .and_then(|r| r.usage);
        match usage {
            Some(u) if u.total_tokens.is_some() || u.completion_tokens.is_some() => {
                let prompt = u.prompt_tokens.unwrap_or(0);
                let completion = u.completion_tokens.unwrap_or(0);
                Spent {
                    prompt_tokens: prompt,
                    completion_tokens: completion,
                    total_tokens: u.total_tokens.unwrap_or(prompt + completion),
                    estimated: false,
                }
            }
            _ => {
                let prompt = (request.len() as u64).div_ceil(BYTES_PER_TOKEN);
                let completion = (reply.len() as u64).div_ceil(BYTES_PER_TOKEN);
                Spent {
                    prompt_tokens: prompt,
                    completion_tokens: completion,
                    total_tokens: prompt + completion,
                    estimated: true,
                }
            }
        }
    }
}

/// Token spend per tenant over a fixed window: the agent API's budget.
#[derive(Debug)]
pub struct TokenMeter {
    limit: u64,
    window: Duration,
    tenants: Mutex<HashMap<String, (Instant, u64)>>,
}

impl TokenMeter {
    /// At most `limit` tokens per tenant in each `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        Self {
            limit,
            window,
            tenants: Mutex::new(HashMap::new()),
        }
    }

    fn with<R>(&self, tenant: &str, f: impl FnOnce(&mut u64) -> R) -> R {
        let mut tenants = self.tenants.lock().unwrap_or_else(|p| p.into_inner());
        let slot = tenants
            .entry(tenant.to_string())
            .or_insert((Instant::now(), 0));
        if slot.0.elapsed() >= self.window {
            *slot = (Instant::now(), 0);
        }
        f(&mut slot.1)
    }

    /// What `tenant` has spent in the current window.
    pub fn spent(&self, tenant: &str) -> u64 {
        self.with(tenant, |s| *s)
    }

    /// What `tenant` may still spend in the current window.
    pub fn remaining(&self, tenant: &str) -> u64 {
        self.limit.saturating_sub(self.spent(tenant))
    }

    /// Charges `tokens` to `tenant`.
    pub fn spend(&self, tenant: &str, tokens: u64) {
        self.with(tenant, |s| *s = s.saturating_add(tokens));
    }

    /// The line a run stopped by its tenant's window ends with.
    pub fn stop_line(&self, tenant: &str) -> String {
        format!(
            "stopped: token budget of tenant {tenant} spent ({} of {} tokens in {} s)",
            self.spent(tenant),
            self.limit,
            self.window.as_secs()
        )
    }
}

/// One run's budget, and the tenant window it also draws on.
#[derive(Debug, Default)]
pub struct TokenBudget {
    limit: Option<u64>,
    spent: AtomicU64,
    last: Mutex<Option<Spent>>,
    window: Option<(Arc<TokenMeter>, String)>,
}

impl TokenBudget {
    /// A run's budget: `limit` tokens in all (`None`: no limit of its own).
    pub fn new(limit: Option<u64>) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// The same, drawing on `tenant`'s window of `meter` too.
    pub fn drawing_on(mut self, meter: Arc<TokenMeter>, tenant: &str) -> Self {
        self.window = Some((meter, tenant.to_string()));
        self
    }

    /// Tokens the run has spent.
    pub fn spent(&self) -> u64 {
        self.spent.load(Ordering::Relaxed)
    }

    /// What is left: of the run's own budget and of its tenant's window,
    /// the smaller; `None` when neither limits it.
    pub fn remaining(&self) -> Option<u64> {
        let own = self.limit.map(|l| l.saturating_sub(self.spent()));
        let window = self.window.as_ref().map(|(m, t)| m.remaining(t));
        match (own, window) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Charges one completion.
    pub fn spend(&self, spent: Spent) {
        self.spent.fetch_add(spent.total_tokens, Ordering::Relaxed);
        if let Some((meter, tenant)) = &self.window {
            meter.spend(tenant, spent.total_tokens);
        }
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(spent);
    }

    /// The last completion's tokens, once.
    pub fn take_last(&self) -> Option<Spent> {
        self.last.lock().unwrap_or_else(|p| p.into_inner()).take()
    }

    /// When nothing is left, the line the run ends with.
    pub fn stop_line(&self) -> Option<String> {
        if self.remaining() != Some(0) {
            return None;
        }
        if let Some(limit) = self.limit
            && self.spent() >= limit
        {
            return Some(format!(
                "stopped: token budget spent ({} of {limit} tokens)",
                self.spent()
            ));
        }
        self.window.as_ref().map(|(m, t)| m.stop_line(t))
    }
}

/// `body` (a chat/completions request) with `max_tokens` at most `cap`,
/// and `max_completion_tokens` too when it names one; refused when it is
/// not a JSON object.
pub(crate) fn capped(body: &[u8], cap: u64) -> Result<Vec<u8>, String> {
    let mut request: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(body)
        .map_err(|e| format!("the request is not a JSON object: {e}"))?;
    // Whatever a limit it names says, as a whole number at most `cap`: a
    // value that is no whole number (`1e6`, `"1000000"`, `null`) is the cap.
    let limit = |v: Option<&serde_json::Value>| {
        v.and_then(serde_json::Value::as_u64)
            .map_or(cap, |n| n.min(cap))
    };
    let max = limit(request.get("max_tokens"));
    request.insert("max_tokens".into(), max.into());
    if request.contains_key("max_completion_tokens") {
        let max = limit(request.get("max_completion_tokens"));
        request.insert("max_completion_tokens".into(), max.into());
    }
    serde_json::to_vec(&request).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_leaves_with_max_tokens_no_larger_than_the_cap() {
        let sent = capped(br#"{"model":"m","messages":[]}"#, 4096).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&sent).unwrap();
        assert_eq!(v["max_tokens"], 4096);
        let sent = capped(br#"{"max_tokens":100000,"max_completion_tokens":9e9}"#, 512).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&sent).unwrap();
        assert_eq!(
            (&v["max_tokens"], &v["max_completion_tokens"]),
            (&512.into(), &512.into())
        );
        for sneaky in [r#""1000000""#, "1000000.0", "1e6", "-1", "null", "[1]"] {
            let body = format!(r#"{{"max_tokens":{sneaky},"max_completion_tokens":{sneaky}}}"#);
            let v: serde_json::Value =
                serde_json::from_slice(&capped(body.as_bytes(), 512).unwrap()).unwrap();
            assert_eq!(
                (&v["max_tokens"], &v["max_completion_tokens"]),
                (&512.into(), &512.into()),
                "{sneaky}"
            );
        }
        let sent = capped(br#"{"max_tokens":20}"#, 512).unwrap();
        assert_eq!(
            serde_json::from_slice::<serde_json::Value>(&sent).unwrap()["max_tokens"],
            20
        );
        assert!(capped(b"not json", 10).is_err());
    }

    #[test]
    fn usage_is_read_from_the_reply_or_estimated_from_the_bytes() {
        let reported = Spent::of(
            b"{}",
            br#"{"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}"#,
        );
        assert_eq!((reported.total_tokens, reported.estimated), (12, false));
        let estimated = Spent::of(&[b'x'; 40], &[b'y'; 400]);
        assert_eq!(
            (
                estimated.prompt_tokens,
                estimated.completion_tokens,
                estimated.estimated
            ),
            (10, 100, true)
        );
    }

    #[test]
    fn a_budget_and_a_tenant_window_each_stop_a_run() {
        let run = TokenBudget::new(Some(100));
        run.spend(Spent {
            total_tokens: 60,
            ..Spent::default()
        });
        assert_eq!(run.remaining(), Some(40));
        assert_eq!(run.stop_line(), None);
        run.spend(Spent {
            total_tokens: 60,
            ..Spent::default()
        });
        assert_eq!(
            run.stop_line().unwrap(),
            "stopped: token budget spent (120 of 100 tokens)"
        );
        let meter = Arc::new(TokenMeter::new(50, Duration::from_secs(3600)));
        let run = TokenBudget::new(Some(1000)).drawing_on(meter.clone(), "acme");
        run.spend(Spent {
            total_tokens: 50,
            ..Spent::default()
        });
        assert_eq!(run.remaining(), Some(0));
        assert!(
            run.stop_line().unwrap().contains("tenant acme"),
            "{:?}",
            run.stop_line()
        );
        // Another run of the tenant finds the window spent too.
        let next = TokenBudget::new(Some(1000)).drawing_on(meter, "acme");
        assert_eq!(next.remaining(), Some(0));
    }
}
