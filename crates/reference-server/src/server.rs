//! The axum adapter: every request, whatever its path, goes to [`Engine::handle`].
//!
//! The adapter only moves bytes. It buffers the body up to `Config::max_body_bytes`
//! (413 beyond), runs the engine on the blocking pool so a large batch does not stall the
//! runtime, and copies the engine's status, headers and body into the response.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};
use axum::response::Response;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::config::Config;
use crate::protocol::{ApiError, Engine, HttpRequest, HttpResponse};

/// A router that answers every request with `engine`.
pub fn router(engine: Arc<Engine>) -> Router {
    let limit = engine.largest_body();
    Router::new()
        .fallback(serve_request)
        .layer(DefaultBodyLimit::max(limit))
        .with_state(engine)
}

/// Binds `addr` (port 0 picks a free port) and serves `config` on a spawned task of the
/// current tokio runtime until [`RunningServer::shutdown`] or drop.
pub async fn spawn(config: Config, addr: SocketAddr) -> io::Result<RunningServer> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let app = router(Arc::new(Engine::new(config)));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                // Either a shutdown request or the handle being dropped ends the server.
                let _ = stopped.await;
            })
            .await
    });
    Ok(RunningServer {
        addr,
        stop: Some(stop),
        task: Some(task),
    })
}

/// A server started by [`spawn`]. Dropping it stops accepting connections; in-flight
/// requests finish in the background.
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<io::Result<()>>>,
}

impl RunningServer {
    /// The OpenAI-style base URL, e.g. `http://127.0.0.1:8000/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound address, with the real port when 0 was asked for.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting connections and waits for in-flight requests to finish.
    pub async fn shutdown(mut self) -> io::Result<()> {
        self.signal_stop();
        match self.task.take() {
            Some(task) => task.await.map_err(io::Error::other)?,
            None => Ok(()),
        }
    }

    fn signal_stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            // The server may already have ended; then there is nobody left to tell.
            let _ = stop.send(());
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.signal_stop();
    }
}

async fn serve_request(
    State(engine): State<Arc<Engine>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let response = match body {
        Ok(body) => handle_blocking(engine, method, uri, headers, body).await,
        Err(rejection) => HttpResponse::from(body_error(&rejection, &engine)),
    };
    to_axum(response)
}

/// Runs the CPU-bound engine off the async workers; a panic there is a server bug and is
/// answered as one (500), never as a dropped connection.
async fn handle_blocking(
    engine: Arc<Engine>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> HttpResponse {
    let work = tokio::task::spawn_blocking(move || {
        engine.handle(&HttpRequest {
            method: method.as_str(),
            path: uri.path(),
            authorization: header_str(&headers, &AUTHORIZATION),
            content_type: header_str(&headers, &CONTENT_TYPE),
            body: &body,
        })
    });
    work.await
        .unwrap_or_else(|e| ApiError::Internal(e.to_string()).into())
}

/// A header's value, treating one that is not UTF-8 as absent (so it fails like a missing
/// one: 401 or 415).
fn header_str<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

fn body_error(rejection: &BytesRejection, engine: &Engine) -> ApiError {
    if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge {
            limit: engine.largest_body(),
        }
    } else {
        ApiError::UnreadableBody(rejection.body_text())
    }
}

/// Copies an engine response into axum's type. A header an altering wrapper made invalid
/// is dropped rather than turning the whole answer into an error.
fn to_axum(response: HttpResponse) -> Response {
    let mut out = Response::new(Body::from(response.body));
    *out.status_mut() =
        StatusCode::from_u16(response.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let content_type = ("content-type", response.content_type.to_owned());
    for (name, value) in std::iter::once(content_type).chain(response.headers) {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::try_from(value),
        ) {
            out.headers_mut().append(name, value);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    fn loopback() -> SocketAddr {
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0))
    }

    /// Sends one raw HTTP/1.1 request and returns the whole response as text.
    async fn exchange(addr: SocketAddr, head: &str, body: &[u8]) -> String {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let request = format!(
            "{head}\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        stream
            .write_all(request.as_bytes())
            .await
            .expect("write head");
        stream.write_all(body).await.expect("write body");
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.expect("read");
        String::from_utf8(response).expect("utf-8 response")
    }

    fn status_of(response: &str) -> &str {
        response.split(' ').nth(1).unwrap_or_default()
    }

    fn has_header(response: &str, header: &str) -> bool {
        let head = response.split("\r\n\r\n").next().unwrap_or_default();
        head.lines().any(|line| line.eq_ignore_ascii_case(header))
    }

    #[tokio::test]
    async fn serves_embeddings_over_real_http() {
        let server = spawn(Config::default(), loopback()).await.expect("spawn");
        let body = br#"{"model":"embedcheck-reference","input":["hello","world"]}"#;
        let response = exchange(
            server.addr(),
            "POST /v1/embeddings HTTP/1.1\r\nContent-Type: application/json",
            body,
        )
        .await;
        assert_eq!(status_of(&response), "200", "{response}");
        assert!(
            has_header(&response, "content-type: application/json"),
            "{response}"
        );
        assert!(response.contains(r#""object":"list""#), "{response}");
        assert!(response.contains(r#""index":1"#), "{response}");
        server.shutdown().await.expect("clean shutdown");
    }

    #[tokio::test]
    async fn errors_carry_status_headers_and_json_over_real_http() {
        let server = spawn(Config::default(), loopback()).await.expect("spawn");
        let response = exchange(server.addr(), "GET /v1/embeddings?x=1 HTTP/1.1", b"").await;
        assert_eq!(status_of(&response), "405", "{response}");
        assert!(has_header(&response, "allow: POST"), "{response}");
        assert!(
            response.contains(r#""type":"invalid_request_error""#),
            "{response}"
        );
        server.shutdown().await.expect("clean shutdown");
    }

    #[tokio::test]
    async fn bodies_over_the_limit_are_413_over_real_http() {
        let config = Config {
            max_body_bytes: 32,
            ..Config::default()
        };
        let server = spawn(config, loopback()).await.expect("spawn");
        let body = vec![b' '; 1024];
        let response = exchange(
            server.addr(),
            "POST /v1/embeddings HTTP/1.1\r\nContent-Type: application/json",
            &body,
        )
        .await;
        assert_eq!(status_of(&response), "413", "{response}");
        assert!(response.contains(r#""error""#), "{response}");
        server.shutdown().await.expect("clean shutdown");
    }

    #[tokio::test]
    async fn the_base_url_names_the_bound_port() {
        let server = spawn(Config::default(), loopback()).await.expect("spawn");
        let port = server.addr().port();
        assert_ne!(port, 0);
        assert_eq!(server.base_url(), format!("http://127.0.0.1:{port}/v1"));
    }

    #[tokio::test]
    async fn dropping_the_handle_stops_the_server() {
        let server = spawn(Config::default(), loopback()).await.expect("spawn");
        let addr = server.addr();
        drop(server);
        let refused = async {
            loop {
                if TcpStream::connect(addr).await.is_err() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(5), refused)
            .await
            .expect("the listener closes after drop");
    }
}
