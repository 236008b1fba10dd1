//! The container tier's child: the child binary inside bubblewrap, with
//! nothing of this engine's home, reading the tiers' one request
//! ([`workbooks_wire::child`]).
//!
//! What it is given, and nothing else: a root of its program and system
//! libraries ([`crate::tier::root`]); the guest's bytes and the code
//! this engine compiled for it, each in a sealed memfd
//! ([`crate::dock::handoff`]); one end of a socket pair over which this
//! engine serves its storage, signing and launch calls
//! ([`crate::cap::relay`], served by [`super::relay`]) from a store built
//! for its session; the preopens its caller granted; and a home of its
//! own on its private `/tmp`, gone when it ends. Under the OS ceilings of
//! [`crate::tier::ceilings`].
//!
//! Threat: native code that escaped the guest into the child. It cannot
//! read another tenant's database or this engine's keys (none is in its
//! root or reachable through the relay, which answers only for its own
//! session), write compiled code this engine or another will map (the
//! code it holds is sealed, the cache is not in its root), or reach the
//! daemon's socket (not in its root; it has no network namespace in
//! common with anyone).

use super::Engine;
use super::feed_pipe::FeedPipe;
use super::os_process::{CHILD_GRACE, child_request};
use crate::commands::ladder::Resolved;
use crate::commands::{CommandEnv, CommandError};
use crate::dock::Docked;
use crate::policy::Cap;
use crate::state::{SessionOptions, StoreState};
use crate::tier::ceilings::{CODE_FD, Ceilings, GUEST_FD, RELAY_FD, SCOPE_FD};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wasmtime::Store;
use workbooks_wire::child::{ChildJob, ChildRequest, Handed};

/// The child's home, on its private `/tmp`: it holds nothing of this
/// engine's and goes with the child.
const CHILD_HOME: &str = "/tmp/.workbooks";

/// Where the child finds a replaced broker's component.
const CHILD_BROKERS: &str = "/usr/libexec/workbooks/brokers";

/// A container-tier child ready to start, and what stays with the parent.
pub(crate) struct Contained {
    /// `bwrap …` with the child's program; [`workbooks_wire::child::CHILD_ARGV`] follows.
    pub(crate) command: tokio::process::Command,
    /// What the child is asked.
    pub(crate) request: ChildRequest,
    /// Descriptors to hold until the child is spawned.
    pub(crate) keep: Vec<OwnedFd>,
    /// The relay's parent end.
    pub(crate) relay: Relayed,
    /// The parent's end of the grant's changes, when it has any to send.
    pub(crate) feed: Option<FeedPipe>,
}

/// The parent's end of a child's relay and the store that answers it.
pub(crate) struct Relayed {
    stream: Option<tokio::net::UnixStream>,
    store: Store<StoreState>,
}

impl Relayed {
    /// Answers the child's calls until it closes the channel.
    pub(crate) async fn serve(&mut self) {
        if let Some(stream) = self.stream.take() {
            super::relay::channel::serve(stream, self.store.data_mut()).await;
        }
    }
}

fn refused(what: &str) -> impl Fn(std::io::Error) -> CommandError + '_ {
    move |e| CommandError::Refused(format!("tier container: {what}: {e}"))
}

impl Engine {
    /// The child of a container-tier task, `wbx` inside `bwrap`: see the
    /// module docs.
    pub(crate) fn contained_command(
        &self,
        (bwrap, child_bin): (&Path, &Path),
        env: &CommandEnv,
        resolved: &Resolved,
        docked: &Docked,
        args: Vec<String>,
        (timeout, fuel): (Duration, u64),
    ) -> Result<Contained, CommandError> {
        let sealed = docked
            .sealed(&resolved.artifact)
            .map_err(|e| CommandError::Refused(format!("tier container: {e}")))?;
        let brokers = self
            .replaced_broker_files()
            .map_err(refused("cannot pass a replaced broker"))?;
        let inside: Vec<(Cap, PathBuf, PathBuf)> = brokers
            .into_iter()
            .map(|(cap, host)| {
                let name = host.file_name().map(PathBuf::from).unwrap_or_default();
                (cap, host, Path::new(CHILD_BROKERS).join(name))
            })
            .collect();
        let mut read_only: Vec<(&Path, &Path)> = inside
            .iter()
            .map(|(_, host, at)| (host.as_path(), at.as_path()))
            .collect();
        read_only.extend(
            env.dirs
                .iter()
                .filter(|d| d.read_only)
                .map(|d| (d.host.as_path(), d.host.as_path())),
        );
        let writable: Vec<&Path> = env
            .dirs
            .iter()
            .filter(|d| !d.read_only)
            .map(|d| d.host.as_path())
            .collect();
        let root = crate::tier::root::root_for(child_bin).map_err(refused("the child's root"))?;
        let mut cmd = tokio::process::Command::new(bwrap);
        cmd.args(crate::tier::root::bubblewrap_args(
            &root, child_bin, &read_only, &writable,
        ));
        let (parent, child) =
            std::os::unix::net::UnixStream::pair().map_err(refused("the relay socket"))?;
        let mut handoff = sealed.handoff.clone();
        handoff.fd = CODE_FD;
        let brokers: Vec<(Cap, PathBuf)> =
            inside.iter().map(|(c, _, at)| (*c, at.clone())).collect();
        let job = ChildJob::Exec {
            file: PathBuf::from(format!("/proc/self/fd/{GUEST_FD}")),
            sha256: resolved.artifact.sha256_hex(),
            args,
            handed: Some(Handed {
                handoff,
                relay_fd: RELAY_FD,
            }),
        };
        let request = child_request(
            self,
            PathBuf::from(CHILD_HOME),
            job,
            env,
            resolved,
            (timeout, fuel),
            &brokers,
        )?;
        let mut handed = vec![
            (OwnedFd::from(child), RELAY_FD),
            (
                sealed
                    .code
                    .try_clone()
                    .map_err(refused("the handed code"))?,
                CODE_FD,
            ),
            (
                sealed.guest.try_clone().map_err(refused("the guest"))?,
                GUEST_FD,
            ),
        ];
        // Its home holds no grant: a grant that changes is sent to it.
        let feed = match FeedPipe::open(env.scope.as_ref(), &request)? {
            Some((reader, feed)) => {
                handed.push((reader, SCOPE_FD));
                Some(feed)
            }
            None => None,
        };
        let memory_cap = self.memory_cap(env.policy.memory, env.grant.profile.effective);
        let ceilings = Ceilings::for_task(memory_cap, timeout + CHILD_GRACE);
        let keep = ceilings
            .confine(&mut cmd, handed)
            .map_err(refused("cannot set the child's OS ceilings"))?;
        cmd.arg(crate::tier::root::PROGRAM_INSIDE);
        // The store the child's relayed calls are answered from: the one
        // an in-process run of this command would get.
        let grant = resolved.grant(&env.grant);
        let mut opts = SessionOptions::new(env.session_id.clone(), env.tenant.clone());
        opts.env = env.policy.env.to_vec();
        opts.dirs = env.dirs.clone();
        opts.memory = env.policy.memory;
        opts.commands = super::launch::child_policy(env);
        // Its commands (relayed launch calls) run under the caller's scope.
        opts.scope = env.scope.clone();
        let (store, _) = self
            .new_store(crate::flavor::Flavor::Sync, &grant, &opts)
            .map_err(|e| {
                CommandError::Refused(format!("tier container: the relay's store: {e}"))
            })?;
        parent
            .set_nonblocking(true)
            .map_err(refused("the relay socket"))?;
        let stream =
            tokio::net::UnixStream::from_std(parent).map_err(refused("the relay socket"))?;
        Ok(Contained {
            command: cmd,
            request,
            keep,
            feed,
            relay: Relayed {
                stream: Some(stream),
                store,
            },
        })
    }
}
