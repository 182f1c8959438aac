//! A crash as a client sees it: the connection of the request that took the server
//! down is reset without an answer, and every later connection is refused, as when
//! TEI's process aborts on token ids that decode to nothing.
//!
//! An HTTP handler can only hold an answer back, never close its socket, so a persona
//! with a [`Quirk::CrashOn`](crate::Quirk::CrashOn) is served behind this front: it
//! relays bytes to the persona's server until [`Switch::crash`], then resets every
//! relayed connection and stops listening. A client learns of the crash at once, as
//! from a real dead process, instead of after its own timeout.

use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Set once, by the answer that crashes the server; the front watches it.
#[derive(Clone)]
pub(crate) struct Switch(watch::Sender<bool>);

impl Switch {
    pub(crate) fn new() -> Self {
        Switch(watch::Sender::new(false))
    }

    pub(crate) fn crash(&self) {
        self.0.send_replace(true);
    }
}

/// The listening front of a crashing persona; stops relaying when dropped.
pub(crate) struct Front {
    addr: SocketAddr,
    accepting: JoinHandle<()>,
}

impl Front {
    /// Relays connections to `listener` to `backend` until `switch` crashes.
    pub(crate) fn start(listener: TcpListener, backend: SocketAddr, switch: &Switch) -> Self {
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let down = switch.0.subscribe();
        let accepting = tokio::spawn(accept(listener, backend, down));
        Front { addr, accepting }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

/// Accepts until the crash, then returns, which closes the listener: later
/// connections are refused.
async fn accept(listener: TcpListener, backend: SocketAddr, down: watch::Receiver<bool>) {
    let mut crashed = down.clone();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((client, _)) = accepted {
                    tokio::spawn(relay(client, backend, down.clone()));
                }
            }
            _ = crashed.wait_for(|crashed| *crashed) => return,
        }
    }
}

/// Relays one connection both ways until either side closes it or the server crashes,
/// which resets it.
async fn relay(mut client: TcpStream, backend: SocketAddr, mut down: watch::Receiver<bool>) {
    let Ok(mut server) = TcpStream::connect(backend).await else {
        return;
    };
    tokio::select! {
        _ = tokio::io::copy_bidirectional(&mut client, &mut server) => {}
        _ = down.wait_for(|crashed| *crashed) => {
            let _ = client.set_zero_linger();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Bytes pass both ways before the crash; after it the open connection is reset
    /// and a new one refused, both at once.
    #[tokio::test]
    async fn a_crash_resets_the_open_connection_and_refuses_new_ones() {
        let backend = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let backend_addr = backend.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = backend.accept().await {
                tokio::spawn(async move {
                    let mut buf = [0u8; 4];
                    while let Ok(n @ 1..) = socket.read(&mut buf).await {
                        let _ = socket.write_all(&buf[..n]).await;
                    }
                });
            }
        });
        let switch = Switch::new();
        let front = Front::start(
            TcpListener::bind("127.0.0.1:0").await.unwrap(),
            backend_addr,
            &switch,
        );
        let mut client = TcpStream::connect(front.addr()).await.unwrap();
        client.write_all(b"ping").await.unwrap();
        let mut echo = [0u8; 4];
        client.read_exact(&mut echo).await.unwrap();
        assert_eq!(&echo, b"ping");

        switch.crash();
        let mut rest = Vec::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            client.read_to_end(&mut rest),
        )
        .await
        .expect("the open connection ends at once");
        assert!(read.is_err() || rest.is_empty(), "{read:?} {rest:?}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(TcpStream::connect(front.addr()).await.is_err());
    }
}
