//! Every limit the engine enforces, in one place, each with what it stops;
//! plus the two mechanisms that enforce the per-store ones: the memory
//! limiter (total of all linear memories and tables in a store) and the
//! wall-clock deadline (epoch interruption, with a tokio timeout for time
//! spent blocked in the host).
//!
//! Profile limits (memory, per-call timeout) live with the profiles in
//! [`crate::policy`]; these are the limits every profile shares.

use std::time::Duration;

mod deadline;
mod memory;

pub(crate) use deadline::{
    Deadline, DeadlineExceeded, EpochTicker, HasDeadline, install as install_deadline,
    install_blocking as install_blocking_deadline,
};
pub(crate) use memory::MemoryLimiter;

// ---- execution -----------------------------------------------------------

/// How often the engine's epoch advances. Wall-clock deadlines are checked at
/// this granularity, so a runaway call overshoots its budget by at most this.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The largest configuration file the engine or the CLI reads (the TLS
/// roots of `WB_TLS_CA_FILE`, the Docker credentials): a path pointed at
/// `/dev/zero` or a huge file, read whole.
pub const CONFIG_MAX_FILE_BYTES: u64 = 1 << 20;

/// The most memory an operator may give a session in place of its
/// profile's cap: all a wasm32 memory can address.
pub const MAX_MEMORY_BYTES: usize = 4 << 30;

/// Fuel a one-shot command gets by default: a loop that never blocks burns
/// it and traps even if no clock is watching.
pub const COMMAND_FUEL: u64 = 5_000_000_000;

/// Table elements count toward a store's memory cap at this many bytes each,
/// so a guest cannot dodge the cap by growing tables instead of memories.
pub const TABLE_ELEMENT_BYTES: usize = 8;

/// Core instances in one store. A composed component holds a handful (guest,
/// brokers, adapters); this stops a component built to instantiate without
/// end.
pub const MAX_CORE_INSTANCES_PER_STORE: usize = 64;

/// Linear memories in one store; same reason as the instance cap.
pub const MAX_MEMORIES_PER_STORE: usize = 32;

/// Tables in one store; same reason as the instance cap.
pub const MAX_TABLES_PER_STORE: usize = 64;

/// Live entries in each of a store's two tables: its async table (WASI
/// 0.3 tasks, subtasks, streams, futures and their waitables) and its host
/// resources (files, sockets, streams, http bodies, at 0.2 or 0.3). Each
/// pending host call of a guest task holds an entry and the host future
/// behind it, so a guest spawning tasks that each await the host would
/// otherwise grow host memory without touching its own; past this the
/// call fails as `async_tasks`.
pub const MAX_TABLE_ENTRIES: usize = 10_000;

/// One store's `wasi:http` values may make the host hold this share of
/// the store's own memory cap (1/4), and never less than
/// [`MIN_HTTP_HELD_BYTES`]: header maps, the heads of requests and
/// responses, and outgoing bodies buffered before they are sent
/// ([`crate::cap::net::held`]). The table cap counts entries, not bytes:
/// without this, 10 000 header maps of 128 KiB each held 1.25 GiB of host
/// memory for a 128 MiB guest, and one request to a served handler did as
/// much to `wbx serve`. Past it the call that would grow them fails
/// (`header-error.size-exceeded` at 0.3, a trap naming the budget at 0.2,
/// whose `header-error` has no such case; `outgoing-*.body` fails).
pub const HTTP_HELD_SHARE: usize = 4;

/// The floor under [`HTTP_HELD_SHARE`]: room for 64 requests in flight,
/// each with its head and a buffered body, in the smallest store.
pub const MIN_HTTP_HELD_BYTES: usize = 16 << 20;

/// The host-memory budget of a store whose memory cap is `memory`.
pub(crate) fn http_held_bytes(memory: usize) -> usize {
    (memory / HTTP_HELD_SHARE).max(MIN_HTTP_HELD_BYTES)
}

/// The most a guest may write to a `wasi:http` 0.2 outgoing body in one
/// write; with the one chunk wasmtime-wasi-http buffers, a body holds at
/// most twice this in the host before it is sent. Its default of 1 MiB let
/// each body a guest opened and never sent park 2 MiB.
pub const HTTP_BODY_CHUNK_BYTES: usize = 64 << 10;

/// Sockets one store may hold at once (`wasi:sockets`, either version),
/// each an OS descriptor: without it the table's 10 000 entries let one
/// guest run the process out of descriptors, so `wbx serve` stopped
/// accepting and other tenants' runs waited. Past it the call that would
/// make one more fails with `new-socket-limit`, and a connection one of
/// its listeners would take is reset.
pub const MAX_SOCKETS_PER_STORE: usize = 256;

/// Outgoing `wasi:http` requests one store may have in flight: each holds
/// a connection, an OS descriptor, from its send until its response is
/// dropped, and `outgoing-handler.handle` returns before the answer, so a
/// guest sending without waiting held one per table entry. Past it a
/// request is answered `connection-limit-reached` and opens nothing.
pub const MAX_REQUESTS_PER_STORE: usize = 256;

/// The `wasi:filesystem` descriptors one store may hold open, its preopens
/// included: each is an OS descriptor, and the table alone let one guest
/// hold 10 000.
pub const MAX_FILES_PER_STORE: usize = 512;

/// Descriptors (sockets and files) all stores of one tenant may hold at
/// once: the per-store caps bound one store, and a tenant runs many, so
/// without it one tenant's stores could take every descriptor the process
/// has. Engines default to a [`TENANT_DESCRIPTOR_SHARE`] of the process's
/// soft limit, at most this (`EngineBuilder::max_descriptors_per_tenant`
/// sets another).
pub const MAX_DESCRIPTORS_PER_TENANT: usize = 4096;

/// The part of the process's descriptor soft limit one tenant may hold by
/// default (a quarter): what is left serves other tenants and the host.
pub const TENANT_DESCRIPTOR_SHARE: usize = 4;

/// Bytes of stdout (and, separately, stderr) kept from one call when the
/// output is captured. A guest printing without end fills it and its
/// stream closes; the run reports `output_limit`.
pub const MAX_CAPTURED_OUTPUT_BYTES: usize = 8 << 20;

/// How long past its budget a command blocked in the host (waiting on a
/// pipe, a sleep, a socket: time the epoch never sees) is cut off. Wasm
/// code stops at the budget by epoch; the backstop comes this much later,
/// so of two pipeline stages out of time, the one computing is named
/// rather than the one waiting on it.
pub const HOST_WAIT_GRACE: Duration = Duration::from_millis(50);

/// Bytes in flight in one pipe between two stages of a pipeline. A writer
/// waits while its pipe is full, so a fast producer cannot park an
/// unbounded buffer in the host however much it writes.
pub const PIPE_CAPACITY: usize = 256 << 10;

/// Stages in one pipeline. Every stage holds an instance (its memory, its
/// concurrency slot) for as long as the pipeline runs.
pub const MAX_PIPELINE_STAGES: usize = 32;

/// Bytes of stdin handed to one call. Stops a caller from parking an
/// unbounded buffer in the host.
pub const MAX_STDIN_BYTES: usize = 64 << 20;

/// Total bytes of argv (including one NUL per argument) of one call. Stops
/// argument lists that would blow a host's ARG_MAX or memory silently.
pub const MAX_ARGV_BYTES: usize = 256 << 10;

/// Total bytes of a guest's environment (each `NAME=value` plus a NUL) of
/// one call. Same reason as the argv cap: an operator's `--env` list, or a
/// library caller's, cannot park an unbounded block in every store.
pub const MAX_ENV_BYTES: usize = 64 << 10;

/// Bytes of one call a container-tier child sends its parent over the
/// relay: the largest a guest may hand one call (a command's stdin and
/// argv) and room for the rest. A bigger frame closes the channel before
/// anything is allocated for it.
pub const RELAY_MAX_CALL_BYTES: usize = MAX_STDIN_BYTES + MAX_ARGV_BYTES + (1 << 20);

// ---- the cadence ------------------------------------------------------------

/// Tenants the rate limiter tracks at once; past it, tenants not yet
/// tracked share one overflow bucket. Bounds the memory a flood of new
/// names (a server's clients) can take.
pub const RATE_MAX_TENANTS: usize = 65_536;

/// Repeats of one (tenant, primitive, reason) denial within this window
/// share one line of the audit file, so denials an untrusted party causes
/// do not grow the log one line each.
pub const AUDIT_COALESCE_WINDOW: Duration = Duration::from_secs(10);

/// Size past which the audit file is rotated (one older generation is
/// kept), so the log on disk stays under twice this.
pub const AUDIT_MAX_FILE_BYTES: u64 = 8 << 20;

// ---- identifiers -----------------------------------------------------------

/// Longest instance id or tenant name. Both become storage tree names.
pub const MAX_NAME_BYTES: usize = 128;

// ---- each cap's own ----------------------------------------------------------
//
// A cap's limits are in its unit's folder, with the rest of the cap
// (`cap/<unit>/mod.rs`); those of `kv` and `vfs` are public as
// `workbooks::kv` and `workbooks::vfs`.

// ---- network -----------------------------------------------------------------

/// Largest HTTP body the egress transport reads, by default (engine configuration may
/// lower or raise it).
pub const NET_MAX_BODY_BYTES: usize = 8 << 20;

/// Wall-clock budget of one fetch, redirects included.
pub const NET_FETCH_TIMEOUT: Duration = Duration::from_secs(15);

/// Redirects one fetch follows; each hop is checked again.
pub const NET_MAX_REDIRECTS: u8 = 10;

/// URLs one `fetch-many` call takes.
pub const NET_FETCH_MANY_MAX: usize = 64;

/// Fetches of one `fetch-many` call in flight at once.
pub const NET_FETCH_MANY_CONCURRENCY: usize = 16;

/// Body bytes one `fetch-many` call may hold in all, in flight and done:
/// without it, 64 URLs of 8 MiB each would park 512 MiB in the host.
pub const NET_FETCH_MANY_MAX_BYTES: usize = 32 << 20;

/// Wall-clock budget of one `browse` fetch.
pub const BROWSE_TIMEOUT: Duration = Duration::from_secs(20);

/// Largest page text `browse` returns.
pub const BROWSE_MAX_TEXT_BYTES: usize = 1 << 20;

/// Largest reply of a tcp, udp or tls one-shot.
pub const SOCKET_MAX_REPLY_BYTES: usize = 1 << 20;

/// Wall-clock budget of a tcp, udp or tls one-shot.
pub const SOCKET_TIMEOUT: Duration = Duration::from_secs(10);

/// Distinct addresses one store may send `wasi:sockets` datagrams to. Only
/// those may send datagrams back, so the set is kept; this bounds it.
pub const SOCKET_MAX_UDP_PEERS: usize = 1024;

/// Addresses a scoped store remembers from its own name lookups (each the
/// answer to a name its scope allows, so a socket may connect to it), and
/// names it remembers for one address. Bounds the map a guest grows by
/// looking names up; past it, a new answer is not remembered and a
/// connect to it is refused.
pub const SCOPE_MAX_LOOKED_UP: usize = 1024;

/// How long a running engine may go on judging calls by a grant as it last
/// read it: a narrowing, an expiry change or a revocation made by another
/// process reaches every call after this. Stops a file check on every call
/// (one clock read otherwise).
pub const GRANT_REFRESH_INTERVAL: Duration = Duration::from_millis(10);

/// How often a process that sends its grant's changes to another (a
/// parent to its `container` child, a node-tier submitter to its workers)
/// looks for one: a change reaches the other side this long after it is
/// made, plus the carrying. Stops a look on every call of the other side.
pub const GRANT_FEED_POLL: Duration = Duration::from_millis(20);

/// The longest line of a grant's change a child reads from its parent.
/// Stops a line without end from growing the child's memory.
pub const GRANT_FEED_MAX_LINE_BYTES: u64 = 1 << 20;

/// Grants one home holds. Bounds `grants.json`, which every engine sharing
/// the home reads whole when it changes.
pub const GRANTS_MAX: usize = 4096;

/// Bytes of a file `wbx grant import` reads (a Wassette policy, a Spin
/// manifest, an exported grant). Stops a huge or endless file (a YAML
/// alias bomb expands within the reader's own budget) from being read
/// whole into memory.
pub const GRANT_IMPORT_MAX_BYTES: usize = 1 << 20;

/// Grants one import makes (one per component of a Spin manifest). Stops
/// a manifest of thousands of components from filling the book.
pub const GRANT_IMPORT_MAX_GRANTS: usize = 64;

/// WASI 0.3 datagram calls (`udp-socket.send` and `receive`) one store may
/// have waiting at once. Each holds a datagram's buffer in the host (up to
/// 64 KiB) until it is answered, and the calls are async: without this one
/// socket and a 64 KiB guest buffer made the host hold 64 KiB per call, as
/// many calls as the guest cared to start.
pub const UDP_CALLS_WAITING_PER_STORE: usize = 64;

/// Largest response body `wbx serve` sends; a guest producing more gets a
/// 502 instead.
pub const SERVE_MAX_RESPONSE_BYTES: usize = 8 << 20;

/// Requests one instance of a WASI 0.3 handler serves at once when it is
/// shared (`wbx serve` without `--instance-per-request`); past it another
/// instance is started. Bounds how much one instance's memory and event
/// loop carry.
pub const SERVE_SHARED_MAX_CONCURRENT: usize = 64;

/// Requests one shared instance serves in all before it is retired and a
/// fresh one takes over: whatever a guest leaks or keeps between requests
/// is bounded by it.
pub const SERVE_SHARED_MAX_REQUESTS: usize = 10_000;

/// The oldest a shared instance gets before it is retired, however busy:
/// bounds work a request leaves running after its answer, which later
/// requests would otherwise keep alive by renewing the deadline.
pub const SERVE_SHARED_MAX_AGE: Duration = Duration::from_secs(60);

/// How long a shared instance with nothing to do is kept.
pub const SERVE_SHARED_IDLE: Duration = Duration::from_secs(10);

/// The most bytes a client of `wbx serve --tcp` may send in one request;
/// stops a client from making the host buffer without bound.
pub const SERVE_TCP_MAX_REQUEST_BYTES: usize = 1 << 20;

/// Connections `wbx serve` keeps open at once, by default; past it the
/// connection waiting longest for its headers is shed for a new one (a new
/// one is closed when every connection is busy), so idle clients cannot
/// use up the process's file descriptors or keep others out.
pub const SERVE_MAX_CONNECTIONS: usize = 1024;

/// Connections one client (an IPv4 address or an IPv6 /64) may keep open
/// at once, by default.
pub const SERVE_MAX_CONNECTIONS_PER_CLIENT: usize = 32;

/// How long a client has to send a request's headers, and how long an idle
/// keep-alive connection is kept, by default: a client trickling header
/// lines is cut off here.
pub const SERVE_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a front door told to stop (`serve-api` on Ctrl-C) waits for
/// the requests in flight to be answered: a stream of events that never
/// ends is cut here, so stopping always ends.
pub const SERVE_DRAIN_GRACE: Duration = Duration::from_secs(10);

/// The share of `--max-connections` (percent) past which a server is under
/// pressure: a connection admitted then has at most
/// [`SERVE_PRESSURE_HEADER_TIMEOUT`] for its headers. Stops slow-header
/// clients from holding slots for the whole timeout when slots run short.
pub const SERVE_PRESSURE_PERCENT: usize = 75;

/// The header timeout of a connection admitted under pressure.
pub const SERVE_PRESSURE_HEADER_TIMEOUT: Duration = Duration::from_secs(2);

// ---- llm ------------------------------------------------------------------

/// Wall-clock budget of one chat/completions request, by default: a model
/// that stops answering is cut off here.
pub const LLM_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// Times a transient failure (408, 409, 429 other than a spent quota, 5xx,
/// a timeout, a broken connection) is retried, by default.
pub const LLM_RETRIES: u32 = 2;

/// The whole completion, retries included, by default:
/// `(retries + 1) × 120 s + 15 s`. An HTTP client whose own timeout does
/// not fire cannot hold a run past it.
pub const LLM_HARD_DEADLINE: Duration = Duration::from_secs(375);

/// The longest `Retry-After` honoured; a longer one is cut to this.
pub const LLM_MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// The wait before a retry when the endpoint gives no `Retry-After`.
pub const LLM_RETRY_BACKOFF: Duration = Duration::from_secs(1);

/// Bytes of one chat/completions request the host sends: stops a broker
/// from making the host buffer a transcript without bound.
pub const LLM_MAX_REQUEST_BYTES: usize = 8 << 20;

/// Bytes of one chat/completions reply the host reads.
pub const LLM_MAX_REPLY_BYTES: usize = 8 << 20;

/// Tokens one completion may answer with, by default (the operator sets
/// it: `WB_LLM_MAX_TOKENS`). Stops a model that never stops talking from
/// filling its whole context on the operator's key in one turn.
pub const LLM_MAX_TOKENS: u64 = 4096;

/// Commands one tenant may have running at once.
pub const MAX_CONCURRENT_PER_TENANT: u32 = 64;

/// Tasks in flight in a fan-out ([`crate::engine::Fan`]) when the caller
/// names no width.
pub const FAN_WIDTH: usize = 16;
/// Most tasks in flight at once: the tenant's concurrency cap, so a
/// fan-out is refused nothing the ladder would allow.
pub const FAN_MAX_WIDTH: usize = MAX_CONCURRENT_PER_TENANT as usize;
/// Private writable memory a container-tier child may map beyond its
/// guest's memory cap (its runtime, stacks, caches): with the cap, the
/// child's `RLIMIT_DATA`. Stops a child that grows past what its guest
/// could legitimately use, whatever grows it.
pub const CONTAINER_DATA_HEADROOM_BYTES: u64 = 512 << 20;
/// CPU seconds a container-tier child may use per second of its wall
/// budget (the guest's thread plus the runtime's): with the budget, the
/// child's `RLIMIT_CPU`. Stops a child that spins after its parent is gone.
pub const CONTAINER_CPU_FACTOR: u64 = 2;
/// The size of a container-tier child's private `/tmp` (a tmpfs, where
/// its own short-lived home lies). Stops a child that fills memory
/// through files, which `RLIMIT_DATA` does not count.
pub const CONTAINER_TMP_BYTES: u64 = 64 << 20;
/// Descriptors a container-tier child may hold open (`RLIMIT_NOFILE`).
/// Stops a child that holds memory in pipes and socket buffers, which
/// `RLIMIT_DATA` does not count, without end.
pub const CONTAINER_MAX_FILES: u64 = 256;
/// Most inputs in one `run-many` call from a guest (the `parallel` cap).
pub const PARALLEL_MAX_INPUTS: usize = 1024;
