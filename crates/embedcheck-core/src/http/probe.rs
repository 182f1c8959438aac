//! A request the suite intends to send, described as data.
//!
//! Describing probes as values (not as code that calls the client) lets the session
//! cache identical probes across clauses, count the ones that are invalid under the
//! contract (the retry-hazard clause), and render any of them as a curl command.

use super::route::Route;
use serde_json::Value;

/// Which resource a probe addresses: a contract's route, the models listing, or a page
/// where the engine describes itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Resource {
    Contract(Route),
    Models,
    Identity(super::target::IdentityPage),
}

impl Resource {
    /// The contract route addressed, if any.
    pub(crate) fn route(&self) -> Option<&Route> {
        match self {
            Resource::Contract(route) => Some(route),
            Resource::Models | Resource::Identity(_) => None,
        }
    }
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
    /// A `multipart/form-data` body: text fields and files (an audio clip).
    Form(super::form::Form),
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
    /// A valid `POST` of a JSON body to a contract's route.
    pub(crate) fn post(route: Route, body: Value) -> Self {
        Probe {
            method: reqwest::Method::POST,
            resource: Resource::Contract(route),
            body: Body::Json(body),
            validity: Validity::Valid,
            credentials: Credentials::Run,
            fresh: false,
            connection: Connection::Pooled,
            verbatim: false,
        }
    }

    /// A valid `POST` of a multipart form (a file upload) to a contract's route.
    pub(crate) fn form(route: Route, form: super::form::Form) -> Self {
        Probe {
            body: Body::Form(form),
            ..Probe::post(route, Value::Null)
        }
    }

    /// A `POST` to a contract's route that its contract does not allow, with why.
    pub(crate) fn invalid(route: Route, body: Body, why: impl Into<String>) -> Self {
        Probe {
            body,
            validity: Validity::Invalid(why.into()),
            ..Probe::post(route, Value::Null)
        }
    }

    /// A `POST` to a contract's route that a server may refuse or answer, with why.
    pub(crate) fn either(route: Route, body: Value, why: impl Into<String>) -> Self {
        Probe {
            validity: Validity::Either(why.into()),
            ..Probe::post(route, body)
        }
    }

    /// `GET /models`.
    pub(crate) fn list_models() -> Self {
        Probe {
            method: reqwest::Method::GET,
            resource: Resource::Models,
            body: Body::None,
            validity: Validity::Valid,
            credentials: Credentials::Run,
            fresh: false,
            connection: Connection::Pooled,
            verbatim: false,
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
    pub(crate) fn payload(&self) -> Option<(Vec<u8>, String)> {
        match &self.body {
            Body::None => None,
            Body::Json(value) => Some((
                value.to_string().into_bytes(),
                "application/json".to_owned(),
            )),
            Body::Raw {
                bytes,
                content_type,
            } => Some((bytes.clone(), (*content_type).to_owned())),
            Body::Form(form) => Some(form.encode()),
        }
    }

    /// The bytes of the files the request uploads, which the upload budget counts.
    pub(crate) fn upload_bytes(&self) -> u64 {
        match &self.body {
            Body::Form(form) => form.file_bytes(),
            Body::None | Body::Json(_) | Body::Raw { .. } => 0,
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
            Body::Form(form) => format!("form:{}", form.digest()),
        };
        format!(
            "{} {:?} {:?} {body}",
            self.method, self.resource, self.credentials
        )
    }

    /// The work the request carries, which its deadline grows with: a JSON body's by
    /// its contract's count, any other body one input of a token per four bytes.
    pub(crate) fn work(&self) -> super::Work {
        match (&self.body, self.resource.route()) {
            (Body::Json(v), Some(route)) => (route.work)(v),
            (Body::Raw { bytes, .. }, _) => super::Work {
                inputs: 1,
                tokens: bytes.len() as u64 / 4,
            },
            (Body::Form(_), _) => super::Work {
                inputs: 1,
                tokens: 0,
            },
            (Body::Json(_) | Body::None, _) => super::Work::default(),
        }
    }

    /// Whether the probe's texts are all ASCII: what a server's counts of one taught
    /// the token estimates says nothing of the other.
    pub(crate) fn script(&self) -> Script {
        let outside_ascii = match &self.body {
            Body::Json(v) => has_text_outside_ascii(v),
            Body::Raw { bytes, .. } => !bytes.is_ascii(),
            Body::Form(_) | Body::None => false,
        };
        match outside_ascii {
            true => Script::OutsideAscii,
            false => Script::Ascii,
        }
    }

    /// A rough token count of the inputs, for the token budget before any answer.
    pub(crate) fn estimated_tokens(&self) -> u64 {
        self.work().tokens
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::route::TESTING;
    use serde_json::json;

    #[test]
    fn cache_key_separates_auth_and_method() {
        let a = Probe::post(TESTING, json!({"input": "x"}));
        let b = a.clone().unauthenticated();
        let c = a.clone().with_method(reqwest::Method::GET);
        assert_ne!(a.cache_key(), b.cache_key());
        assert_ne!(a.cache_key(), c.cache_key());
    }
}
