//! The listener's front desk: a thread and runtime of their own that accept every connection
//! and read its request line. `POST /api/estop` is answered right there; every other
//! connection is handed to the daemon's runtime, which may be busy with a hundred live clients
//! and a sweep of a hundred thousand runs: the e-stop never waits for it.
//!
//! ```text
//!  TcpListener ── front thread (real-time priority, current-thread runtime)
//!                   ├─ "POST /api/estop" ─► e-stop router (guard, handler) ─► Interlock
//!                   └─ anything else ─── mpsc<TcpStream> ─► Handoff (axum::serve::Listener)
//!                                                          on the daemon's runtime
//! ```
//!
//! An e-stop answered here closes its connection (`Connection: close`), so the client's next
//! request comes in through the front again. An e-stop sent on a connection that already
//! carried other requests (a browser's keep-alive) is served by the daemon's runtime, with the
//! same handler.

use super::guard::ConnAddrs;
use axum::Router;
use axum::extract::ConnectInfo;
use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

/// How long the front waits for a request line before handing the connection on unread.
const REQUEST_LINE_WAIT: Duration = Duration::from_secs(2);

/// Connections waiting for the daemon's runtime to take them.
const HANDOFF_QUEUE: usize = 1024;

/// What identifies an e-stop from its first bytes (`/api/estop/reset` is not one).
const ESTOP_LINES: [&[u8]; 2] = [b"POST /api/estop ", b"POST /api/estop?"];

/// A connection whose first bytes the front has already read: they are read again first.
#[derive(Debug)]
pub struct Prefixed {
    prefix: Vec<u8>,
    at: usize,
    stream: TcpStream,
}

impl Prefixed {
    /// The server's side of the connection.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.stream.local_addr()
    }

    /// The client's side of the connection.
    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.stream.peer_addr()
    }
}

impl AsyncRead for Prefixed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.at < self.prefix.len() {
            let n = (self.prefix.len() - self.at).min(buf.remaining());
            let at = self.at;
            buf.put_slice(&self.prefix[at..at + n]);
            self.at += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Prefixed {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// A connection passed on: the socket (out of the front's runtime) and the bytes read from it.
type Passed = (std::net::TcpStream, Vec<u8>, SocketAddr);

/// The connections the front passes on: the daemon's runtime accepts from here.
#[derive(Debug)]
pub struct Handoff {
    connections: mpsc::Receiver<Passed>,
    local: SocketAddr,
}

impl axum::serve::Listener for Handoff {
    type Io = Prefixed;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Prefixed, SocketAddr) {
        loop {
            let Some((stream, prefix, peer)) = self.connections.recv().await else {
                // The front has stopped: no more connections, ever.
                return std::future::pending().await;
            };
            match TcpStream::from_std(stream) {
                Ok(stream) => {
                    let io = Prefixed {
                        prefix,
                        at: 0,
                        stream,
                    };
                    return (io, peer);
                }
                Err(e) => tracing::warn!("a connection from {peer} was lost in handoff: {e}"),
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        Ok(self.local)
    }
}

impl Connected<IncomingStream<'_, Handoff>> for ConnAddrs {
    fn connect_info(stream: IncomingStream<'_, Handoff>) -> Self {
        let peer = *stream.remote_addr();
        ConnAddrs {
            local: stream.io().local_addr().unwrap_or(peer),
            peer,
        }
    }
}

/// Starts the front on `listener` (taken out of its runtime): e-stops go to `estop`, the rest
/// to the returned [`Handoff`]. The front stops when `shutdown` turns true.
pub fn start(
    listener: std::net::TcpListener,
    estop: Router,
    priority: u8,
    shutdown: watch::Receiver<bool>,
) -> std::io::Result<Handoff> {
    let local = listener.local_addr()?;
    listener.set_nonblocking(true)?;
    let (tx, rx) = mpsc::channel(HANDOFF_QUEUE);
    bench_daemon::control::spawn_with_runtime("http-front", priority, move |runtime| {
        runtime.block_on(serve(listener, estop, tx, shutdown));
    })?;
    Ok(Handoff {
        connections: rx,
        local,
    })
}

async fn serve(
    listener: std::net::TcpListener,
    estop: Router,
    handoff: mpsc::Sender<Passed>,
    mut shutdown: watch::Receiver<bool>,
) {
    let listener = match TcpListener::from_std(listener) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!("the HTTP front cannot listen: {e}");
            return;
        }
    };
    loop {
        let (stream, peer) = tokio::select! {
            _ = shutdown.wait_for(|stop| *stop) => return,
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: pause rather than spin.
                    tracing::warn!("accept: {e}");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        // Answers leave as soon as they are written (a request is a few small writes; Nagle
        // would hold the last of them for the client's acknowledgement).
        let _ = stream.set_nodelay(true);
        let (estop, handoff) = (estop.clone(), handoff.clone());
        tokio::spawn(async move {
            let (estop_line, io) = first_bytes(stream).await;
            if estop_line {
                serve_estop(io, estop).await;
            } else if let Ok(stream) = io.stream.into_std() {
                let _ = handoff.send((stream, io.prefix, peer)).await;
            }
        });
    }
}

/// Reads the connection's first bytes, up to what tells an e-stop from anything else (or
/// until the request line's wait runs out); returns whether it is one, and the connection
/// with those bytes to be read again.
async fn first_bytes(mut stream: TcpStream) -> (bool, Prefixed) {
    let want = ESTOP_LINES[0].len();
    let mut prefix = Vec::with_capacity(want);
    let _ = tokio::time::timeout(REQUEST_LINE_WAIT, async {
        let mut buf = [0u8; 16];
        while prefix.len() < want && ESTOP_LINES.iter().any(|l| l.starts_with(&prefix)) {
            match stream.read(&mut buf[..want - prefix.len()]).await {
                Ok(0) | Err(_) => return,
                Ok(n) => prefix.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    let estop = ESTOP_LINES.contains(&prefix.as_slice());
    let io = Prefixed {
        prefix,
        at: 0,
        stream,
    };
    (estop, io)
}

/// Serves one e-stop connection on the front's own runtime, then closes it.
async fn serve_estop(stream: Prefixed, estop: Router) {
    let addrs = stream.local_addr().ok().zip(stream.peer_addr().ok());
    let app = match addrs {
        Some((local, peer)) => estop.layer(axum::Extension(ConnectInfo(ConnAddrs { local, peer }))),
        None => estop,
    };
    let service = hyper_util::service::TowerToHyperService::new(app);
    let served = hyper::server::conn::http1::Builder::new()
        .keep_alive(false)
        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
        .await;
    if let Err(e) = served {
        tracing::debug!("e-stop connection: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::ESTOP_LINES;

    #[test]
    fn only_the_estop_itself_takes_the_front_lane() {
        let is = |line: &[u8]| ESTOP_LINES.iter().any(|l| line.starts_with(l));
        assert!(is(b"POST /api/estop HTTP/1.1\r\n"));
        assert!(is(b"POST /api/estop?x=1 HTTP/1.1\r\n"));
        assert!(!is(b"POST /api/estop/reset HTTP/1.1\r\n"));
        assert!(!is(b"GET /api/estop HTTP/1.1\r\n"));
        assert!(!is(b"POST /api/estopx HTTP/1.1\r\n"));
    }
}
