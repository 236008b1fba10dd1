//! One-shot raw sockets: destination and bytes in, the reply out. The
//! guest never holds a socket; the host resolves the name once, judges the
//! address with the floor, connects to that address only, and caps the
//! reply and the time.

use super::capped_http::{HttpClient, HttpError};
use crate::limits::{SOCKET_MAX_REPLY_BYTES, SOCKET_TIMEOUT};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The transport of a one-shot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// Plain TCP.
    Tcp,
    /// One UDP datagram out, one back.
    Udp,
    /// TCP with TLS, peer verified for the host name.
    Tls,
}

/// Sends `data` to `host`:`port` and returns the reply.
pub async fn request(
    client: &HttpClient,
    proto: Proto,
    host: &str,
    port: u16,
    data: &[u8],
) -> Result<Vec<u8>, HttpError> {
    tokio::time::timeout(SOCKET_TIMEOUT, exchange(client, proto, host, port, data))
        .await
        .map_err(|_| HttpError::Timeout(SOCKET_TIMEOUT))?
}

async fn exchange(
    client: &HttpClient,
    proto: Proto,
    host: &str,
    port: u16,
    data: &[u8],
) -> Result<Vec<u8>, HttpError> {
    let addr = client.guard().pin(host, port).await?;
    let io_error = |e: std::io::Error| HttpError::Protocol(e.to_string());
    if proto == Proto::Udp {
        let local = match addr.ip() {
            IpAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
            IpAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
        };
        let socket = tokio::net::UdpSocket::bind(local).await.map_err(io_error)?;
        socket.connect(addr).await.map_err(|e| HttpError::Connect {
            addr,
            why: e.to_string(),
        })?;
        socket.send(data).await.map_err(io_error)?;
        let mut buf = vec![0u8; 65_536];
        let n = socket.recv(&mut buf).await.map_err(io_error)?;
        buf.truncate(n);
        return Ok(buf);
    }
    let mut stream = client
        .connect(addr, (proto == Proto::Tls).then_some(host))
        .await?;
    stream.write_all(data).await.map_err(io_error)?;
    stream.flush().await.map_err(io_error)?;
    let _ = stream.shutdown().await;
    let mut reply = Vec::new();
    let read = (&mut stream)
        .take(SOCKET_MAX_REPLY_BYTES as u64 + 1)
        .read_to_end(&mut reply)
        .await;
    match read {
        Ok(_) if reply.len() > SOCKET_MAX_REPLY_BYTES => {
            Err(HttpError::TooLarge(SOCKET_MAX_REPLY_BYTES as u64))
        }
        Ok(_) => Ok(reply),
        // A TLS peer that closes without close_notify still sent its reply.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof && !reply.is_empty() => Ok(reply),
        Err(e) => Err(io_error(e)),
    }
}
