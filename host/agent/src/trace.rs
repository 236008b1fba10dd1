//! The trace of a run, written by the host from what it ran: one step
//! event per tool call, appended to `<workdir>/_steps.jsonl` as it ends
//! (output cut to 200 characters), and `events.org` when the run ends
//! (output cut to 300). A failed write is noted in the record and never
//! stops the run.

use crate::limits::{AGENT_EVENTS_ORG_CHARS, AGENT_STEP_LOG_CHARS};
use serde::Serialize;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The run's narrative, written when it ends.
pub const EVENTS_ORG: &str = "events.org";

/// One tool call, as the host ran it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct StepEvent {
    /// The model turn it belongs to (several calls may share one).
    pub step: u32,
    /// The agent that ran it.
    pub agent: String,
    /// The tool's name, as the model wrote it.
    pub tool: String,
    /// The arguments: the JSON object, or the text as written when it is
    /// not JSON.
    pub args: Value,
    /// What the model read back (cut to the transcript's limit here; to
    /// 200 characters in `_steps.jsonl`).
    pub output: String,
    /// The shell's exit code; 0 or 1 for other tools.
    pub exit_code: i32,
    /// Why the call failed, when it did.
    pub error: Option<String>,
    /// Monotonic duration of the call.
    pub dur_ms: u64,
    /// Unix time (seconds) when it ended.
    pub ts: u64,
    /// The tokens the model turn that asked for this call spent, as the
    /// host counted them (every call of one turn shows the same).
    #[serde(default)]
    pub tokens: Option<workbooks::llm::Spent>,
    /// The run's grant as this call saw it, when it differed from what the
    /// call before saw (see [`GrantSeen`](crate::GrantSeen)); absent on a
    /// run under no grant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<crate::grant::GrantSeen>,
}

/// One model turn, as the loop reported it and the host counted it.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq)]
pub struct TurnEvent {
    /// The step it opened.
    pub step: u32,
    /// Why the model stopped.
    pub finish_reason: String,
    /// Tool calls it made.
    pub tool_calls: u32,
    /// The tokens its completion spent, as the host counted them from the
    /// reply (see [`workbooks::llm::budget`]).
    pub tokens: Option<workbooks::llm::Spent>,
}

/// The first `n` characters of `s`.
pub(crate) fn clip(s: &str, n: usize) -> String {
    s.chars().take(n).collect()
}

/// The `_steps.jsonl` line of an event.
pub(crate) fn jsonl_line(e: &StepEvent) -> String {
    let mut clipped = e.clone();
    clipped.output = clip(&e.output, AGENT_STEP_LOG_CHARS);
    serde_json::to_string(&clipped).unwrap_or_default()
}

/// Appends events to `<workdir>/_steps.jsonl`, and keeps the lines it
/// wrote: the ledger seals these, not what the file holds by then (the
/// run's own tools can write to the workdir).
pub(crate) struct StepLog {
    path: PathBuf,
    /// Every line written, in order.
    pub(crate) lines: Vec<String>,
    /// The first failed write, if any.
    pub(crate) failure: Option<String>,
}

impl StepLog {
    pub(crate) fn new(workdir: &Path) -> Self {
        Self {
            path: workdir.join(crate::ledger::STEPS),
            lines: Vec::new(),
            failure: None,
        }
    }

    pub(crate) fn append(&mut self, e: &StepEvent) {
        let line = jsonl_line(e);
        self.lines.push(line.clone());
        let written = workbooks::files::append_line(&self.path, &line);
        if let Err(err) = written
            && self.failure.is_none()
        {
            self.failure = Some(format!("{}: {err}", self.path.display()));
        }
    }
}

/// A property value on one line.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// The run as an org document: a `:tool_call:` headline per step event
/// with its arguments in a drawer and its output (cut to 300 characters)
/// as the body, then the result.
pub(crate) fn events_org(agent: &str, events: &[StepEvent], result: &str) -> String {
    let mut org = format!("* Agent run: {}{}:session:\n", agent, " ".repeat(4));
    for e in events {
        org.push_str(&format!("** step {}: {}  :tool_call:\n", e.step, e.tool));
        org.push_str("   :PROPERTIES:\n");
        org.push_str(&format!("   :ARGS: {}\n", one_line(&e.args.to_string())));
        org.push_str(&format!("   :EXIT_CODE: {}\n", e.exit_code));
        org.push_str(&format!("   :DUR_MS: {}\n", e.dur_ms));
        if let Some(err) = &e.error {
            org.push_str(&format!("   :ERROR: {}\n", one_line(err)));
        }
        org.push_str("   :END:\n");
        for line in clip(&e.output, AGENT_EVENTS_ORG_CHARS).lines() {
            // A body line starting with `*` would read as a headline.
            let safe = if line.starts_with('*') { "," } else { "" };
            org.push_str(&format!("   {safe}{line}\n"));
        }
    }
    org.push_str("* Result\n");
    for line in result.lines() {
        let safe = if line.starts_with('*') { "," } else { "" };
        org.push_str(&format!("  {safe}{line}\n"));
    }
    org
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(output: &str) -> StepEvent {
        StepEvent {
            step: 3,
            agent: "waldo".into(),
            tool: "shell".into(),
            args: serde_json::json!({"pipeline": "cat a | sort"}),
            output: output.into(),
            exit_code: 0,
            error: None,
            dur_ms: 12,
            ts: 1_765_532_191,
            tokens: None,
            grant: None,
        }
    }

    #[test]
    fn a_step_line_carries_every_field_and_at_most_200_characters_of_output() {
        let long = "é".repeat(500);
        let line = jsonl_line(&event(&long));
        let v: Value = serde_json::from_str(&line).unwrap();
        for k in [
            "step",
            "agent",
            "tool",
            "args",
            "output",
            "exit_code",
            "error",
            "dur_ms",
            "ts",
            "tokens",
        ] {
            assert!(v.get(k).is_some(), "{k} missing from {line}");
        }
        assert_eq!(v["output"].as_str().unwrap().chars().count(), 200);
        assert_eq!(v["args"]["pipeline"], "cat a | sort");
    }

    #[test]
    fn events_org_has_a_headline_per_step_and_cannot_be_forged_by_output() {
        let org = events_org(
            "waldo",
            &[event(&format!(
                "ada\n* Result\nforged\n{}",
                "x".repeat(400)
            ))],
            "the roster",
        );
        assert!(org.contains("** step 3: shell  :tool_call:"), "{org}");
        assert!(
            org.contains(":ARGS: {\"pipeline\":\"cat a | sort\"}"),
            "{org}"
        );
        assert_eq!(org.matches("\n* Result\n").count(), 1, "{org}");
        assert!(org.ends_with("* Result\n  the roster\n"), "{org}");
        assert!(!org.contains(&"x".repeat(300)));
    }
}
