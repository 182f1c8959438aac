//! The server's behaviour as a pure function from an HTTP request to an HTTP response.
//!
//! Nothing here knows about sockets or a web framework: [`Engine::handle`] takes the few
//! parts of a request it needs as borrowed bytes and strings, so the same behaviour can sit
//! behind axum (see `server`) or a persona that alters it.
//!
//! This module routes, authorizes and bounds every request; each contract's handler is a
//! module of its own (`embeddings`, `rerank`), as are the request helpers they share
//! (`fields`) and the errors (`error`).

mod embeddings;
mod error;
mod fields;
mod rerank;
mod speech;

use serde::Serialize;

pub use embeddings::KNOWN_FIELDS;
pub use error::ApiError;
pub use rerank::{RERANK_FIELDS, pair_logit, rerank_logit, rerank_score};
use speech::Task;
pub use speech::{MAX_AUDIO_BYTES, SPEECH_FIELDS, transcript};

use crate::config::Config;

/// The parts of an HTTP request the engine reads.
#[derive(Debug, Clone, Copy)]
pub struct HttpRequest<'a> {
    /// The method, e.g. `"POST"` (case-sensitive, as in HTTP).
    pub method: &'a str,
    /// The path without the query string, e.g. `"/v1/embeddings"`.
    pub path: &'a str,
    /// The `Authorization` header, if present and valid UTF-8.
    pub authorization: Option<&'a str>,
    /// The `Content-Type` header, if present and valid UTF-8.
    pub content_type: Option<&'a str>,
    /// The complete request body.
    pub body: &'a [u8],
}

/// A complete HTTP response, ready for any HTTP stack to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`; always `application/json` for this server.
    pub content_type: &'static str,
    /// Further headers, names in lower case (e.g. `allow` on a 405).
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// A JSON response with no extra headers.
    fn json<T: Serialize>(status: u16, value: &T) -> Self {
        Self {
            status,
            content_type: "application/json",
            headers: Vec::new(),
            // Every body type here has string keys and plain fields, which serde_json
            // always serialises; a failure would be a bug in this crate, not bad input.
            body: serde_json::to_vec(value).expect("response bodies always serialise"),
        }
    }
}

/// A strictly conforming, deterministic `/v1/embeddings` + `/v1/models` + `/v1/rerank`
/// implementation; one served model answers both embeddings and rerank.
#[derive(Debug, Clone)]
pub struct Engine {
    config: Config,
}

/// The paths the engine serves; `/embeddings` and `/models` are accepted too so clients
/// configured with a base URL lacking `/v1` still work. Rerank answers on every path a
/// Cohere/Jina-style client is known to call: `/v1/rerank` (Cohere v1, Jina), `/v2/rerank`
/// (Cohere's v2 SDK) and `/rerank` (TEI- and Infinity-style base URLs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    Embeddings,
    Models,
    Rerank,
    Transcriptions,
    Translations,
}

impl Route {
    fn of(path: &str) -> Option<Self> {
        match path {
            "/v1/embeddings" | "/embeddings" => Some(Self::Embeddings),
            "/v1/models" | "/models" => Some(Self::Models),
            "/v1/rerank" | "/rerank" | "/v2/rerank" => Some(Self::Rerank),
            "/v1/audio/transcriptions" | "/audio/transcriptions" => Some(Self::Transcriptions),
            "/v1/audio/translations" | "/audio/translations" => Some(Self::Translations),
            _ => None,
        }
    }

    /// The largest body the route reads: an upload of OpenAI's 25 MiB limit with its
    /// form fields around it (a larger body is refused before it is parsed), else the
    /// configured limit.
    fn max_body_bytes(self, config: &Config) -> usize {
        match self {
            Self::Transcriptions | Self::Translations => {
                config.max_body_bytes.max(MAX_AUDIO_BYTES + 16 * 1024)
            }
            Self::Embeddings | Self::Models | Self::Rerank => config.max_body_bytes,
        }
    }

    fn method(self) -> &'static str {
        match self {
            Self::Embeddings | Self::Rerank | Self::Transcriptions | Self::Translations => "POST",
            Self::Models => "GET",
        }
    }
}

impl Engine {
    /// An engine serving `config`.
    pub fn new(config: Config) -> Self {
        Self { config }
    }

    /// The configuration this engine serves.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The largest body any route reads (an audio upload's), which the HTTP layer
    /// buffers before the route's own limit is applied.
    pub fn largest_body(&self) -> usize {
        Route::Transcriptions.max_body_bytes(&self.config)
    }

    /// Answers one request. Never panics on any input; client mistakes are always 4xx.
    pub fn handle(&self, request: &HttpRequest<'_>) -> HttpResponse {
        self.try_handle(request).unwrap_or_else(HttpResponse::from)
    }

    /// Checks run in the order a real gateway runs them: authentication first (so nothing
    /// leaks to an unauthenticated caller), then routing, method, size and media type.
    fn try_handle(&self, request: &HttpRequest<'_>) -> Result<HttpResponse, ApiError> {
        self.authorize(request.authorization)?;
        let route = Route::of(request.path).ok_or_else(|| ApiError::UnknownUrl {
            method: request.method.to_owned(),
            path: request.path.to_owned(),
        })?;
        if request.method != route.method() {
            return Err(ApiError::MethodNotAllowed {
                method: request.method.to_owned(),
                path: request.path.to_owned(),
                allow: route.method(),
            });
        }
        if request.body.len() > route.max_body_bytes(&self.config) {
            // An upload is refused for its file's size, as OpenAI words it.
            let limit = match route {
                Route::Transcriptions | Route::Translations => MAX_AUDIO_BYTES,
                _ => route.max_body_bytes(&self.config),
            };
            return Err(ApiError::PayloadTooLarge { limit });
        }
        match route {
            Route::Embeddings => self.embeddings(request),
            Route::Rerank => self.rerank(request),
            Route::Transcriptions => self.speech(request, Task::Transcribe),
            Route::Translations => self.speech(request, Task::Translate),
            Route::Models => Ok(HttpResponse::json(200, &ModelList::of(&self.config))),
        }
    }

    fn authorize(&self, authorization: Option<&str>) -> Result<(), ApiError> {
        let Some(expected) = &self.config.api_key else {
            return Ok(());
        };
        match authorization.and_then(bearer_token) {
            Some(given) if constant_time_eq(given.as_bytes(), expected.as_bytes()) => Ok(()),
            _ => Err(ApiError::InvalidApiKey),
        }
    }
}

/// The token of an `Authorization: Bearer <token>` header; the scheme is case-insensitive
/// (RFC 9110 §11.1).
fn bearer_token(header: &str) -> Option<&str> {
    let (scheme, token) = header.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim_start())
}

/// Compares secrets without stopping at the first difference, so response timing does not
/// reveal how much of a guessed key was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// Accepts `application/json` with any parameters (`; charset=utf-8`), case-insensitively.
fn require_json(content_type: Option<&str>) -> Result<(), ApiError> {
    let media_type = content_type.map(|value| value.split(';').next().unwrap_or(value).trim());
    match media_type {
        Some(media_type) if media_type.eq_ignore_ascii_case("application/json") => Ok(()),
        _ => Err(ApiError::UnsupportedMediaType(
            content_type.map(str::to_owned),
        )),
    }
}

#[derive(Serialize)]
pub(super) struct Usage {
    pub(super) prompt_tokens: usize,
    pub(super) total_tokens: usize,
}

/// `GET /v1/models`: the one served model.
#[derive(Serialize)]
struct ModelList<'a> {
    object: &'static str,
    data: [Model<'a>; 1],
}

#[derive(Serialize)]
struct Model<'a> {
    id: &'a str,
    object: &'static str,
    created: u64,
    owned_by: &'static str,
}

impl<'a> ModelList<'a> {
    fn of(config: &'a Config) -> Self {
        Self {
            object: "list",
            data: [Model {
                id: &config.model_id,
                object: "model",
                created: 0,
                owned_by: "embedcheck",
            }],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OverlengthPolicy;
    use crate::embedding::{embed_tokens, truncate_dimensions};
    use crate::tokenizer::tokenize;
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD as BASE64;
    use serde_json::{Value, json};

    const MODEL: &str = "embedcheck-reference";

    fn engine() -> Engine {
        Engine::new(Config::default())
    }

    fn send(
        engine: &Engine,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> HttpResponse {
        engine.handle(&HttpRequest {
            method,
            path,
            authorization: None,
            content_type,
            body,
        })
    }

    fn body_of(response: &HttpResponse) -> Value {
        serde_json::from_slice(&response.body).expect("every response body is JSON")
    }

    /// POSTs `body` as JSON to `/v1/embeddings`; returns the status and parsed body.
    fn post(engine: &Engine, body: Value) -> (u16, Value) {
        let response = send(
            engine,
            "POST",
            "/v1/embeddings",
            Some("application/json"),
            body.to_string().as_bytes(),
        );
        assert_eq!(response.content_type, "application/json");
        (response.status, body_of(&response))
    }

    fn request(extra: Value) -> Value {
        let mut body = json!({"model": MODEL, "input": "hello world"});
        if let (Value::Object(base), Value::Object(extra)) = (&mut body, extra) {
            base.extend(extra);
        }
        body
    }

    fn vectors(body: &Value) -> Vec<Vec<f32>> {
        let data = body["data"].as_array().expect("data is an array");
        data.iter()
            .map(|item| {
                let values = item["embedding"].as_array().expect("float embedding");
                values
                    .iter()
                    .map(|x| x.as_f64().expect("number") as f32)
                    .collect()
            })
            .collect()
    }

    /// Asserts a 4xx-or-other error status, the OpenAI error shape and the `param`.
    fn assert_error(status: u16, body: &Value, expected_status: u16, param: Option<&str>) {
        assert_eq!(status, expected_status, "{body}");
        let error = &body["error"];
        assert!(error["message"].is_string(), "{body}");
        assert!(error["type"].is_string(), "{body}");
        assert_eq!(error["param"].as_str(), param, "{body}");
        assert!(
            error["code"].is_string() || error["code"].is_null(),
            "{body}"
        );
    }

    fn assert_rejected(extra: Value, param: &str) {
        let (status, body) = post(&engine(), request(extra));
        assert_error(status, &body, 400, Some(param));
    }

    fn norm(v: &[f32]) -> f64 {
        v.iter().map(|&x| f64::from(x).powi(2)).sum::<f64>().sqrt()
    }

    // --- success shape ---

    #[test]
    fn a_string_input_returns_one_unit_vector_in_the_openai_shape() {
        let (status, body) = post(&engine(), request(json!({})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["object"], "list");
        assert_eq!(body["model"], MODEL);
        assert_eq!(body["data"][0]["object"], "embedding");
        assert_eq!(body["data"][0]["index"], 0);
        let tokens = tokenize("hello world", 50_000).len();
        assert_eq!(
            body["usage"],
            json!({"prompt_tokens": tokens, "total_tokens": tokens})
        );
        let vectors = vectors(&body);
        assert_eq!(vectors.len(), 1);
        assert_eq!(vectors[0].len(), 256);
        assert!((norm(&vectors[0]) - 1.0).abs() < 1e-6);
    }

    #[test]
    fn a_batch_keeps_input_order_and_each_item_equals_it_alone() {
        let inputs = ["first", "second text", "안녕하세요 세계", "🙂"];
        let (status, body) = post(&engine(), request(json!({ "input": inputs })));
        assert_eq!(status, 200, "{body}");
        let batch = vectors(&body);
        for (index, input) in inputs.iter().enumerate() {
            assert_eq!(body["data"][index]["index"], index);
            let (_, alone) = post(&engine(), request(json!({ "input": input })));
            assert_eq!(batch[index], vectors(&alone)[0], "{input}");
        }
        let tokens: usize = inputs.iter().map(|s| tokenize(s, 50_000).len()).sum();
        assert_eq!(body["usage"]["prompt_tokens"], tokens);
    }

    #[test]
    fn repeated_requests_get_identical_bytes() {
        let body = request(json!({"input": ["a", "b"]})).to_string();
        let first = send(
            &engine(),
            "POST",
            "/v1/embeddings",
            Some("application/json"),
            body.as_bytes(),
        );
        let second = send(
            &engine(),
            "POST",
            "/v1/embeddings",
            Some("application/json"),
            body.as_bytes(),
        );
        assert_eq!(first, second);
    }

    #[test]
    fn the_path_without_v1_is_served_too() {
        let body = request(json!({})).to_string();
        let response = send(
            &engine(),
            "POST",
            "/embeddings",
            Some("application/json"),
            body.as_bytes(),
        );
        assert_eq!(response.status, 200);
    }

    #[test]
    fn token_ids_embed_like_the_text_they_encode() {
        let ids = tokenize("hello world", 50_000);
        let (_, text) = post(&engine(), request(json!({})));
        let (status, flat) = post(&engine(), request(json!({ "input": ids })));
        assert_eq!(status, 200, "{flat}");
        let (status, nested) = post(&engine(), request(json!({ "input": [ids, [1, 2]] })));
        assert_eq!(status, 200, "{nested}");
        assert_eq!(vectors(&flat)[0], vectors(&text)[0]);
        assert_eq!(vectors(&nested)[0], vectors(&text)[0]);
        assert_eq!(nested["usage"]["prompt_tokens"], ids.len() + 2);
    }

    #[test]
    fn every_script_embeds_with_at_least_one_token() {
        for input in [
            "한국어 문장",
            "日本語の文",
            "جملة عربية",
            "🙂🎉",
            "Ελληνικά",
            "\u{301}",
        ] {
            let (status, body) = post(&engine(), request(json!({ "input": input })));
            assert_eq!(status, 200, "{input}: {body}");
            assert!(
                body["usage"]["prompt_tokens"].as_u64() >= Some(1),
                "{input}"
            );
        }
    }

    // --- transport-level checks ---

    #[test]
    fn json_with_parameters_or_other_case_is_accepted() {
        let body = request(json!({})).to_string();
        for content_type in [
            "application/json; charset=utf-8",
            "Application/JSON",
            " application/json ",
        ] {
            let response = send(
                &engine(),
                "POST",
                "/v1/embeddings",
                Some(content_type),
                body.as_bytes(),
            );
            assert_eq!(response.status, 200, "{content_type}");
        }
    }

    #[test]
    fn other_or_missing_content_types_are_415() {
        let body = request(json!({})).to_string();
        for content_type in [
            None,
            Some("text/plain"),
            Some("application/jsonx"),
            Some(""),
        ] {
            let response = send(
                &engine(),
                "POST",
                "/v1/embeddings",
                content_type,
                body.as_bytes(),
            );
            assert_error(response.status, &body_of(&response), 415, None);
        }
    }

    #[test]
    fn malformed_json_is_400() {
        for body in [&b"{"[..], b"", b"not json", b"{\"model\": }", b"\xff\xfe"] {
            let response = send(
                &engine(),
                "POST",
                "/v1/embeddings",
                Some("application/json"),
                body,
            );
            assert_error(response.status, &body_of(&response), 400, None);
        }
    }

    #[test]
    fn a_body_that_is_not_an_object_is_400() {
        for body in [json!([1, 2]), json!("hello"), json!(null), json!(3)] {
            let (status, response) = post(&engine(), body);
            assert_error(status, &response, 400, None);
        }
    }

    #[test]
    fn deeply_nested_json_is_400_not_a_crash() {
        let body = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let response = send(
            &engine(),
            "POST",
            "/v1/embeddings",
            Some("application/json"),
            body.as_bytes(),
        );
        assert_eq!(response.status, 400);
    }

    #[test]
    fn a_body_over_the_limit_is_413() {
        let engine = Engine::new(Config {
            max_body_bytes: 64,
            ..Config::default()
        });
        let body = request(json!({"input": "x".repeat(100)})).to_string();
        let response = send(
            &engine,
            "POST",
            "/v1/embeddings",
            Some("application/json"),
            body.as_bytes(),
        );
        assert_error(response.status, &body_of(&response), 413, None);
    }

    #[test]
    fn other_methods_on_embeddings_are_405_with_allow() {
        for method in ["GET", "PUT", "DELETE", "post"] {
            let response = send(&engine(), method, "/v1/embeddings", None, b"");
            assert_error(response.status, &body_of(&response), 405, None);
            assert_eq!(response.headers, [("allow", "POST".to_owned())]);
        }
    }

    #[test]
    fn models_lists_the_served_model() {
        let response = send(&engine(), "GET", "/v1/models", None, b"");
        assert_eq!(response.status, 200);
        assert_eq!(
            body_of(&response),
            json!({"object": "list", "data": [
                {"id": MODEL, "object": "model", "created": 0, "owned_by": "embedcheck"}
            ]})
        );
    }

    #[test]
    fn posting_to_models_is_405_with_allow_get() {
        let response = send(
            &engine(),
            "POST",
            "/v1/models",
            Some("application/json"),
            b"{}",
        );
        assert_eq!(response.status, 405);
        assert_eq!(response.headers, [("allow", "GET".to_owned())]);
    }

    #[test]
    fn unknown_paths_are_404_with_an_openai_body() {
        for path in [
            "/",
            "/v1",
            "/v1/embeddings/",
            "/v1/chat/completions",
            "/v2/embed",
        ] {
            let response = send(&engine(), "POST", path, Some("application/json"), b"{}");
            let body = body_of(&response);
            assert_error(response.status, &body, 404, None);
            assert!(
                body["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(path))
            );
        }
    }

    // --- authentication ---

    fn keyed_engine() -> Engine {
        Engine::new(Config {
            api_key: Some("sk-test-key".to_owned()),
            ..Config::default()
        })
    }

    fn send_with_key(engine: &Engine, path: &str, authorization: Option<&str>) -> HttpResponse {
        let body = request(json!({})).to_string();
        engine.handle(&HttpRequest {
            method: "POST",
            path,
            authorization,
            content_type: Some("application/json"),
            body: body.as_bytes(),
        })
    }

    #[test]
    fn the_right_bearer_key_is_accepted_whatever_the_scheme_case() {
        for header in [
            "Bearer sk-test-key",
            "bearer sk-test-key",
            "BEARER  sk-test-key ",
        ] {
            let response = send_with_key(&keyed_engine(), "/v1/embeddings", Some(header));
            assert_eq!(response.status, 200, "{header}");
        }
    }

    #[test]
    fn missing_or_wrong_keys_are_401_without_echoing_the_key() {
        let wrong = [
            "Bearer sk-wrong-guess",
            "Bearer sk-test-ke",
            "Basic sk-test-key",
            "sk-test-key",
            "Bearer",
        ];
        let attempts = wrong.iter().map(|h| Some(*h)).chain([None]);
        for header in attempts {
            let response = send_with_key(&keyed_engine(), "/v1/embeddings", header);
            assert_eq!(response.status, 401, "{header:?}");
            let body = body_of(&response);
            assert_eq!(
                body,
                json!({"error": {
                    "message": "Incorrect API key provided.",
                    "type": "invalid_request_error",
                    "param": null,
                    "code": "invalid_api_key",
                }})
            );
            assert!(!String::from_utf8_lossy(&response.body).contains("sk-"));
        }
    }

    #[test]
    fn the_key_is_checked_before_routing() {
        for path in ["/v1/models", "/nowhere"] {
            let response = send_with_key(&keyed_engine(), path, None);
            assert_eq!(response.status, 401, "{path}");
        }
    }

    // --- fields ---

    #[test]
    fn unknown_fields_are_rejected_with_openai_wording() {
        for field in [
            "instruction",
            "task",
            "prompt_name",
            "normalize",
            "truncate",
            "api_key",
        ] {
            let (status, body) = post(&engine(), request(json!({ field: "x" })));
            assert_error(status, &body, 400, Some(field));
            assert_eq!(
                body["error"]["message"],
                format!("Unrecognized request argument supplied: {field}")
            );
        }
    }

    #[test]
    fn a_missing_model_is_400() {
        let (status, body) = post(&engine(), json!({"input": "hello"}));
        assert_error(status, &body, 400, Some("model"));
    }

    #[test]
    fn a_non_string_model_is_400() {
        for model in [json!(1), json!(null), json!([MODEL])] {
            assert_rejected(json!({ "model": model }), "model");
        }
    }

    #[test]
    fn an_unknown_model_is_404_model_not_found() {
        let (status, body) = post(
            &engine(),
            request(json!({"model": "text-embedding-3-small"})),
        );
        assert_eq!(status, 404);
        assert_eq!(
            body,
            json!({"error": {
                "message": "The model `text-embedding-3-small` does not exist",
                "type": "invalid_request_error",
                "param": "model",
                "code": "model_not_found",
            }})
        );
    }

    #[test]
    fn a_missing_input_is_400() {
        let (status, body) = post(&engine(), json!({"model": MODEL}));
        assert_error(status, &body, 400, Some("input"));
    }

    #[test]
    fn empty_inputs_are_400() {
        for input in [
            json!(""),
            json!([]),
            json!(["a", ""]),
            json!([[]]),
            json!([[1], []]),
        ] {
            assert_rejected(json!({ "input": input }), "input");
        }
    }

    #[test]
    fn wrongly_typed_inputs_are_400() {
        let inputs = [
            json!(5),
            json!(null),
            json!(true),
            json!({"text": "a"}),
            json!([null]),
            json!([1, "a"]),
            json!(["a", 1]),
            json!([[1], "a"]),
            json!([["a"]]),
            json!([1.5]),
            json!([[1, [2]]]),
        ];
        for input in inputs {
            assert_rejected(json!({ "input": input }), "input");
        }
    }

    #[test]
    fn more_inputs_than_the_batch_limit_are_400_naming_the_limit() {
        let inputs = vec!["a"; 2049];
        let (status, body) = post(&engine(), request(json!({ "input": inputs })));
        assert_error(status, &body, 400, Some("input"));
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("array length must be 2048 or less"),
            "{message}"
        );
    }

    #[test]
    fn a_full_batch_is_accepted() {
        let engine = Engine::new(Config {
            max_batch: 3,
            ..Config::default()
        });
        let (status, body) = post(&engine, request(json!({"input": ["a", "b", "c"]})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["data"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn token_ids_outside_the_vocabulary_are_400_naming_the_id() {
        for (input, id) in [(json!([50_000]), "50000"), (json!([[1], [-3]]), "-3")] {
            let (status, body) = post(&engine(), request(json!({ "input": input })));
            assert_error(status, &body, 400, Some("input"));
            let message = body["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(&format!("token id {id}")), "{message}");
        }
    }

    // --- input_type ---

    #[test]
    fn a_query_gets_the_instruction_in_its_vector_and_usage() {
        let config = Config::default();
        let (_, plain) = post(&engine(), request(json!({})));
        let (status, query) = post(&engine(), request(json!({"input_type": "query"})));
        assert_eq!(status, 200, "{query}");
        assert_ne!(vectors(&query), vectors(&plain));
        let expected = embed_tokens(
            &tokenize(
                &format!("{}hello world", config.query_instruction),
                config.vocab_size,
            ),
            256,
        );
        assert_eq!(vectors(&query)[0], expected);
        let tokens = tokenize(&format!("{}hello world", config.query_instruction), 50_000).len();
        assert_eq!(query["usage"]["prompt_tokens"], tokens);
    }

    #[test]
    fn a_query_of_token_ids_gets_the_instruction_tokens_prepended() {
        let ids = tokenize("hello world", 50_000);
        let (_, text) = post(&engine(), request(json!({"input_type": "query"})));
        let (status, tokens) = post(
            &engine(),
            request(json!({"input": ids, "input_type": "query"})),
        );
        assert_eq!(status, 200, "{tokens}");
        assert_eq!(vectors(&tokens), vectors(&text));
        assert_eq!(tokens["usage"], text["usage"]);
    }

    #[test]
    fn passages_and_documents_are_embedded_as_they_are() {
        let (_, plain) = post(&engine(), request(json!({})));
        for input_type in ["passage", "document"] {
            let (status, body) = post(&engine(), request(json!({ "input_type": input_type })));
            assert_eq!(status, 200);
            assert_eq!(vectors(&body), vectors(&plain), "{input_type}");
        }
    }

    #[test]
    fn other_input_types_are_400() {
        for input_type in [json!("search_query"), json!(""), json!(1), json!(null)] {
            assert_rejected(json!({ "input_type": input_type }), "input_type");
        }
    }

    // --- over-length ---

    fn short_context(overlength: OverlengthPolicy) -> Engine {
        Engine::new(Config {
            max_input_tokens: 4,
            overlength,
            ..Config::default()
        })
    }

    #[test]
    fn over_length_input_is_rejected_under_reject() {
        let engine = short_context(OverlengthPolicy::Reject);
        let (status, body) = post(&engine, request(json!({"input": ["a b c d", "a b c d e"]})));
        assert_error(status, &body, 400, Some("input"));
        assert_eq!(
            body["error"]["message"],
            "input[1] has 5 tokens; this model's maximum context length is 4 tokens"
        );
        assert_eq!(body["error"]["code"], "context_length_exceeded");
    }

    #[test]
    fn input_at_the_limit_is_accepted_under_reject() {
        let engine = short_context(OverlengthPolicy::Reject);
        let (status, body) = post(&engine, request(json!({"input": [1, 2, 3, 4]})));
        assert_eq!(status, 200, "{body}");
    }

    #[test]
    fn the_query_instruction_counts_towards_the_limit() {
        let engine = short_context(OverlengthPolicy::Reject);
        let (status, body) = post(
            &engine,
            request(json!({"input": "a", "input_type": "query"})),
        );
        assert_error(status, &body, 400, Some("input"));
    }

    #[test]
    fn over_length_input_keeps_its_first_tokens_under_truncate() {
        let engine = short_context(OverlengthPolicy::Truncate);
        let (status, long) = post(&engine, request(json!({"input": [1, 2, 3, 4, 5, 6]})));
        assert_eq!(status, 200, "{long}");
        assert_eq!(long["usage"]["prompt_tokens"], 4);
        let (_, head) = post(&engine, request(json!({"input": [1, 2, 3, 4]})));
        assert_eq!(vectors(&long), vectors(&head));
    }

    // --- dimensions ---

    #[test]
    fn fewer_dimensions_are_the_renormalised_prefix_of_the_native_vector() {
        let (_, native) = post(&engine(), request(json!({})));
        let (status, body) = post(&engine(), request(json!({"dimensions": 64})));
        assert_eq!(status, 200, "{body}");
        let short = &vectors(&body)[0];
        assert_eq!(short.len(), 64);
        assert!((norm(short) - 1.0).abs() < 1e-6);
        assert_eq!(*short, truncate_dimensions(&vectors(&native)[0], 64));
    }

    #[test]
    fn native_dimensions_are_accepted_even_without_matryoshka() {
        let engine = Engine::new(Config {
            matryoshka: false,
            ..Config::default()
        });
        let (_, plain) = post(&engine, request(json!({})));
        let (status, body) = post(&engine, request(json!({"dimensions": 256})));
        assert_eq!(status, 200, "{body}");
        assert_eq!(vectors(&body), vectors(&plain));
    }

    #[test]
    fn fewer_dimensions_without_matryoshka_are_400_in_openai_wording() {
        let engine = Engine::new(Config {
            matryoshka: false,
            ..Config::default()
        });
        let (status, body) = post(&engine, request(json!({"dimensions": 64})));
        assert_error(status, &body, 400, Some("dimensions"));
        assert_eq!(
            body["error"]["message"],
            "This model does not support specifying dimensions."
        );
    }

    #[test]
    fn more_dimensions_than_native_are_400_naming_the_native_size() {
        let (status, body) = post(&engine(), request(json!({"dimensions": 257})));
        assert_error(status, &body, 400, Some("dimensions"));
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("dimensions") && message.contains("256"),
            "{message}"
        );
    }

    #[test]
    fn non_integer_or_non_positive_dimensions_are_400() {
        for dims in [
            json!(0),
            json!(-1),
            json!(256.5),
            json!("256"),
            json!(null),
            json!(true),
            json!([64]),
        ] {
            assert_rejected(json!({ "dimensions": dims }), "dimensions");
        }
    }

    // --- encoding_format ---

    #[test]
    fn base64_is_the_little_endian_float32_of_the_float_response() {
        let (_, floats) = post(&engine(), request(json!({"input": ["a", "b"]})));
        let (status, encoded) = post(
            &engine(),
            request(json!({"input": ["a", "b"], "encoding_format": "base64"})),
        );
        assert_eq!(status, 200, "{encoded}");
        for (item, expected) in encoded["data"]
            .as_array()
            .into_iter()
            .flatten()
            .zip(vectors(&floats))
        {
            let text = item["embedding"]
                .as_str()
                .expect("base64 embedding is a string");
            let bytes = BASE64.decode(text).expect("standard padded base64");
            assert_eq!(bytes.len(), 4 * expected.len());
            let decoded: Vec<f32> = bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            assert_eq!(decoded, expected);
        }
    }

    #[test]
    fn explicit_float_equals_the_default() {
        let (_, plain) = post(&engine(), request(json!({})));
        let (status, float) = post(&engine(), request(json!({"encoding_format": "float"})));
        assert_eq!(status, 200);
        assert_eq!(float, plain);
    }

    #[test]
    fn other_encoding_formats_are_400() {
        for format in [
            json!(""),
            json!("bytes"),
            json!("FLOAT"),
            json!(123),
            json!(null),
        ] {
            assert_rejected(json!({ "encoding_format": format }), "encoding_format");
        }
    }

    // --- user ---

    #[test]
    fn any_user_string_is_accepted() {
        for user in ["", "user-1234", "ünïcödé"] {
            let (status, _) = post(&engine(), request(json!({ "user": user })));
            assert_eq!(status, 200, "{user}");
        }
    }

    #[test]
    fn a_non_string_user_is_400() {
        for user in [json!(1), json!(null), json!({"id": 1})] {
            assert_rejected(json!({ "user": user }), "user");
        }
    }

    // --- robustness ---

    #[test]
    fn hostile_bodies_never_get_a_server_error() {
        let bodies = [
            json!({"model": MODEL, "input": [u64::MAX]}).to_string(),
            json!({"model": MODEL, "input": "x", "dimensions": 1e308}).to_string(),
            json!({"model": MODEL, "input": "x", "dimensions": -1e308}).to_string(),
            r#"{"model":"embedcheck-reference","input":"x","dimensions":1e999}"#.to_owned(),
            r#"{"model":"embedcheck-reference","input":"\ud800"}"#.to_owned(),
            r#"{"model":"embedcheck-reference","model":"other","input":"x"}"#.to_owned(),
            "\u{0}".to_owned(),
        ];
        for body in bodies {
            let response = send(
                &engine(),
                "POST",
                "/v1/embeddings",
                Some("application/json"),
                body.as_bytes(),
            );
            assert!(
                (200..500).contains(&response.status),
                "{body}: {}",
                response.status
            );
        }
    }

    #[test]
    fn bearer_tokens_are_split_off_their_scheme() {
        assert_eq!(bearer_token("Bearer abc"), Some("abc"));
        assert_eq!(bearer_token("bearer   abc"), Some("abc"));
        assert_eq!(bearer_token("Token abc"), None);
        assert_eq!(bearer_token("abc"), None);
    }

    #[test]
    fn constant_time_eq_compares_whole_secrets() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }
}
