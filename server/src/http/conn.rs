//! Connections: how many at once, and how long a client may take.
//!
//! `axum::serve` has no header-read, body or idle timeout and no cap on
//! connections, so a client that sends half a request (slowloris), or a
//! few thousand that open a connection and say nothing, hold the server's
//! sockets and tasks for as long as they like. This accept loop serves
//! the same router the same way (HTTP/1 and HTTP/2, `TCP_NODELAY`, a
//! graceful shutdown) and adds, per connection:
//!
//! - **headers**: a request's headers must be complete within
//!   `header_timeout` of the connection opening or, on a kept-alive
//!   connection, of the request's first byte;
//! - **idle**: a kept-alive connection with no request in flight and no
//!   bytes either way for `idle_timeout` is closed;
//! - **body**: a request body must arrive whole within `body_timeout` of
//!   the handler starting to read it ([`body_deadline`]); one announced
//!   larger than the limit is refused with 413 before any of it is read
//!   ([`refuse_oversized`]);
//! - **count**: at most `max_connections` are served at once; further
//!   ones wait in the kernel's accept queue.
//!
//! Long polls and event streams are not cut short: a request in flight is
//! never "idle" (a claim waits at most its own `wait_seconds`, ≤ 60 s), and
//! an event stream writes a keep-alive comment more often than the idle
//! timeout ([`ConnectionLimits::sse_keep_alive`]).

use super::error::HttpError;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

/// The bounds every connection is served within (`serve --header-timeout-seconds` …).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        let d = crate::config::ServeArgs::default();
        ConnectionLimits::from_seconds(
            d.header_timeout_seconds,
            d.body_timeout_seconds,
            d.idle_timeout_seconds,
            d.max_connections as usize,
        )
    }
}

impl ConnectionLimits {
    pub fn from_seconds(header: u64, body: u64, idle: u64, max_connections: usize) -> Self {
        ConnectionLimits {
            header_timeout: Duration::from_secs(header),
            body_timeout: Duration::from_secs(body),
            idle_timeout: Duration::from_secs(idle),
            max_connections,
        }
    }

    /// How often an event stream writes a keep-alive comment: every 15 s
    /// (what proxies expect), or often enough that the idle timeout never
    /// closes a stream that is waiting for events.
    pub fn sse_keep_alive(&self) -> Duration {
        Duration::from_secs(15)
            .min(self.idle_timeout / 3)
            .max(Duration::from_millis(100))
    }

    /// How often a connection's bounds are checked: a fraction of the
    /// shortest, so a connection is closed at most a quarter late.
    fn tick(&self) -> Duration {
        (self.header_timeout.min(self.idle_timeout) / 4)
            .clamp(Duration::from_millis(20), Duration::from_secs(1))
    }
}

/// What one connection did, and when (milliseconds since it opened).
struct Activity {
    opened: tokio::time::Instant,
    /// The last byte read or written.
    last_io: AtomicU64,
    /// Since when a request's headers are awaited, plus one (0: none are,
    /// the connection is idle between requests).
    head_since: AtomicU64,
    /// Requests whose handler has not answered yet.
    in_flight: AtomicUsize,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            opened: tokio::time::Instant::now(),
            last_io: AtomicU64::new(0),
            // A new connection owes its first request's headers at once.
            head_since: AtomicU64::new(1),
            in_flight: AtomicUsize::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        self.opened.elapsed().as_millis() as u64
    }

    fn read(&self) {
        let now = self.now_ms();
        self.last_io.store(now, Ordering::Relaxed);
        // The first byte after an idle pause starts the next request's
        // header clock.
        if self.in_flight.load(Ordering::Relaxed) == 0 {
            let _ =
                self.head_since
                    .compare_exchange(0, now + 1, Ordering::Relaxed, Ordering::Relaxed);
        }
    }

    fn wrote(&self) {
        self.last_io.store(self.now_ms(), Ordering::Relaxed);
    }

    /// A request's headers were read: its handler runs.
    fn begin(self: &Arc<Self>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.head_since.store(0, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// Why the connection should be closed now, if it should.
    fn expired(&self, limits: &ConnectionLimits) -> Option<&'static str> {
        if self.in_flight.load(Ordering::Relaxed) > 0 {
            return None;
        }
        let now = self.now_ms();
        let head = self.head_since.load(Ordering::Relaxed);
        if head != 0 && now.saturating_sub(head - 1) >= limits.header_timeout.as_millis() as u64 {
            return Some("a request's headers did not arrive in time");
        }
        let idle = now.saturating_sub(self.last_io.load(Ordering::Relaxed));
        (idle >= limits.idle_timeout.as_millis() as u64).then_some("idle")
    }
}

/// One request in flight; it ends when the handler has answered.
struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        // The idle clock starts when the answer does.
        self.0.wrote();
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A TCP stream that tells its [`Activity`] about every byte.
struct Watched {
    tcp: TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.tcp).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.activity.read();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.tcp).poll_write(cx, buf);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.wrote();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.tcp).poll_write_vectored(cx, bufs);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.wrote();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.tcp.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.tcp).poll_shutdown(cx)
    }
}

/// Serves `router` on `listener` within `limits` until `stop` is
/// cancelled; then stops accepting, lets every connection finish its
/// requests (graceful shutdown) and returns when all have closed.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // Every connection task holds a receiver; the sender's `closed()`
    // resolves when the last one has ended.
    let (open_tx, open_rx) = tokio::sync::watch::channel(());
    loop {
        // A permit first: at the cap, new connections wait in the
        // kernel's queue instead of being accepted and starved.
        let permit = tokio::select! {
            p = permits.clone().acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
            _ = stop.cancelled() => break,
        };
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of file descriptors, say: wait a little rather
                    // than spin (what axum::serve does too).
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = stop.cancelled() => break,
        };
        // Without TCP_NODELAY a response written in more than one piece
        // (a streamed page, every event of an event stream) waits on
        // Nagle's algorithm for the client's delayed ACK: 40 ms per reused
        // connection on Linux (a profile page took 44 ms instead of 3).
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY could not be set");
        }
        let (router, stop, open) = (router.clone(), stop.clone(), open_rx.clone());
        tokio::spawn(async move {
            connection(tcp, router, limits, stop).await;
            drop(permit);
            drop(open);
        });
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
    Ok(())
}

/// Serves one connection until the client closes it, a bound is passed,
/// or (after `stop`) its requests in flight are answered.
async fn connection(
    tcp: TcpStream,
    router: Router,
    limits: ConnectionLimits,
    stop: CancellationToken,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Watched {
        tcp,
        activity: activity.clone(),
    });
    let watched = activity.clone();
    let service = tower::service_fn(move |req: Request<hyper::body::Incoming>| {
        let in_flight = watched.begin();
        let router = router.clone();
        async move {
            let answer = router.oneshot(req.map(Body::new)).await;
            drop(in_flight);
            answer
        }
    });
    let builder = Builder::new(TokioExecutor::new());
    let conn = builder.serve_connection_with_upgrades(io, TowerToHyperService::new(service));
    tokio::pin!(conn);
    let watchdog = async {
        loop {
            tokio::time::sleep(limits.tick()).await;
            if let Some(why) = activity.expired(&limits) {
                return why;
            }
        }
    };
    tokio::pin!(watchdog);
    let mut stopping = false;
    loop {
        tokio::select! {
            served = conn.as_mut() => {
                if let Err(e) = served {
                    tracing::trace!(error = %e, "connection ended with an error");
                }
                return;
            }
            _ = stop.cancelled(), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
            why = &mut watchdog => {
                // No request is in flight (the watchdog says so only
                // then): dropping the connection loses no answer.
                tracing::debug!(why, "closing a connection");
                return;
            }
        }
    }
}

/// Answers 413 at once for a request whose `Content-Length` is over the
/// limit, before anything (the credential check included) reads or waits
/// on it.
pub async fn refuse_oversized(State(max): State<usize>, req: Request, next: Next) -> Response {
    let announced = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if announced.is_some_and(|n| n > max as u64) {
        return HttpError::TooLarge(max).into_response();
    }
    next.run(req).await
}

/// Gives a request's body `timeout` to arrive whole, from the first time
/// it is read; after that reading it fails (the extractor answers 400
/// saying so) and the connection is closed with the answer.
pub async fn body_deadline(State(timeout): State<Duration>, req: Request, next: Next) -> Response {
    next.run(req.map(|body| Body::new(Deadline::new(body, timeout))))
        .await
}

/// A body that fails once its deadline has passed.
struct Deadline {
    body: Body,
    timeout: Duration,
    /// Set at the first read.
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Deadline {
    fn new(body: Body, timeout: Duration) -> Deadline {
        Deadline {
            body,
            timeout,
            sleep: None,
        }
    }
}

/// The body did not arrive in time.
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive within {0} s")]
struct BodyTimedOut(u64);

impl http_body::Body for Deadline {
    type Data = axum::body::Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        let timeout = self.timeout;
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(BodyTimedOut(timeout.as_secs()).into())));
        }
        Pin::new(&mut self.body)
            .poll_frame(cx)
            .map(|f| f.map(|r| r.map_err(Into::into)))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
