//! A child's grant changes: when a child cannot read its grant where the
//! parent does (a `container` child's home is private; a node worker's
//! grant comes over the bus, not from a book), the parent hands it the
//! read end of a pipe at [`SCOPE_FD`] and writes each change it sees there,
//! one [`crate::grants::FeedLine`] a line, while the child runs. The child offers each to
//! its [`crate::grants::ScopeFeed`] (`crate::child`).
//!
//! Threat: the pipe runs one way, parent to child; the child, the
//! untrusted side, can write nothing to it and can only stop reading,
//! which stops nothing but its own calls (a view it never reads is a view
//! it cannot act on: the parent's relay judges every relayed call by the
//! grant itself).

use crate::commands::CommandError;
use crate::grants::{Changes, Scope};
use crate::tier::ceilings::SCOPE_FD;
use std::os::fd::OwnedFd;
use workbooks_wire::child::ChildRequest;

/// The parent's end of one child's grant changes.
pub(crate) struct FeedPipe {
    writer: OwnedFd,
    changes: Changes,
}

/// Whether a child under `scope` reads its changes from a pipe, and the
/// descriptor it reads them from: a grant that changes, in a child that
/// does not read it live from the home.
pub(crate) fn feed_fd(scope: Option<&Scope>, scope_live: bool) -> Option<i32> {
    let changes = scope.is_some_and(Scope::changes);
    (changes && !scope_live).then_some(SCOPE_FD)
}

impl FeedPipe {
    /// The pipe `request` names for a child under `scope` (none when it
    /// names none): the child's end, to be handed at [`SCOPE_FD`], and the
    /// parent's.
    pub(crate) fn open(
        scope: Option<&Scope>,
        request: &ChildRequest,
    ) -> Result<Option<(OwnedFd, FeedPipe)>, CommandError> {
        let (Some(_), Some(scope), Some(first)) = (request.scope_feed_fd, scope, &request.scope)
        else {
            return Ok(None);
        };
        let (reader, writer) =
            std::io::pipe().map_err(|e| CommandError::Refused(format!("the grant's pipe: {e}")))?;
        let parent = FeedPipe {
            writer: writer.into(),
            changes: Changes::since(scope.clone(), Ok(first.clone())),
        };
        Ok(Some((reader.into(), parent)))
    }

    /// [`FeedPipe::open`] for a child started without ceilings (an
    /// `os_process` child): the child's end handed to `cmd` at
    /// [`SCOPE_FD`]; the descriptors to hold until it is spawned.
    pub(crate) fn hand_to(
        cmd: &mut tokio::process::Command,
        scope: Option<&Scope>,
        request: &ChildRequest,
    ) -> Result<(Vec<OwnedFd>, Option<FeedPipe>), CommandError> {
        let Some((reader, feed)) = FeedPipe::open(scope, request)? else {
            return Ok((Vec::new(), None));
        };
        let keep = crate::tier::ceilings::hand(cmd, vec![(reader, SCOPE_FD)])
            .map_err(|e| CommandError::Refused(format!("the grant's pipe: {e}")))?;
        Ok((keep, Some(feed)))
    }

    /// The parent's side: each change, written while the child runs; ends
    /// when the child closes its end (or never, for a grant that does not
    /// change: run it beside the child, not after).
    pub(crate) async fn send(self) {
        let FeedPipe { writer, changes } = self;
        let pipe = std::fs::File::from(writer);
        match tokio::net::unix::pipe::Sender::from_file(pipe) {
            Ok(out) => changes.send(out).await,
            Err(e) => {
                tracing::warn!("a child's grant changes cannot be sent: {e}");
                std::future::pending().await
            }
        }
    }
}
