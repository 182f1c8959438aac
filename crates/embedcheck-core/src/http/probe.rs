//! A request the suite intends to send, described as data.
//!
//! Describing probes as values (not as code that calls the client) lets the session
//! cache identical probes across clauses, count the ones that are invalid under the
//! contract (the retry-hazard clause), and render any of them as a curl command.

use super::target::RerankRoute;
use serde_json::Value;

/// Which resource a probe addresses: the contract's route, or the models listing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Resource {
    Embeddings,
    Rerank(RerankRoute),
    Models,
    Identity(super::target::IdentityPage),
}

/// The texts of a probe as the token estimate sees them: a WordPiece vocabulary
/// counted a 15-character Korean probe at 35 tokens, nine times the four-characters-a-
/// token estimate, while English costs about what it estimates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Script {
    Ascii,
    OutsideAscii,
}

/// The request body of a probe.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Body {
    None,
    Json(Value),
    /// Bytes sent as they are, with the given content type (malformed JSON, wrong
    /// content type).
    Raw {
        bytes: Vec<u8>,
        content_type: &'static str,
    },
}

/// Whether the contract allows the request. Invalid probes are client mistakes on
/// purpose: a 5xx answer to one of them is the retry hazard. A probe the contract lets
/// a server either refuse or embed is neither, so the checks of client mistakes
/// (ERR-009, ERR-011) do not count it as one by accident; a 5xx is still wrong for it
/// (ERR-013).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Validity {
    Valid,
    Invalid(String),
    /// Either answer is right, and why: a `null` a server may refuse or read as absent,
    /// a request without a key to an endpoint that may not need one.
    Either(String),
}

/// Which credentials a probe carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Credentials {
    /// The run's: the key and secret headers the user named.
    Run,
    /// None (AUTH-001's request without a key).
    Withheld,
    /// An obviously wrong key in their place: how the server answers a key it rejects.
    Wrong,
}

/// One request to send.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Probe {
    pub method: reqwest::Method,
    pub resource: Resource,
    pub body: Body,
    pub validity: Validity,
    /// The run's credentials, none (the clause that checks auth) or a wrong key.
    pub credentials: Credentials,
    /// Bypass the session cache: the clause needs a second, independent answer.
    pub fresh: bool,
    /// Which connection carries it: a pooled one, or one opened for it alone.
    pub connection: Connection,
    /// Sent as written, never said in the server's rerank dialect: how a client of
    /// Cohere's dialect fares (RRS-001).
    pub verbatim: bool,
}

/// Which TCP connection carries a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Connection {
    /// One from the pool, kept open from an earlier answer when the server allows:
    /// what every client with a connection pool sends on.
    Pooled,
    /// A new one, closed after its answer: nothing an earlier request left on a
    /// connection can change what this one is answered.
    New,
}

impl Probe {
    /// A valid `POST /embeddings` with a JSON body.
    pub(crate) fn embed(body: Value) -> Self {
        Probe {
            method: reqwest::Method::POST,
            resource: Resource::Embeddings,
            body: Body::Json(body),
            validity: Validity::Valid,
            credentials: Credentials::Run,
            fresh: false,
            connection: Connection::Pooled,
            verbatim: false,
        }
    }

    /// A `POST /embeddings` the contract does not allow, with why.
    pub(crate) fn invalid(body: Body, why: impl Into<String>) -> Self {
        Probe {
            body,
            validity: Validity::Invalid(why.into()),
            ..Probe::embed(Value::Null)
        }
    }

    /// A `POST /embeddings` a server may refuse or embed, with why.
    pub(crate) fn either(body: Value, why: impl Into<String>) -> Self {
        Probe {
            validity: Validity::Either(why.into()),
            ..Probe::embed(body)
        }
    }

    /// A valid rerank `POST` to `route` with a JSON body.
    pub(crate) fn rerank(route: RerankRoute, body: Value) -> Self {
        Probe {
            resource: Resource::Rerank(route),
            ..Probe::embed(body)
        }
    }

    /// The same request to another resource.
    pub(crate) fn at(mut self, resource: Resource) -> Self {
        self.resource = resource;
        self
    }

    /// `GET /models`.
    pub(crate) fn list_models() -> Self {
        Probe {
            method: reqwest::Method::GET,
            resource: Resource::Models,
            body: Body::None,
            ..Probe::embed(Value::Null)
        }
    }

    /// A GET of a page where the engine describes itself.
    pub(crate) fn identity(page: super::target::IdentityPage) -> Self {
        Probe {
            resource: Resource::Identity(page),
            ..Probe::list_models()
        }
    }

    pub(crate) fn with_method(mut self, method: reqwest::Method) -> Self {
        self.method = method;
        self
    }

    pub(crate) fn unauthenticated(mut self) -> Self {
        self.credentials = Credentials::Withheld;
        self
    }

    pub(crate) fn with_wrong_credentials(mut self) -> Self {
        self.credentials = Credentials::Wrong;
        self
    }

    /// The same request, sent as written whatever dialect the server speaks.
    pub(crate) fn verbatim(mut self) -> Self {
        self.verbatim = true;
        self
    }

    pub(crate) fn fresh(mut self) -> Self {
        self.fresh = true;
        self
    }

    /// The same request, not from the cache, on a connection of its own.
    pub(crate) fn on_new_connection(mut self) -> Self {
        self.fresh = true;
        self.connection = Connection::New;
        self
    }

    /// The body bytes and content type to send.
    pub(crate) fn payload(&self) -> Option<(Vec<u8>, &'static str)> {
        match &self.body {
            Body::None => None,
            Body::Json(value) => Some((value.to_string().into_bytes(), "application/json")),
            Body::Raw {
                bytes,
                content_type,
            } => Some((bytes.clone(), content_type)),
        }
    }

    /// Identity of the probe for caching: same method, resource, body and auth.
    pub(crate) fn cache_key(&self) -> String {
        let body = match &self.body {
            Body::None => String::new(),
            Body::Json(v) => v.to_string(),
            Body::Raw {
                bytes,
                content_type,
            } => format!("{content_type}:{}", String::from_utf8_lossy(bytes)),
        };
        format!(
            "{} {:?} {:?} {body}",
            self.method, self.resource, self.credentials
        )
    }

    /// The work the request carries, which its deadline grows with.
    pub(crate) fn work(&self) -> super::Work {
        let inputs = match &self.body {
            Body::Json(v) if v.get("documents").is_some_and(Value::is_array) => {
                v["documents"].as_array().map_or(1, |d| d.len() as u64)
            }
            Body::Json(v) => match v.get("input") {
                Some(Value::Array(items)) if items.iter().all(Value::is_number) => 1,
                Some(Value::Array(items)) => items.len() as u64,
                Some(_) => 1,
                None => 0,
            },
            Body::Raw { .. } => 1,
            Body::None => 0,
        };
        super::Work {
            inputs,
            tokens: self.estimated_tokens(),
        }
    }

    /// A rough token count of the inputs, for the token budget before any answer.
    /// Whether the probe's texts are all ASCII: what a server's counts of one taught
    /// the token estimates says nothing of the other.
    pub(crate) fn script(&self) -> Script {
        let outside_ascii = match &self.body {
            Body::Json(v) => has_text_outside_ascii(v),
            Body::Raw { bytes, .. } => !bytes.is_ascii(),
            Body::None => false,
        };
        match outside_ascii {
            true => Script::OutsideAscii,
            false => Script::Ascii,
        }
    }

    pub(crate) fn estimated_tokens(&self) -> u64 {
        match &self.body {
            Body::Json(v) => estimate_body(v),
            Body::Raw { bytes, .. } => bytes.len() as u64 / 4,
            Body::None => 0,
        }
    }
}

/// About four characters per token for text, one per token id; a rerank request pays
/// for its query once per document.
fn estimate_body(body: &Value) -> u64 {
    match (body.get("query"), body.get("documents")) {
        (Some(query), Some(Value::Array(documents))) => {
            let query = estimate(query);
            documents
                .iter()
                .map(|d| query + estimate(d.get("text").unwrap_or(d)))
                .sum::<u64>()
                .max(query)
        }
        _ => estimate(body.get("input").unwrap_or(&Value::Null)),
    }
}

/// Whether any string in `value` has a character outside ASCII.
fn has_text_outside_ascii(value: &Value) -> bool {
    match value {
        Value::String(s) => !s.is_ascii(),
        Value::Array(items) => items.iter().any(has_text_outside_ascii),
        Value::Object(map) => map.values().any(has_text_outside_ascii),
        _ => false,
    }
}

/// About four characters per token for ASCII text and one per other character (a
/// WordPiece or byte-level vocabulary cuts Hangul or Chinese at least that finely),
/// one per token id.
fn estimate(input: &Value) -> u64 {
    match input {
        Value::String(s) => {
            let other = s.chars().filter(|c| !c.is_ascii()).count() as u64;
            let ascii = s.chars().count() as u64 - other;
            (ascii.div_ceil(4) + other).max(1)
        }
        Value::Array(items) => items.iter().map(estimate).sum(),
        Value::Number(_) => 1,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn token_estimate_counts_text_and_ids() {
        let probe = Probe::embed(json!({"input": ["abcdefgh", [1, 2, 3]]}));
        assert_eq!(probe.estimated_tokens(), 5);
    }

    /// Four ASCII characters a token, one token a character outside ASCII.
    #[test]
    fn token_estimate_counts_each_character_outside_ascii() {
        let korean = Probe::embed(json!({"input": "서울은 대한민국의 수도입니다."}));
        assert_eq!(korean.estimated_tokens(), 13 + 1);
        assert_eq!(korean.script(), Script::OutsideAscii);
        let english = Probe::embed(json!({"input": "Seoul is the capital."}));
        assert_eq!(english.script(), Script::Ascii);
    }

    #[test]
    fn cache_key_separates_auth_and_method() {
        let a = Probe::embed(json!({"input": "x"}));
        let b = a.clone().unauthenticated();
        let c = a.clone().with_method(reqwest::Method::GET);
        assert_ne!(a.cache_key(), b.cache_key());
        assert_ne!(a.cache_key(), c.cache_key());
    }
}
