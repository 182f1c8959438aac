//! The HTTP server every persona and every scripted test server runs on: axum on
//! 127.0.0.1, every request, whatever its method and path, answered by one function.
//!
//! A function from [`Request`] to [`Response`] is all a test server needs. axum is the
//! reference server's own stack, so the self-tests build no second HTTP server: a
//! mock-server crate turned features on in the HTTP crates the engine shares, and a
//! `cargo test --workspace` rebuilt the engine and its client for them.
//!
//! ```no_run
//! # async fn example() {
//! use personas::http::{Response, Server};
//! let server = Server::start(|request| match request.method.as_str() {
//!     "POST" => Response::new(500).text("boom"),
//!     _ => Response::new(404),
//! })
//! .await;
//! println!("audit {}/v1", server.uri());
//! # }
//! ```

use axum::body::Body;
use axum::serve::ListenerExt;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;

/// A request as the server received it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// The query string without its `?`, if the URL had one.
    pub query: Option<String>,
    /// Every header whose value is text, names in lower case, in the order sent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    /// The first value of the header `name` (lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An answer: status, headers and body, sent after `delay` if one is set.
#[derive(Clone, Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub delay: Option<Duration>,
}

impl Response {
    /// An empty answer with `status`.
    pub fn new(status: u16) -> Self {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: None,
        }
    }

    /// `body` as `content_type`.
    pub fn body(self, body: impl Into<Vec<u8>>, content_type: &str) -> Self {
        Response {
            body: body.into(),
            ..self.header("content-type", content_type)
        }
    }

    /// `body` as JSON.
    pub fn json(self, body: &serde_json::Value) -> Self {
        self.body(body.to_string(), "application/json")
    }

    /// `text` as plain text.
    pub fn text(self, text: &str) -> Self {
        self.body(text, "text/plain")
    }

    /// Sets the header `name: value`, replacing any of that name.
    pub fn header(mut self, name: &str, value: impl Into<String>) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    /// Sends the answer only after `delay`.
    pub fn delay(self, delay: Duration) -> Self {
        Response {
            delay: Some(delay),
            ..self
        }
    }
}

/// What answers each request.
type Respond = dyn Fn(&Request) -> Response + Send + Sync;

/// A running server; it stops listening when dropped.
pub struct Server {
    addr: SocketAddr,
    received: Option<Arc<Mutex<Vec<Request>>>>,
    /// Ends the server's thread when sent, or when dropped.
    stop: Option<oneshot::Sender<()>>,
}

impl Server {
    /// Serves `respond` on a free port of 127.0.0.1.
    pub async fn start(respond: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Self {
        Self::start_on(free_port(), respond).await
    }

    /// [`Server::start`], keeping every request it receives for [`Server::received`].
    pub async fn start_recording(
        respond: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> Self {
        Self::serve(free_port(), Arc::new(respond), true)
    }

    /// Serves `respond` on `listener`.
    pub async fn start_on(
        listener: std::net::TcpListener,
        respond: impl Fn(&Request) -> Response + Send + Sync + 'static,
    ) -> Self {
        Self::serve(listener, Arc::new(respond), false)
    }

    /// Serves on a thread and runtime of the server's own, as a real server is its own
    /// process: an audit on a one-thread test runtime then runs beside its server,
    /// not in turns with it.
    fn serve(listener: std::net::TcpListener, respond: Arc<Respond>, record: bool) -> Self {
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        listener
            .set_nonblocking(true)
            .expect("a listener can be made non-blocking");
        let received = record.then(Arc::default);
        let kept = received.clone();
        let app = axum::Router::new().fallback(move |request: axum::extract::Request| {
            let (respond, kept) = (respond.clone(), kept.clone());
            async move { answer(request, &*respond, kept.as_deref()).await }
        });
        let (stop, stopped) = oneshot::channel::<()>();
        std::thread::Builder::new()
            .name(format!("server {addr}"))
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a runtime for the server");
                runtime.block_on(async move {
                    let listener = tokio::net::TcpListener::from_std(listener)
                        .expect("a listener for the runtime");
                    // Without TCP_NODELAY, an answer written in two segments waits for
                    // the client's delayed ACK: tens of milliseconds on every request.
                    let listener = listener.tap_io(|tcp| {
                        let _ = tcp.set_nodelay(true);
                    });
                    tokio::select! {
                        _ = axum::serve(listener, app) => {}
                        _ = stopped => {}
                    }
                });
                // Dropping the runtime ends every connection, answers held back
                // included.
            })
            .expect("a thread for the server");
        Server {
            addr,
            received,
            stop: Some(stop),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn uri(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in order; empty unless started with
    /// [`Server::start_recording`].
    pub fn received(&self) -> Vec<Request> {
        self.received
            .as_ref()
            .map(|r| r.lock().unwrap_or_else(|e| e.into_inner()).clone())
            .unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

fn free_port() -> std::net::TcpListener {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a free port on 127.0.0.1")
}

/// Reads `request` whole, lets `respond` answer it and sends the answer after its
/// delay.
async fn answer(
    request: axum::extract::Request,
    respond: &Respond,
    kept: Option<&Mutex<Vec<Request>>>,
) -> axum::response::Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .map(|b| b.to_vec())
        .unwrap_or_default();
    let request = Request {
        method: parts.method.to_string(),
        path: parts.uri.path().to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers: parts
            .headers
            .iter()
            .filter_map(|(name, value)| {
                Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
            })
            .collect(),
        body,
    };
    let response = respond(&request);
    if let Some(kept) = kept {
        kept.lock().unwrap_or_else(|e| e.into_inner()).push(request);
    }
    if let Some(delay) = response.delay {
        tokio::time::sleep(delay).await;
    }
    let mut built = axum::http::Response::builder().status(response.status);
    for (name, value) in &response.headers {
        built = built.header(name, value);
    }
    built.body(Body::from(response.body)).unwrap_or_else(|e| {
        let mut broken = axum::response::Response::new(Body::from(e.to_string()));
        *broken.status_mut() = axum::http::StatusCode::INTERNAL_SERVER_ERROR;
        broken
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Method, path, query, headers and body reach the function; its status, headers,
    /// body and delay reach the client; a recording server keeps the request.
    #[tokio::test]
    async fn a_request_and_its_answer_pass_whole() {
        let server = Server::start_recording(|request| {
            Response::new(418)
                .header("x-seen", format!("{} {}", request.method, request.path))
                .body(request.body.clone(), "application/octet-stream")
                .delay(Duration::from_millis(50))
        })
        .await;
        let _ = rustls::crypto::ring::default_provider().install_default();
        let started = std::time::Instant::now();
        let answer = reqwest::Client::new()
            .post(format!("{}/v1/embeddings?a=1", server.uri()))
            .header("Authorization", "Bearer k")
            .body("hello")
            .send()
            .await
            .expect("an answer");
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert_eq!(answer.status(), 418);
        assert_eq!(answer.headers()["x-seen"], "POST /v1/embeddings");
        assert_eq!(answer.headers()["content-type"], "application/octet-stream");
        assert_eq!(answer.bytes().await.unwrap().as_ref(), b"hello");
        let received = server.received();
        assert_eq!(received.len(), 1);
        assert_eq!(received[0].query.as_deref(), Some("a=1"));
        assert_eq!(received[0].header("authorization"), Some("Bearer k"));
    }
}
