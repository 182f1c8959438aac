//! A server on Python's `http.server` with HTTP/1.1 keep-alive, as small published
//! embeddings servers are written, with two habits of such handlers.
//!
//! **A 404 that leaves the body unread.** `BaseHTTPRequestHandler` reads only the request line and headers; the handler reads
//! the body (`rfile.read(content_length)`) where it serves the route, and a 404 branch
//! written before that leaves the body on the connection. With `protocol_version =
//! "HTTP/1.1"` the connection stays open, and the next request's line is read from the
//! left-over body: `send_error(400, "Bad request syntax (...)")`, an HTML page, and
//! the connection closed. A published embeddings server does exactly this; RFC 9112
//! §9.3 says a server must read the body or close the connection.
//!
//! **A handler that raises.** An exception in `do_POST` ends the connection without an
//! answer (`socketserver` prints the traceback and closes the socket), while the
//! server goes on answering every other request: the persona's `None`.
//!
//! Every other request is answered by the persona, as on [`crate::http::Server`]. One
//! thread per connection, as `ThreadingHTTPServer`.

use crate::http::{Request, Response};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What answers each request; `None` where the handler raises.
pub(crate) type Respond = dyn Fn(&Request) -> Option<Response> + Send + Sync;

/// How the handler treats a request it refuses.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Habits {
    /// A 404 is answered before the body is read, which stays on the connection.
    pub(crate) unread_404_bodies: bool,
}

/// A running server; it stops accepting when dropped.
pub(crate) struct Server {
    addr: SocketAddr,
    stopped: Arc<AtomicBool>,
}

impl Server {
    /// Serves `respond` on `listener` with `habits` until dropped.
    pub(crate) fn start(listener: TcpListener, respond: Arc<Respond>, habits: Habits) -> Self {
        let addr = listener
            .local_addr()
            .expect("a bound listener has an address");
        let stopped = Arc::new(AtomicBool::new(false));
        let stop = stopped.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let respond = respond.clone();
                if let Ok(stream) = stream {
                    std::thread::spawn(move || serve(stream, &*respond, habits));
                }
            }
        });
        Server { addr, stopped }
    }

    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::Relaxed);
        // Wakes the accepting thread so that it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

/// Serves one connection until the client closes it, a request line is garbage or the
/// handler raises.
fn serve(stream: TcpStream, respond: &Respond, habits: Habits) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(60)));
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    // A body the handler did not read, which the next request line starts with.
    let mut unread: Vec<u8> = Vec::new();
    loop {
        let Some(line) = read_line(&mut reader, &mut unread) else {
            return;
        };
        let shown: String = String::from_utf8_lossy(&line).chars().take(80).collect();
        let Some((method, target)) = request_line(&line) else {
            let message = format!("Bad request syntax ({shown:?})");
            let _ = writer.write_all(&python_error(400, &message));
            return;
        };
        // `do_<METHOD>` is looked up on the handler: a method read from a left-over
        // body has none.
        if !method.bytes().all(|b| b.is_ascii_uppercase()) {
            let message = format!("Unsupported method ({method:?})");
            let _ = writer.write_all(&python_error(501, &message));
            return;
        }
        let Some(headers) = read_headers(&mut reader) else {
            return;
        };
        let length = headers
            .iter()
            .find(|(n, _)| n == "content-length")
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let (path, query) = match target.split_once('?') {
            Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
            None => (target, None),
        };
        let request = Request {
            method,
            path,
            query,
            headers,
            body,
        };
        let Some(response) = respond(&request) else {
            return;
        };
        if response.status == 404 && habits.unread_404_bodies {
            unread = request.body;
        }
        if let Some(delay) = response.delay {
            std::thread::sleep(delay);
        }
        if writer.write_all(&encode(&response)).is_err() {
            return;
        }
    }
}

/// The next line, starting with what a handler left unread.
fn read_line(reader: &mut BufReader<TcpStream>, unread: &mut Vec<u8>) -> Option<Vec<u8>> {
    let mut line = std::mem::take(unread);
    match reader.read_until(b'\n', &mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

/// `METHOD TARGET HTTP/1.x`, as `parse_request` takes it: three words.
fn request_line(line: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(line).ok()?.trim_end();
    let words: Vec<&str> = text.split(' ').collect();
    match words.as_slice() {
        [method, target, version] if version.starts_with("HTTP/") => {
            Some(((*method).to_owned(), (*target).to_owned()))
        }
        _ => None,
    }
}

fn read_headers(reader: &mut BufReader<TcpStream>) -> Option<Vec<(String, String)>> {
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            return Some(headers);
        }
        if let Some((name, value)) = line.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
}

/// `send_error(status, message)`: Python's HTML error page, and the connection
/// closed.
fn python_error(status: u16, message: &str) -> Vec<u8> {
    let page = format!(
        "<!DOCTYPE HTML>\n<html lang=\"en\">\n    <head>\n        <meta charset=\"utf-8\">\n        <title>Error response</title>\n    </head>\n    <body>\n        <h1>Error response</h1>\n        <p>Error code: {status}</p>\n        <p>Message: {message}.</p>\n        <p>Error code explanation: {status}.</p>\n    </body>\n</html>\n"
    );
    let head = format!(
        "HTTP/1.1 {status} Error\r\nConnection: close\r\nContent-Type: text/html;charset=utf-8\r\nContent-Length: {}\r\n\r\n",
        page.len()
    );
    [head.into_bytes(), page.into_bytes()].concat()
}

fn encode(response: &Response) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {} Answer\r\n", response.status);
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", response.body.len()));
    [head.into_bytes(), response.body.clone()].concat()
}
