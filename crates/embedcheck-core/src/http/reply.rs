//! An answer from the server, with accessors that say precisely what is wrong with it.

use crate::http::Exchange;
use serde_json::Value;

/// A complete HTTP answer (status, selected headers, bounded body).
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub content_type: Option<String>,
    pub retry_after: Option<String>,
    /// `retry-after-ms`, which the OpenAI SDKs read before `Retry-After`.
    pub retry_after_ms: Option<String>,
    /// `x-should-retry`, with which a server tells the OpenAI SDKs to retry or not.
    pub should_retry: Option<String>,
    /// `Location` of a redirect, secrets scrubbed; never followed.
    pub location: Option<String>,
    /// The `Server` header, as the engine names itself: a fingerprint, never judged.
    pub server: Option<String>,
    pub body: Vec<u8>,
    /// The body parsed as JSON, when it is JSON (whatever the content type says).
    pub json: Option<Value>,
    /// How this answer appears in evidence.
    pub exchange: Exchange,
    /// The suite's end of the TCP connection that carried it, when known: two answers
    /// with the same address came on one connection, one after the other.
    pub connection: Option<std::net::SocketAddr>,
}

/// The wait a throttling answer asks for, read as the OpenAI SDKs read it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum AskedWait {
    /// `retry-after-ms`, else `Retry-After` in seconds (fractions allowed).
    Seconds(f64),
    /// `Retry-After` as an HTTP date: valid, but how far ahead it is depends on the
    /// server's clock.
    HttpDate,
    /// A `Retry-After` that is neither seconds nor a date (nor negative seconds).
    Unreadable(String),
    /// Neither header.
    NotSaid,
}

impl Reply {
    /// `usage.total_tokens`, where a non-negative integer: what the budget counts,
    /// in OpenAI's usage object every contract's answers share.
    pub(crate) fn total_tokens(&self) -> Option<u64> {
        self.usage_field("total_tokens")
    }

    /// A count in the answer's `usage` object, where a non-negative integer.
    pub(crate) fn usage_field(&self, name: &str) -> Option<u64> {
        self.json.as_ref()?.get("usage")?.get(name)?.as_u64()
    }

    /// What the retry headers ask for: the one reading of them that the session's
    /// waiting and ERR-012's judgement share.
    pub(crate) fn asked_wait(&self) -> AskedWait {
        let seconds = |v: &str| v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0);
        if let Some(ms) = self
            .retry_after_ms
            .as_deref()
            .and_then(|v| seconds(v.trim()))
        {
            return AskedWait::Seconds(ms / 1000.0);
        }
        match self.retry_after.as_deref().map(str::trim) {
            None => AskedWait::NotSaid,
            Some(v) => match seconds(v) {
                Some(s) => AskedWait::Seconds(s),
                None if v.contains("GMT") => AskedWait::HttpDate,
                None => AskedWait::Unreadable(v.to_owned()),
            },
        }
    }

    /// A 3xx: the server sends the client elsewhere instead of answering.
    pub(crate) fn is_redirect(&self) -> bool {
        (300..400).contains(&self.status)
    }

    pub(crate) fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    pub(crate) fn is_client_error(&self) -> bool {
        (400..500).contains(&self.status)
    }

    pub(crate) fn is_server_error(&self) -> bool {
        self.status >= 500
    }

    /// Whether the answer says the route or feature is absent: 404, 405 or 501.
    pub(crate) fn is_absent(&self) -> bool {
        matches!(self.status, 404 | 405 | 501)
    }

    /// Whether the answer refuses the request as such: a 4xx other than those about
    /// access (401, 402, 403, 407) or pace (408, 429). A 5xx is a failure, not a
    /// refusal.
    pub(crate) fn is_refusal(&self) -> bool {
        self.is_client_error() && !matches!(self.status, 401..=403 | 407 | 408 | 429)
    }

    /// Whether two refusals are the same answer: same status, same error text. Two
    /// requests of different content refused alike were refused for something
    /// neither content changes (the route, the model), not for what they carry.
    /// Numbers are masked first: a parser's column or a body's length follows the
    /// content, not the reason (axum: "missing field `texts` at line 1 column 210").
    pub(crate) fn refused_alike(&self, other: &Reply) -> bool {
        let reason = |r: &Reply| -> String {
            let text = r.error_text();
            let mut masked = String::with_capacity(text.len());
            for c in text.chars() {
                match c.is_ascii_digit() {
                    true if masked.ends_with('#') => {}
                    true => masked.push('#'),
                    false => masked.push(c),
                }
            }
            masked
        };
        self.is_refusal() && self.status == other.status && reason(self) == reason(other)
    }

    /// Whether the OpenAI SDKs retry this answer (`_should_retry`): `x-should-retry`
    /// decides when present, else 408, 409, 429 and every 5xx are retried.
    pub(crate) fn is_retried_by_sdks(&self) -> bool {
        match self.should_retry.as_deref().map(str::trim) {
            Some("true") => true,
            Some("false") => false,
            _ => matches!(self.status, 408 | 409 | 429) || self.is_server_error(),
        }
    }

    /// Whether this is a 429 about the account, not the pace: a spent quota or credit
    /// (OpenAI's `insufficient_quota`, "exceeded your current quota", a balance or
    /// billing message). Waiting does not help, and it says nothing about the server.
    pub(crate) fn says_quota_spent(&self) -> bool {
        if self.status != 429 {
            return false;
        }
        let text = String::from_utf8_lossy(&self.body).to_lowercase();
        text.contains("insufficient_quota")
            || text.contains("exceeded your current quota")
            || text.contains("billing")
            || (text.contains("insufficient")
                && ["quota", "credit", "balance", "funds"]
                    .iter()
                    .any(|w| text.contains(w)))
    }

    /// Whether the Content-Type is `application/json` (parameters allowed).
    pub(crate) fn has_json_content_type(&self) -> bool {
        self.content_type.as_deref().is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        })
    }

    /// Whether the OpenAI SDKs generated by Stainless (openai-node among them) parse the
    /// body as JSON: its media type contains `application/json` or ends in `+json`
    /// (`internal/parse.ts`); any other body reaches the caller as a string.
    pub(crate) fn is_parsed_as_json_by_node(&self) -> bool {
        self.content_type.as_deref().is_some_and(|ct| {
            let media = ct.split(';').next().unwrap_or_default().trim();
            media.contains("application/json") || media.ends_with("+json")
        })
    }

    /// The human-readable message of an error body: OpenAI's `error.message`, the flat
    /// `message` of vLLM (old), Dynamo and TEI, or FastAPI's `detail`.
    pub(crate) fn error_message(&self) -> Option<String> {
        let json = self.json.as_ref()?;
        let candidates = [
            json.pointer("/error/message"),
            json.get("message"),
            json.get("error").filter(|e| e.is_string()),
            json.get("detail"),
        ];
        candidates.into_iter().flatten().find_map(|v| match v {
            Value::String(s) if !s.trim().is_empty() => Some(s.clone()),
            Value::Array(_) | Value::Object(_) => Some(v.to_string()),
            _ => None,
        })
    }

    /// A `text/plain` body's text, trimmed, where it says anything.
    pub(crate) fn plain_text_message(&self) -> Option<String> {
        let plain = self.content_type.as_deref().is_some_and(|ct| {
            ct.trim_start()
                .to_ascii_lowercase()
                .starts_with("text/plain")
        });
        let text = String::from_utf8_lossy(&self.body).trim().to_owned();
        (plain && !text.is_empty()).then_some(text)
    }

    /// The whole error text a client could search for a field name: the message plus
    /// `param`, or the body of a plain-text answer; lower-cased.
    pub(crate) fn error_text(&self) -> String {
        let param = self
            .json
            .as_ref()
            .and_then(|j| j.pointer("/error/param").or_else(|| j.get("param")))
            .and_then(Value::as_str)
            .unwrap_or_default();
        match &self.json {
            Some(_) => format!("{} {param}", self.error_message().unwrap_or_default()),
            // A plain-text rejection is its own message (ERR-008 judges that it is
            // not JSON).
            None => String::from_utf8_lossy(&self.body).into_owned(),
        }
        .to_lowercase()
    }

    /// One line for a reason: status and, for errors, the message: the JSON body's, or a
    /// plain-text body itself (axum's and Starlette's rejections are plain text).
    pub(crate) fn summary(&self) -> String {
        let message = self.error_message().or_else(|| self.plain_text_message());
        match message.filter(|_| !self.is_success()) {
            Some(message) => format!(
                "{} \"{}\"",
                self.status,
                crate::http::excerpt::cut(&message, 160)
            ),
            None => self.status.to_string(),
        }
    }
}

#[cfg(test)]
impl Reply {
    /// A JSON answer to `POST /v1/embeddings`, for tests of code that judges answers.
    pub(crate) fn json_for_test(status: u16, body: Value) -> Reply {
        Reply {
            status,
            content_type: Some("application/json".into()),
            retry_after: None,
            retry_after_ms: None,
            should_retry: None,
            location: None,
            server: None,
            body: body.to_string().into_bytes(),
            json: Some(body),
            exchange: Exchange {
                method: "POST".into(),
                path: "/v1/embeddings".into(),
                request_body: None,
                status: Some(status),
                response_body: None,
                millis: 0,
                transport_error: None,
                curl: String::new(),
            },
            connection: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reply(status: u16, body: Value) -> Reply {
        Reply::json_for_test(status, body)
    }

    #[test]
    fn a_refusal_is_a_client_error_about_the_request_and_alike_is_to_the_word() {
        let tei = |message| {
            reply(
                424,
                json!({"code": 424, "message": message, "type": "Backend"}),
            )
        };
        let not_embedding = tei("Backend error: Model is not an embedding model");
        assert!(not_embedding.is_refusal());
        assert!(
            not_embedding.refused_alike(&tei("Backend error: Model is not an embedding model"))
        );
        assert!(!not_embedding.refused_alike(&tei("Input is too long")));
        let axum = |column: u32| {
            let message = format!("missing field `texts` at line 1 column {column}");
            reply(422, json!({"error": message, "error_type": "Validation"}))
        };
        assert!(
            axum(210).refused_alike(&axum(96)),
            "a parser's position is not a reason"
        );
        for status in [401, 403, 408, 429] {
            assert!(
                !reply(status, json!({})).is_refusal(),
                "{status} is about access or pace"
            );
        }
        let failure = reply(500, json!({"message": "boom"}));
        assert!(!failure.is_refusal() && !failure.refused_alike(&failure));
        assert!(reply(501, json!({})).is_absent() && reply(405, json!({})).is_absent());
    }

    #[test]
    fn messages_of_every_known_error_shape() {
        let openai = reply(
            400,
            json!({"error": {"message": "bad dimensions", "param": "dimensions"}}),
        );
        assert_eq!(openai.error_message().as_deref(), Some("bad dimensions"));
        assert!(openai.error_text().contains("dimensions"));
        let mut plain = reply(400, json!({}));
        (plain.json, plain.body) = (None, b"Invalid Encoding_Format: bogus".to_vec());
        assert_eq!(plain.error_text(), "invalid encoding_format: bogus");
        let flat = reply(
            400,
            json!({"message": "Validation: x", "type": "Bad Request", "code": 400}),
        );
        assert_eq!(flat.error_message().as_deref(), Some("Validation: x"));
        let fastapi = reply(422, json!({"detail": [{"loc": ["body", "input"]}]}));
        assert!(fastapi.error_message().unwrap().contains("input"));
        assert_eq!(reply(400, json!({"error": {}})).error_message(), None);
    }

    #[test]
    fn the_asked_wait_reads_milliseconds_first_then_seconds() {
        let mut r = reply(429, json!({}));
        assert_eq!(r.asked_wait(), AskedWait::NotSaid);
        r.retry_after = Some(" 1.5 ".into());
        assert_eq!(r.asked_wait(), AskedWait::Seconds(1.5));
        r.retry_after_ms = Some("250".into());
        assert_eq!(r.asked_wait(), AskedWait::Seconds(0.25));
        r.retry_after_ms = None;
        r.retry_after = Some("Wed, 21 Oct 2015 07:28:00 GMT".into());
        assert_eq!(r.asked_wait(), AskedWait::HttpDate);
        r.retry_after = Some("-3".into());
        assert_eq!(r.asked_wait(), AskedWait::Unreadable("-3".into()));
    }

    #[test]
    fn a_spent_quota_is_told_from_a_pace_limit() {
        let openai = json!({"error": {"message": "You exceeded your current quota, please check your plan and billing details.", "type": "insufficient_quota", "code": "insufficient_quota"}});
        assert!(reply(429, openai.clone()).says_quota_spent());
        assert!(!reply(400, openai).says_quota_spent());
        let pace =
            json!({"error": {"message": "Rate limit reached for requests", "type": "requests"}});
        assert!(!reply(429, pace).says_quota_spent());
        let credit = json!({"error": {"message": "Insufficient credits"}});
        assert!(reply(429, credit).says_quota_spent());
    }

    #[test]
    fn content_type_parameters_are_allowed() {
        let mut r = reply(200, json!({}));
        r.content_type = Some("application/json; charset=utf-8".into());
        assert!(r.has_json_content_type());
        r.content_type = Some("text/plain".into());
        assert!(!r.has_json_content_type());
    }

    #[test]
    fn node_parses_json_by_its_own_reading_of_the_media_type() {
        let mut r = reply(200, json!({}));
        for (ct, parsed) in [
            ("application/json; charset=utf-8", true),
            ("application/problem+json", true),
            ("text/plain; charset=utf-8", false),
        ] {
            r.content_type = Some(ct.into());
            assert_eq!(r.is_parsed_as_json_by_node(), parsed, "{ct}");
        }
        r.content_type = None;
        assert!(!r.is_parsed_as_json_by_node());
    }
}
