//! The socket and datagram-stream resources, on a type with no values:
//! no constructor makes one, so none of these methods can be reached.

use super::*;

/// Methods whose receiver cannot exist.
macro_rules! unreachable_methods {
    ($(fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {
        $(fn $name(&self $(, $arg: $ty)*) -> $ret {
            $(let _ = $arg;)*
            match *self {}
        })*
    };
}

type Refusal<T> = Result<T, ErrorCode>;

impl tcp::GuestTcpSocket for Never {
    unreachable_methods! {
        fn start_bind(&self, network: NetworkBorrow<'_>, local: IpSocketAddress) -> Refusal<()>;
        fn finish_bind(&self) -> Refusal<()>;
        fn start_connect(&self, network: NetworkBorrow<'_>, remote: IpSocketAddress) -> Refusal<()>;
        fn finish_connect(&self) -> Refusal<(InputStream, OutputStream)>;
        fn start_listen(&self) -> Refusal<()>;
        fn finish_listen(&self) -> Refusal<()>;
        fn accept(&self) -> Refusal<(tcp::TcpSocket, InputStream, OutputStream)>;
        fn local_address(&self) -> Refusal<IpSocketAddress>;
        fn remote_address(&self) -> Refusal<IpSocketAddress>;
        fn is_listening(&self) -> bool;
        fn address_family(&self) -> IpAddressFamily;
        fn set_listen_backlog_size(&self, value: u64) -> Refusal<()>;
        fn keep_alive_enabled(&self) -> Refusal<bool>;
        fn set_keep_alive_enabled(&self, value: bool) -> Refusal<()>;
        fn keep_alive_idle_time(&self) -> Refusal<u64>;
        fn set_keep_alive_idle_time(&self, value: u64) -> Refusal<()>;
        fn keep_alive_interval(&self) -> Refusal<u64>;
        fn set_keep_alive_interval(&self, value: u64) -> Refusal<()>;
        fn keep_alive_count(&self) -> Refusal<u32>;
        fn set_keep_alive_count(&self, value: u32) -> Refusal<()>;
        fn hop_limit(&self) -> Refusal<u8>;
        fn set_hop_limit(&self, value: u8) -> Refusal<()>;
        fn receive_buffer_size(&self) -> Refusal<u64>;
        fn set_receive_buffer_size(&self, value: u64) -> Refusal<()>;
        fn send_buffer_size(&self) -> Refusal<u64>;
        fn set_send_buffer_size(&self, value: u64) -> Refusal<()>;
        fn subscribe(&self) -> Pollable;
        fn shutdown(&self, how: ShutdownType) -> Refusal<()>;
    }
}

impl udp::GuestUdpSocket for Never {
    unreachable_methods! {
        fn start_bind(&self, network: NetworkBorrow<'_>, local: IpSocketAddress) -> Refusal<()>;
        fn finish_bind(&self) -> Refusal<()>;
        fn stream(&self, remote: Option<IpSocketAddress>) -> Refusal<(udp::IncomingDatagramStream, udp::OutgoingDatagramStream)>;
        fn local_address(&self) -> Refusal<IpSocketAddress>;
        fn remote_address(&self) -> Refusal<IpSocketAddress>;
        fn address_family(&self) -> IpAddressFamily;
        fn unicast_hop_limit(&self) -> Refusal<u8>;
        fn set_unicast_hop_limit(&self, value: u8) -> Refusal<()>;
        fn receive_buffer_size(&self) -> Refusal<u64>;
        fn set_receive_buffer_size(&self, value: u64) -> Refusal<()>;
        fn send_buffer_size(&self) -> Refusal<u64>;
        fn set_send_buffer_size(&self, value: u64) -> Refusal<()>;
        fn subscribe(&self) -> Pollable;
    }
}

impl udp::GuestIncomingDatagramStream for Never {
    unreachable_methods! {
        fn receive(&self, max: u64) -> Refusal<Vec<IncomingDatagram>>;
        fn subscribe(&self) -> Pollable;
    }
}

impl udp::GuestOutgoingDatagramStream for Never {
    unreachable_methods! {
        fn check_send(&self) -> Refusal<u64>;
        fn send(&self, datagrams: Vec<OutgoingDatagram>) -> Refusal<u64>;
        fn subscribe(&self) -> Pollable;
    }
}
