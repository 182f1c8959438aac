//! Sends one probe and reads a bounded answer.
//!
//! Every request has a total timeout (connect, send and body), never follows
//! redirects (a redirect could carry the key to another host, and is itself a
//! finding), bypasses proxies, and reads at most a per-probe number of body bytes,
//! so a hostile or broken server can neither hang nor exhaust the suite.

use super::curl;
use super::excerpt;
use super::probe::Probe;
use super::reply::Reply;
use super::secret::Secret;
use super::target::Target;
use crate::http::Exchange;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why no complete answer arrived.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum TransportError {
    #[error("no answer within {0} s (request timeout)")]
    Timeout(u64),
    #[error("could not connect: {0}")]
    Connect(String),
    #[error("connection failed mid-exchange: {0}")]
    Broken(String),
    #[error("response body exceeds the {0}-byte limit for this probe")]
    BodyTooLarge(usize),
}

impl TransportError {
    /// A request that failed while being sent on a pooled connection the server had
    /// already closed (it closes after some error answers): the server never read it,
    /// so sending it once more, on a new connection, is safe.
    fn is_stale_connection(&self) -> bool {
        match self {
            TransportError::Broken(text) => {
                text.contains("SendRequest") && (text.contains("reset") || text.contains("closed"))
            }
            _ => false,
        }
    }
}

/// How long the liveness check waits: a live server answers `GET /models` at once.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// The HTTP client bound to one endpoint and, optionally, one key.
pub struct Transport {
    http: reqwest::Client,
    target: Target,
    key: Option<Secret>,
    timeout: Duration,
}

impl Transport {
    pub fn new(target: Target, key: Option<Secret>, timeout: Duration) -> Self {
        install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout.min(Duration::from_secs(10)))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .user_agent(concat!("embedcheck/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        Transport {
            http,
            target,
            key,
            timeout,
        }
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    pub(crate) fn key(&self) -> Option<&Secret> {
        self.key.as_ref()
    }

    /// Whether the server answers anything at all (any status) to `GET /models`
    /// within a few seconds: the liveness check after a probe got no answer.
    pub(crate) async fn ping(&self) -> bool {
        let mut request = self
            .http
            .get(self.target.models_url().clone())
            .timeout(self.timeout.min(PING_TIMEOUT));
        if let Some(key) = &self.key {
            request = request.bearer_auth(key.expose());
        }
        request.send().await.is_ok()
    }

    /// Sends `probe`, reading at most `max_body` bytes of the answer. On failure the
    /// exchange still comes back, so evidence shows what was sent.
    pub(crate) async fn send(
        &self,
        probe: &Probe,
        max_body: usize,
    ) -> Result<Reply, (TransportError, Exchange)> {
        let started = Instant::now();
        let mut exchange = self.exchange_for(probe);
        let mut outcome = self.exchange_bytes(probe, max_body).await;
        if outcome
            .as_ref()
            .is_err_and(TransportError::is_stale_connection)
        {
            outcome = self.exchange_bytes(probe, max_body).await;
        }
        exchange.millis = started.elapsed().as_millis() as u64;
        match outcome {
            Ok(raw) => Ok(self.reply(raw, exchange)),
            Err(error) => {
                exchange.transport_error = Some(self.scrub(&error.to_string()));
                Err((error, exchange))
            }
        }
    }

    fn exchange_for(&self, probe: &Probe) -> Exchange {
        let url = self.url(probe);
        let payload = probe.payload();
        Exchange {
            method: probe.method.to_string(),
            path: url.path().to_owned(),
            request_body: payload.as_ref().map(|(b, _)| excerpt::of_body(b)),
            status: None,
            response_body: None,
            millis: 0,
            transport_error: None,
            curl: curl::render(
                &probe.method,
                &super::target::Target::shown(url),
                payload.as_ref().map(|(b, ct)| (b.as_slice(), *ct)),
                probe.authenticated && self.key.is_some(),
            ),
        }
    }

    fn url(&self, probe: &Probe) -> &url::Url {
        match probe.resource {
            super::probe::Resource::Embeddings => self.target.embeddings_url(),
            super::probe::Resource::Models => self.target.models_url(),
        }
    }

    async fn exchange_bytes(
        &self,
        probe: &Probe,
        max_body: usize,
    ) -> Result<RawAnswer, TransportError> {
        let mut request = self
            .http
            .request(probe.method.clone(), self.url(probe).clone());
        if let Some((bytes, content_type)) = probe.payload() {
            request = request
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(bytes);
        }
        if let (true, Some(key)) = (probe.authenticated, &self.key) {
            request = request.bearer_auth(key.expose());
        }
        let mut response = request.send().await.map_err(|e| self.classify(&e))?;
        let header = |name: reqwest::header::HeaderName| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let mut raw = RawAnswer {
            status: response.status().as_u16(),
            content_type: header(reqwest::header::CONTENT_TYPE),
            retry_after: header(reqwest::header::RETRY_AFTER),
            retry_after_ms: header(reqwest::header::HeaderName::from_static("retry-after-ms")),
            should_retry: header(reqwest::header::HeaderName::from_static("x-should-retry")),
            body: Vec::new(),
        };
        while let Some(chunk) = response.chunk().await.map_err(|e| self.classify(&e))? {
            if raw.body.len() + chunk.len() > max_body {
                return Err(TransportError::BodyTooLarge(max_body));
            }
            raw.body.extend_from_slice(&chunk);
        }
        Ok(raw)
    }

    fn classify(&self, error: &reqwest::Error) -> TransportError {
        let text = self.scrub(&error_chain(error));
        if error.is_timeout() {
            TransportError::Timeout(self.timeout.as_secs())
        } else if error.is_connect() {
            TransportError::Connect(text)
        } else {
            TransportError::Broken(text)
        }
    }

    /// The answer as every later step sees it. A server that echoes the key back is
    /// scrubbed here, once, so no reason, excerpt, snapshot or report can carry it.
    fn reply(&self, raw: RawAnswer, mut exchange: Exchange) -> Reply {
        let body = match &self.key {
            Some(key) => key.scrub_bytes(raw.body),
            None => raw.body,
        };
        let json = serde_json::from_slice(&body).ok();
        exchange.status = Some(raw.status);
        exchange.response_body = (!body.is_empty()).then(|| excerpt::of_body(&body));
        Reply {
            status: raw.status,
            content_type: raw.content_type,
            retry_after: raw.retry_after,
            retry_after_ms: raw.retry_after_ms,
            should_retry: raw.should_retry,
            body,
            json,
            exchange,
        }
    }

    fn scrub(&self, text: &str) -> String {
        match &self.key {
            Some(key) => key.scrub(text),
            None => text.to_owned(),
        }
    }
}

struct RawAnswer {
    status: u16,
    content_type: Option<String>,
    retry_after: Option<String>,
    retry_after_ms: Option<String>,
    should_retry: Option<String>,
    body: Vec<u8>,
}

/// The error and its causes on one line: reqwest's own message is often just
/// "error sending request".
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

/// rustls needs one process-wide crypto provider; `ring` keeps the build small.
fn install_crypto_provider() {
    // Err means another part of the process installed one first, which is fine.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_send_on_a_closed_connection_counts_as_stale() {
        let reset = "error sending request: client error (SendRequest): connection error: Connection reset by peer (os error 104)";
        assert!(TransportError::Broken(reset.into()).is_stale_connection());
        let mid_body = "error decoding response body: connection reset";
        assert!(!TransportError::Broken(mid_body.into()).is_stale_connection());
        assert!(!TransportError::Timeout(3).is_stale_connection());
    }
}
