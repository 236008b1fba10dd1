//! The agent service's limits: each bounds what one run, one tenant or
//! one outside call may make the service hold or spend. The engine's own
//! (and the llm primitive's) are `workbooks::limits`.

use std::time::Duration;

/// Tokens one agent run may spend in all, by default (`--token-budget`):
/// summed from each reply's usage. Stops a run that talks for an hour.
pub const AGENT_TOKEN_BUDGET: u64 = 200_000;

/// Tokens the agent API lets one tenant spend per window, by default
/// (`wbx serve-api --tenant-tokens`), across all its runs.
pub const AGENT_API_TENANT_TOKENS: u64 = 1_000_000;

/// The window of [`AGENT_API_TENANT_TOKENS`].
pub const AGENT_API_TENANT_WINDOW: Duration = Duration::from_secs(3600);

/// Wall-clock budget of one agent tool call, by default; past it the call
/// is killed and the model reads that it was.
pub const AGENT_TOOL_TIMEOUT: Duration = Duration::from_secs(150);

/// Model turns of an agent run, by default (`wbx agent run`).
pub const AGENT_MAX_STEPS: u32 = 12;

/// Model turns of a run started over HTTP, by default.
pub const AGENT_API_MAX_STEPS: u32 = 40;

/// Characters of a tool's output the model reads back.
pub const AGENT_TOOL_OUTPUT_CHARS: u32 = 4000;

/// Characters of a tool's output kept in `_steps.jsonl`.
pub const AGENT_STEP_LOG_CHARS: usize = 200;

/// Characters of a tool's output kept in `events.org`.
pub const AGENT_EVENTS_ORG_CHARS: usize = 300;

/// Tool calls one model turn may make; the rest are answered with an
/// error. Stops a turn from queueing unbounded work.
pub const AGENT_MAX_CALLS_PER_TURN: usize = 16;

/// Bytes `vfs_read` returns from one file.
pub const AGENT_VFS_READ_BYTES: u64 = 1 << 20;

/// Bytes `vfs_write` writes in one call.
pub const AGENT_VFS_WRITE_BYTES: usize = 8 << 20;

/// Agent runs one engine supervises at once; a start past it is refused,
/// so callers cannot queue unbounded work.
pub const AGENT_MAX_LIVE_RUNS: usize = 16;

/// Items one run's review queue holds; a put past it is refused.
pub const AGENT_REVIEW_QUEUE_ITEMS: usize = 1000;

/// Bytes of one review-queue item.
pub const AGENT_REVIEW_ITEM_BYTES: usize = 64 << 10;

/// Results `web_search` gives the model.
pub const AGENT_WEB_SEARCH_RESULTS: usize = 8;

/// Wall-clock budget of one `web_search` request to the operator's endpoint.
pub const AGENT_WEB_SEARCH_TIMEOUT: Duration = Duration::from_secs(20);

/// Bytes of one search answer the host reads: stops an endpoint from
/// making the host buffer without bound.
pub const AGENT_WEB_SEARCH_REPLY_BYTES: usize = 2 << 20;

/// Images one run may try to make, counted at the attempt: a failed
/// generation spends its slot too. Stops a run from spending the
/// operator's image budget in a loop.
pub const AGENT_IMAGES_PER_RUN: u32 = 2;

/// Wall-clock budget of one image request.
pub const AGENT_IMAGE_TIMEOUT: Duration = Duration::from_secs(120);

/// Bytes of one image answer (base64 JSON) the host reads.
pub const AGENT_IMAGE_REPLY_BYTES: usize = 24 << 20;

/// Files `git` commits or `publish` copies in one call: stops a workdir
/// full of small files from making one call unbounded.
pub const AGENT_EXPORT_MAX_FILES: usize = 10_000;

/// Bytes `git` commits or `publish` copies in one call.
pub const AGENT_EXPORT_MAX_BYTES: u64 = 256 << 20;

/// Bytes of a commit message the `git` tool takes.
pub const AGENT_GIT_MESSAGE_BYTES: usize = 8 << 10;

/// Wall-clock budget of the agent component itself, however it spends its
/// steps: each model turn and tool call has its own bound, and this stops
/// a run from outliving any caller.
pub const AGENT_RUN_DEADLINE: Duration = Duration::from_secs(6 * 3600);

/// Fuel of the agent component for a whole run: the loop only builds and
/// reads transcripts.
pub const AGENT_FUEL: u64 = 50_000_000_000;
