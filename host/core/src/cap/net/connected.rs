//! Open `wasi:sockets` 0.2 TCP connections, judged again at every read and
//! write.
//!
//! Threat: a connect is judged once, by the socket gate at
//! `start-connect`. A guest that connected before its grant was narrowed,
//! revoked or expired would go on sending and reading on the open
//! connection for as long as the peer keeps it.
//!
//! Served here: under a scope, `tcp-socket.finish-connect` is linked over
//! wasmtime-wasi's, and the two streams it returns are wrapped in place in
//! the store's table (same handles, same parent socket), so every read,
//! skip, write, flush and write check on either asks the gate whether the
//! grant as it is now still allows the destination
//! ([`super::sockets::SocketGate::still_allows`]). Once refused, the stream
//! fails with `last-operation-failed` naming the refusal, and stays failed;
//! the refusal is audited once per stream.
//!
//! Invariant: under a scope, no byte moves on a 0.2 connection whose
//! destination the grant no longer allows, from the guest's next stream
//! call on. Not covered: a 0.3 connection, whose streams wasmtime-wasi
//! drives itself past any call linked here (a narrowing reaches its next
//! connect); a read already blocked on an idle connection is judged when
//! its data arrives, or ends at the call's deadline.

use super::TCP_02;
use super::sockets::{GuardedLookup, SocketGate};
use crate::cap::shadow::answered;
use bytes::Bytes;
use std::net::SocketAddr;
use std::sync::Arc;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p2::bindings::sockets as p2;
use wasmtime_wasi::p2::pipe::{ClosedInputStream, ClosedOutputStream};
use wasmtime_wasi::p2::{
    DynInputStream, DynOutputStream, InputStream, OutputStream, Pollable, StreamError, StreamResult,
};
use wasmtime_wasi::sockets::WasiSocketsView as _;

/// What a wrapped stream is judged by.
struct Judge {
    gate: Arc<SocketGate>,
    peer: SocketAddr,
    /// The refusal, once there was one: the stream stays failed.
    refused: Option<&'static str>,
}

impl Judge {
    fn judge(&mut self) -> StreamResult<()> {
        if self.refused.is_none()
            && let Err(why) = self.gate.still_allows(self.peer)
        {
            self.refused = Some(why);
        }
        match self.refused {
            None => Ok(()),
            Some(why) => Err(StreamError::LastOperationFailed(wasmtime::format_err!(
                "{why}: the grant no longer allows tcp {}; the connection is closed to this guest",
                self.peer
            ))),
        }
    }
}

/// A connection's input stream, judged before each read.
struct JudgedInput {
    inner: DynInputStream,
    judge: Judge,
}

#[async_trait::async_trait]
impl Pollable for JudgedInput {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[async_trait::async_trait]
impl InputStream for JudgedInput {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        self.judge.judge()?;
        self.inner.read(size)
    }

    fn skip(&mut self, nelem: usize) -> StreamResult<usize> {
        self.judge.judge()?;
        self.inner.skip(nelem)
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}

/// A connection's output stream, judged before each write, flush and
/// write check.
struct JudgedOutput {
    inner: DynOutputStream,
    judge: Judge,
}

#[async_trait::async_trait]
impl Pollable for JudgedOutput {
    async fn ready(&mut self) {
        self.inner.ready().await;
    }
}

#[async_trait::async_trait]
impl OutputStream for JudgedOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.judge.judge()?;
        self.inner.write(bytes)
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.judge.judge()?;
        self.inner.flush()
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.judge.judge()?;
        self.inner.check_write()
    }

    async fn cancel(&mut self) {
        self.inner.cancel().await;
    }
}

/// Wraps the streams of a connection to `peer` in place, each judged by
/// `gate`.
fn wrap(
    table: &mut ResourceTable,
    (input, output): (&Resource<DynInputStream>, &Resource<DynOutputStream>),
    gate: &Arc<SocketGate>,
    peer: SocketAddr,
) -> wasmtime::Result<()> {
    let judge = || Judge {
        gate: gate.clone(),
        peer,
        refused: None,
    };
    let slot = table.get_mut(input)?;
    let inner = std::mem::replace(slot, Box::new(ClosedInputStream));
    *slot = Box::new(JudgedInput {
        inner,
        judge: judge(),
    });
    let slot = table.get_mut(output)?;
    let inner = std::mem::replace(slot, Box::new(ClosedOutputStream));
    *slot = Box::new(JudgedOutput {
        inner,
        judge: judge(),
    });
    Ok(())
}

type Connected = (Resource<DynInputStream>, Resource<DynOutputStream>);

/// Links `tcp-socket.finish-connect` over wasmtime-wasi's 0.2 one; called
/// right after that is linked.
pub(crate) fn add_to_linker<T: WasiView + Send + 'static>(
    l: &mut Linker<T>,
    lookup: fn(&mut T) -> GuardedLookup<'_>,
) -> wasmtime::Result<()> {
    type Tcp = wasmtime_wasi::p2::TcpSocket;
    l.allow_shadowing(true);
    l.instance(TCP_02)?.func_wrap(
        "[method]tcp-socket.finish-connect",
        move |mut store: StoreContextMut<'_, T>,
              (socket,): (Resource<Tcp>,)|
              -> wasmtime::Result<(Result<Connected, p2::network::ErrorCode>,)> {
            let state = store.data_mut();
            let rep = socket.rep();
            let connected = p2::tcp::HostTcpSocket::finish_connect(&mut state.sockets(), socket);
            let gate = lookup(state).gate.filter(|g| g.is_scoped()).cloned();
            if let (Ok(streams), Some(gate)) = (&connected, gate) {
                let socket = Resource::<Tcp>::new_borrow(rep);
                let peer = p2::tcp::HostTcpSocket::remote_address(&mut state.sockets(), socket);
                match peer {
                    Ok(peer) => {
                        let streams = (&streams.0, &streams.1);
                        wrap(state.ctx().table, streams, &gate, peer.into())?;
                    }
                    // Connected, yet no peer to judge by: not handed out.
                    Err(_) => return Ok((Err(p2::network::ErrorCode::ConnectionAborted),)),
                }
            }
            answered(connected)
        },
    )?;
    l.allow_shadowing(false);
    Ok(())
}
