//! A request and an answer as plain, editable data: what quirks rewrite.
//!
//! The reference engine borrows its request and returns a response with static header
//! names; personas need to change bodies, statuses and content types on the way in and
//! out, so both sides are copied into owned values first.

use crate::http::{Request, Response};
use reference_server::{HttpRequest, HttpResponse};
use serde_json::{Map, Value, json};
use std::hash::{DefaultHasher, Hash, Hasher};

/// A request as the persona received it.
#[derive(Clone, Debug)]
pub(crate) struct Incoming {
    pub(crate) method: String,
    pub(crate) path: String,
    /// The query string without its `?`, if the URL had one.
    pub(crate) query: Option<String>,
    pub(crate) authorization: Option<String>,
    pub(crate) content_type: Option<String>,
    pub(crate) body: Vec<u8>,
    /// Every header, names in lower case, for quirks that read a key from another
    /// header than `Authorization`.
    pub(crate) headers: Vec<(String, String)>,
    /// 0 for the first request the server answered, then 1, 2…: the seed of any
    /// per-request behaviour, so a run is reproducible.
    pub(crate) number: u64,
    /// How many identical requests (method, path, body) the server answered before.
    pub(crate) repeat: u64,
    /// The largest request body the server received before this one, in bytes.
    pub(crate) longest_before: usize,
}

impl Incoming {
    /// The request, not yet numbered.
    pub(crate) fn from_request(request: &Request) -> Self {
        let header = |name: &str| request.header(name).map(str::to_owned);
        Incoming {
            method: request.method.clone(),
            path: request.path.clone(),
            query: request.query.clone(),
            authorization: header("authorization"),
            content_type: header("content-type"),
            body: request.body.clone(),
            headers: request.headers.clone(),
            number: 0,
            repeat: 0,
            longest_before: 0,
        }
    }

    /// A first JSON `POST /v1/embeddings` with `body`, for the quirks' unit tests.
    #[cfg(test)]
    pub(crate) fn embed_post(body: &Value) -> Self {
        Incoming {
            method: "POST".to_owned(),
            path: "/v1/embeddings".to_owned(),
            query: None,
            authorization: None,
            content_type: Some("application/json".to_owned()),
            body: body.to_string().into_bytes(),
            headers: Vec::new(),
            number: 0,
            repeat: 0,
            longest_before: 0,
        }
    }

    /// The value of header `name` (case-insensitive), if the request has it.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The value of query parameter `name`, if the URL has it (not percent-decoded:
    /// the values personas look for are plain).
    pub(crate) fn query_value(&self, name: &str) -> Option<&str> {
        self.query
            .as_deref()?
            .split('&')
            .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// What makes two requests identical for [`Incoming::repeat`]: a hash of method,
    /// path and body, so the server need not keep bodies.
    pub(crate) fn identity(&self) -> u64 {
        let mut hasher = DefaultHasher::new();
        (&self.method, &self.path, &self.body).hash(&mut hasher);
        hasher.finish()
    }

    pub(crate) fn as_engine_request(&self) -> HttpRequest<'_> {
        HttpRequest {
            method: &self.method,
            path: &self.path,
            authorization: self.authorization.as_deref(),
            content_type: self.content_type.as_deref(),
            body: &self.body,
        }
    }

    /// Whether this addresses the embeddings resource (any method).
    pub(crate) fn is_embeddings_path(&self) -> bool {
        matches!(self.path.as_str(), "/v1/embeddings" | "/embeddings")
    }

    /// Whether this is a `POST` to the embeddings resource: the only request most
    /// quirks look at (`GET /models` must keep working for the audit to start).
    pub(crate) fn is_embed_post(&self) -> bool {
        self.method == "POST" && self.is_embeddings_path()
    }

    pub(crate) fn has_json_content_type(&self) -> bool {
        self.content_type.as_deref().is_some_and(|ct| {
            ct.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
        })
    }

    /// The body as JSON, if it is JSON.
    pub(crate) fn json(&self) -> Option<Value> {
        embedcheck_core::json::parse(&self.body)
    }

    /// The JSON object of an embeddings `POST`, if the body is one.
    pub(crate) fn fields(&self) -> Option<Map<String, Value>> {
        match self.json() {
            Some(Value::Object(fields)) if self.is_embed_post() => Some(fields),
            _ => None,
        }
    }

    /// Rewrites the top-level fields of an embeddings `POST`; other requests and
    /// bodies that are not JSON objects are left alone.
    pub(crate) fn edit_fields(&mut self, edit: impl FnOnce(&mut Map<String, Value>)) {
        if let Some(mut fields) = self.fields() {
            edit(&mut fields);
            self.body = Value::Object(fields).to_string().into_bytes();
        }
    }

    /// Rewrites every string input (a lone string or the strings of an array).
    pub(crate) fn map_texts(&mut self, map: impl Fn(&str) -> String) {
        self.edit_fields(|fields| match fields.get_mut("input") {
            Some(Value::String(text)) => *text = map(text),
            Some(Value::Array(items)) => {
                for item in items {
                    if let Value::String(text) = item {
                        *text = map(text);
                    }
                }
            }
            _ => {}
        });
    }

    /// The `input` of an embeddings `POST`.
    pub(crate) fn input(&self) -> Option<Value> {
        self.fields()?.remove("input")
    }

    /// The texts of the input in order, `None` for items that are not strings.
    pub(crate) fn texts(&self) -> Vec<Option<String>> {
        match self.input() {
            Some(Value::String(text)) => vec![Some(text)],
            Some(Value::Array(items)) => items
                .into_iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// An answer under construction.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Answer {
    pub(crate) status: u16,
    /// Empty for no `Content-Type` header at all.
    pub(crate) content_type: String,
    pub(crate) headers: Vec<(&'static str, String)>,
    pub(crate) body: Vec<u8>,
}

impl From<HttpResponse> for Answer {
    fn from(response: HttpResponse) -> Self {
        Answer {
            status: response.status,
            content_type: response.content_type.to_owned(),
            headers: response.headers,
            body: response.body,
        }
    }
}

impl Answer {
    /// A JSON answer.
    pub(crate) fn json_body(status: u16, body: &Value) -> Self {
        Answer {
            status,
            content_type: "application/json".to_owned(),
            headers: Vec::new(),
            body: body.to_string().into_bytes(),
        }
    }

    /// An error in OpenAI's shape, as the reference engine writes it; quirks that
    /// restyle errors then treat it like any engine error.
    pub(crate) fn openai_error(status: u16, message: &str) -> Self {
        let kind = if status >= 500 {
            "server_error"
        } else {
            "invalid_request_error"
        };
        let error = json!({"message": message, "type": kind, "param": null, "code": null});
        Answer::json_body(status, &json!({ "error": error }))
    }

    /// A `text/plain` answer, as web frameworks write their own rejections.
    pub(crate) fn plain_text(status: u16, text: &str) -> Self {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8".to_owned(),
            headers: Vec::new(),
            body: text.as_bytes().to_vec(),
        }
    }

    pub(crate) fn json(&self) -> Option<Value> {
        embedcheck_core::json::parse(&self.body)
    }

    /// Replaces the body, keeping status and headers.
    pub(crate) fn set_json(&mut self, body: &Value) {
        self.body = body.to_string().into_bytes();
    }

    /// The `error` object of an OpenAI-shaped error answer.
    pub(crate) fn openai_error_object(&self) -> Option<Map<String, Value>> {
        if self.status < 400 {
            return None;
        }
        match self.json()?.get_mut("error")?.take() {
            Value::Object(error) => Some(error),
            _ => None,
        }
    }

    pub(crate) fn into_response(self) -> Response {
        let response = Response::new(self.status);
        let response = if self.content_type.is_empty() {
            Response {
                body: self.body,
                ..response
            }
        } else {
            response.body(self.body, &self.content_type)
        };
        self.headers
            .into_iter()
            .fold(response, |r, (name, value)| r.header(name, value))
    }
}
