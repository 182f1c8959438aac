//! Sends one probe and reads a bounded answer.
//!
//! Every request has a total timeout (connect, send and body), never follows
//! redirects (a redirect could carry the key to another host, and is itself a
//! finding), goes through no proxy but the one the user named, and reads at most a
//! per-probe number of body bytes, so a hostile or broken server can neither hang nor
//! exhaust the suite. Headers, key and body field names come from [`Access`].

use super::access::{Access, AccessError, Pool};
use super::curl;
use super::deadline::{CEILING, Deadline};
use super::excerpt;
use super::probe::{Body, Connection, Probe};
use super::reply::Reply;
use super::secret::{Secret, Secrets};
use super::target::Target;
use crate::http::Exchange;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why no complete answer arrived.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum TransportError {
    /// The request's deadline passed, which says how long it was and why.
    #[error("no answer within its deadline of {0}")]
    Timeout(Deadline),
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

/// The HTTP client bound to one endpoint and one way of reaching it.
pub struct Transport {
    http: reqwest::Client,
    /// The same client without a pool: each request on a connection of its own.
    unpooled: reqwest::Client,
    target: Target,
    access: Access,
    secrets: Secrets,
    timeout: Duration,
}

impl Transport {
    /// A transport sending `key`, if any, as a Bearer token.
    pub fn new(target: Target, key: Option<Secret>, timeout: Duration) -> Self {
        Self::with_access(target, Access::bearer(key), timeout)
            .expect("a client without proxy or CA file always builds")
    }

    /// A transport reaching `target` as `access` says; fails on a proxy or CA file
    /// the HTTP client cannot use.
    pub fn with_access(
        target: Target,
        access: Access,
        timeout: Duration,
    ) -> Result<Self, AccessError> {
        Ok(Transport {
            // Each request carries its own deadline; the client's only bounds them all.
            http: access.client(CEILING.max(timeout), Pool::Keep)?,
            unpooled: access.client(CEILING.max(timeout), Pool::None)?,
            secrets: access.secrets(&target),
            target,
            access,
            timeout,
        })
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// `--timeout`: the shortest deadline any request gets.
    pub(crate) fn floor(&self) -> Duration {
        self.timeout
    }

    pub(crate) fn access(&self) -> &Access {
        &self.access
    }

    /// Whether the server answers anything at all (any status) to `GET /models`
    /// within a few seconds: the liveness check after a probe got no answer.
    pub(crate) async fn ping(&self) -> bool {
        let request = self
            .http
            .get(self.target.models_url().clone())
            .timeout(self.timeout.min(PING_TIMEOUT));
        self.access
            .apply(request, super::probe::Credentials::Run)
            .send()
            .await
            .is_ok()
    }

    /// Sends `probe`, reading at most `max_body` bytes of the answer before
    /// `deadline`. On failure the exchange still comes back, so evidence shows what
    /// was sent.
    pub(crate) async fn send(
        &self,
        probe: &Probe,
        max_body: usize,
        deadline: &Deadline,
    ) -> Result<Reply, (TransportError, Exchange)> {
        let started = Instant::now();
        let mut exchange = self.exchange_for(probe);
        let mut outcome = self.exchange_bytes(probe, max_body, deadline).await;
        if outcome
            .as_ref()
            .is_err_and(TransportError::is_stale_connection)
        {
            outcome = self.exchange_bytes(probe, max_body, deadline).await;
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

    /// What `probe` would send, for `--dry-run`: the exchange with its curl
    /// reproducer and no answer.
    pub(crate) fn planned(&self, probe: &Probe) -> Exchange {
        self.exchange_for(probe)
    }

    fn exchange_for(&self, probe: &Probe) -> Exchange {
        let url = self.url(probe);
        // A form is shown without encoding it (its files may be 26 MB).
        let payload = match &probe.body {
            Body::Form(_) => None,
            _ => self.payload(probe),
        };
        let (request_body, shown_body) = match (&probe.body, &payload) {
            (Body::Form(form), _) => (Some(form.excerpt()), Some(curl::Shown::Form(form))),
            (_, Some((bytes, content_type))) => (
                Some(excerpt::of_body(bytes)),
                Some(curl::Shown::Bytes(bytes, content_type)),
            ),
            (_, None) => (None, None),
        };
        Exchange {
            method: probe.method.to_string(),
            path: url.path().to_owned(),
            request_body,
            status: None,
            response_body: None,
            millis: 0,
            transport_error: None,
            curl: curl::render(
                &probe.method,
                &super::target::Target::shown(&url),
                shown_body,
                &self.access.shown_headers(probe.credentials),
            ),
        }
    }

    /// The body as sent: an embeddings JSON body in the vendor's field names.
    fn payload(&self, probe: &Probe) -> Option<(Vec<u8>, String)> {
        match &probe.body {
            Body::Json(value) if probe.resource.route().is_some_and(|r| r.vendor_fields) => Some((
                self.access.fields.rewrite(value).to_string().into_bytes(),
                "application/json".to_owned(),
            )),
            _ => probe.payload(),
        }
    }

    fn url(&self, probe: &Probe) -> url::Url {
        match &probe.resource {
            super::probe::Resource::Contract(route) => self.target.url(route),
            super::probe::Resource::Models => self.target.models_url().clone(),
            super::probe::Resource::Identity(page) => self.target.identity_url(*page).clone(),
        }
    }

    async fn exchange_bytes(
        &self,
        probe: &Probe,
        max_body: usize,
        deadline: &Deadline,
    ) -> Result<RawAnswer, TransportError> {
        let client = match probe.connection {
            Connection::Pooled => &self.http,
            Connection::New => &self.unpooled,
        };
        let mut request = client
            .request(probe.method.clone(), self.url(probe))
            .timeout(deadline.after);
        if let Some((bytes, content_type)) = self.payload(probe) {
            request = request
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(bytes);
        }
        let mut response = self
            .access
            .apply(request, probe.credentials)
            .send()
            .await
            .map_err(|e| self.classify(&e, deadline))?;
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
            location: header(reqwest::header::LOCATION),
            server: header(reqwest::header::SERVER),
            body: Vec::new(),
            connection: response
                .extensions()
                .get::<hyper_util::client::legacy::connect::HttpInfo>()
                .map(|info| info.local_addr()),
        };
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| self.classify(&e, deadline))?
        {
            if raw.body.len() + chunk.len() > max_body {
                return Err(TransportError::BodyTooLarge(max_body));
            }
            raw.body.extend_from_slice(&chunk);
        }
        Ok(raw)
    }

    fn classify(&self, error: &reqwest::Error, deadline: &Deadline) -> TransportError {
        let mut text = self.scrub(&error_chain(error));
        if text.contains("UnknownIssuer") {
            text.push_str(
                " (a server behind a private CA: pass its certificate with --ca-cert FILE)",
            );
        }
        if error.is_timeout() {
            TransportError::Timeout(deadline.clone())
        } else if error.is_connect() {
            TransportError::Connect(text)
        } else {
            TransportError::Broken(text)
        }
    }

    /// The answer as every later step sees it. A server that echoes a secret back is
    /// scrubbed here, once, so no reason, excerpt, snapshot or report can carry it.
    fn reply(&self, raw: RawAnswer, mut exchange: Exchange) -> Reply {
        let body = self.secrets.scrub_bytes(raw.body);
        let json = crate::json::parse(&body);
        exchange.status = Some(raw.status);
        // The body is parsed once: a batch's vectors are most of an audit's bytes.
        exchange.response_body = (!body.is_empty()).then(|| match &json {
            Some(value) => excerpt::of_json(value),
            None => excerpt::of_body(&body),
        });
        Reply {
            status: raw.status,
            content_type: raw.content_type,
            retry_after: raw.retry_after,
            retry_after_ms: raw.retry_after_ms,
            should_retry: raw.should_retry,
            location: raw.location.map(|l| self.shown_location(&l)),
            server: raw.server.map(|v| self.scrub(&v)),
            body,
            json,
            exchange,
            connection: raw.connection,
        }
    }

    /// A redirect's `Location` as reports show it: resolved against the endpoint,
    /// query values and passwords redacted as for the endpoint, any secret scrubbed.
    fn shown_location(&self, location: &str) -> String {
        let shown = match self.target.endpoint_url().join(location) {
            Ok(url) => Target::shown(&url),
            Err(_) => location.to_owned(),
        };
        self.scrub(&shown)
    }

    fn scrub(&self, text: &str) -> String {
        self.secrets.scrub(text)
    }
}

struct RawAnswer {
    status: u16,
    content_type: Option<String>,
    retry_after: Option<String>,
    retry_after_ms: Option<String>,
    should_retry: Option<String>,
    location: Option<String>,
    server: Option<String>,
    body: Vec<u8>,
    connection: Option<std::net::SocketAddr>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_send_on_a_closed_connection_counts_as_stale() {
        let reset = "error sending request: client error (SendRequest): connection error: Connection reset by peer (os error 104)";
        assert!(TransportError::Broken(reset.into()).is_stale_connection());
        let mid_body = "error decoding response body: connection reset";
        assert!(!TransportError::Broken(mid_body.into()).is_stale_connection());
        let deadline = Deadline {
            after: Duration::from_secs(3),
            because: crate::http::deadline::Because::Floor,
        };
        assert!(!TransportError::Timeout(deadline).is_stale_connection());
    }
}
