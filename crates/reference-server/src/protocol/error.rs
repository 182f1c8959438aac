//! Every way a request can fail, and the one place where a failure becomes an OpenAI error
//! body: `{"error":{"message","type","param","code"}}` as `application/json`.

use serde::Serialize;
use thiserror::Error;

use super::HttpResponse;

/// A failed request. `Display` is the `message` clients see.
///
/// Messages follow OpenAI's wording where it is known (unknown argument, unknown model,
/// batch size, `dimensions` on a model without Matryoshka support) so clients that match
/// on it behave as against OpenAI; elsewhere they name the parameter and the limit. The
/// variants shared by embeddings and rerank carry the parameter they concern, so one
/// wording serves `input` and `documents` alike.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ApiError {
    /// Missing, malformed or wrong `Authorization` header while a key is configured.
    #[error("Incorrect API key provided.")]
    InvalidApiKey,
    /// A path the server does not serve.
    #[error("Invalid URL ({method} {path})")]
    UnknownUrl { method: String, path: String },
    /// A served path asked with the wrong method; `allow` lists the right one.
    #[error("Invalid method for URL ({method} {path}); use {allow}")]
    MethodNotAllowed {
        method: String,
        path: String,
        allow: &'static str,
    },
    /// A body larger than `Config::max_body_bytes`.
    #[error("request body is larger than the limit of {limit} bytes")]
    PayloadTooLarge { limit: usize },
    /// The HTTP layer could not deliver the body (e.g. the connection broke mid-body).
    #[error("failed to read the request body: {0}")]
    UnreadableBody(String),
    /// A `Content-Type` other than `application/json`, or none.
    #[error("Content-Type must be application/json, got {}", .0.as_deref().unwrap_or("none"))]
    UnsupportedMediaType(Option<String>),
    /// A body that is not JSON at all.
    #[error("We could not parse the JSON body of your request: {0}")]
    MalformedJson(String),
    /// Valid JSON that is not an object; holds the kind found (e.g. "an array").
    #[error("the request body must be a JSON object, but got {0} instead")]
    BodyNotObject(&'static str),
    /// A top-level field outside the OpenAI schema (`additionalProperties: false`).
    #[error("Unrecognized request argument supplied: {0}")]
    UnrecognizedArgument(String),
    /// A required field is absent.
    #[error("Missing required parameter: '{0}'.")]
    MissingParameter(&'static str),
    /// A field (or an element of `input` or `documents`, named by `location`) has the wrong
    /// JSON type.
    #[error("Invalid type for '{location}': expected {expected}, but got {actual} instead.")]
    InvalidType {
        param: &'static str,
        location: String,
        expected: &'static str,
        actual: &'static str,
    },
    /// A string field with a value outside its enumeration.
    #[error("Invalid value for '{param}': '{value}'. Supported values are: {supported}.")]
    UnsupportedValue {
        param: &'static str,
        value: String,
        supported: &'static str,
    },
    /// A `response_format` the model's class does not answer in, in OpenAI's words for
    /// gpt-4o-transcribe ("Use 'json' or 'text' instead.").
    #[error(
        "response_format '{format}' is not compatible with model '{model}'. Use {formats} instead."
    )]
    IncompatibleFormat {
        format: String,
        model: String,
        formats: &'static str,
    },
    /// `include[]=logprobs` where OpenAI documents none: another model than the
    /// gpt-4o-transcribe family's, or another format than json.
    #[error(
        "include 'logprobs' is only supported with response_format 'json' and the models gpt-4o-transcribe and gpt-4o-mini-transcribe, not with model '{model}' and response_format '{format}'."
    )]
    LogprobsNotSupported { model: String, format: &'static str },
    /// A model that does not translate on the translations route: OpenAI's
    /// `CreateTranslationRequest` has whisper-1 only.
    #[error("model '{0}' does not support translations; only whisper-1 models translate.")]
    DoesNotTranslate(String),
    /// A `model` other than the one served.
    #[error("The model `{0}` does not exist")]
    ModelNotFound(String),
    /// An empty array where at least one item is needed: `input: []`, `documents: []`.
    #[error("'$.{0}' is invalid: it must contain at least one item")]
    EmptyArray(&'static str),
    /// An empty string, or an empty token array, at `location` (part of `param`).
    #[error("'{location}' is invalid: an input must not be empty")]
    EmptyInput {
        param: &'static str,
        location: String,
    },
    /// More items in `param` than its limit (`Config::max_batch` for `input`,
    /// `Config::max_rerank_documents` for `documents`).
    #[error("'$.{param}' is invalid: array length must be {max} or less, but got {len}")]
    TooManyInputs {
        param: &'static str,
        len: usize,
        max: usize,
    },
    /// A rerank document given as an object with a field besides `text`.
    #[error(
        "Invalid value for 'documents[{index}]': unrecognized field '{field}'; a document is \
         a string or an object with only a string 'text'."
    )]
    UnknownDocumentField { index: usize, field: String },
    /// A token id that is negative or not below the vocabulary size.
    #[error(
        "input[{index}] contains token id {token}, outside this model's vocabulary \
         (ids must be at least 0 and below {vocab_size})"
    )]
    TokenOutOfRange {
        index: usize,
        token: String,
        vocab_size: u32,
    },
    /// Text over `Config::max_input_tokens` that may not be cut: an input or a (query,
    /// document) pair under `OverlengthPolicy::Reject`, or a rerank query, which is never
    /// cut. `location` names it within `param` ("input[1]", "the query with documents[3]").
    #[error("{location} has {tokens} tokens; this model's maximum context length is {max} tokens")]
    ContextLengthExceeded {
        param: &'static str,
        location: String,
        tokens: usize,
        max: usize,
    },
    /// An integer parameter below 1 (`dimensions`, `top_n`); `value` is as sent.
    #[error("'{param}' must be at least 1, but got {value}")]
    NotPositive { param: &'static str, value: String },
    /// `dimensions` above the native size; `requested` is the value as sent.
    #[error("'dimensions' must be at most {native}, this model's native size, but got {requested}")]
    DimensionsTooLarge { requested: String, native: usize },
    /// `dimensions` below the native size on a model configured without Matryoshka.
    #[error("This model does not support specifying dimensions.")]
    DimensionsNotSupported,
    /// A bug in the server, never a client mistake.
    /// A `multipart/form-data` body that does not parse.
    #[error("Could not parse multipart form: {0}")]
    MalformedForm(String),
    /// An upload in none of the containers OpenAI lists (OpenAI's own wording).
    #[error("Invalid file format. Supported formats: {0}")]
    InvalidFileFormat(&'static str),
    /// An upload in a listed container that does not decode.
    #[error("Invalid or unsupported audio file.")]
    InvalidAudio,
    #[error("the reference server failed: {0}")]
    Internal(String),
}

impl ApiError {
    /// The HTTP status: 4xx for every client mistake, 500 only for [`ApiError::Internal`].
    pub fn status(&self) -> u16 {
        match self {
            Self::InvalidApiKey => 401,
            Self::UnknownUrl { .. } | Self::ModelNotFound(_) => 404,
            Self::MethodNotAllowed { .. } => 405,
            Self::PayloadTooLarge { .. } => 413,
            Self::UnsupportedMediaType(_) => 415,
            Self::Internal(_) => 500,
            _ => 400,
        }
    }

    /// The OpenAI `error.param`: the offending request field, when there is one.
    pub fn param(&self) -> Option<&str> {
        match self {
            Self::UnrecognizedArgument(name) => Some(name),
            Self::MissingParameter(param)
            | Self::EmptyArray(param)
            | Self::EmptyInput { param, .. }
            | Self::TooManyInputs { param, .. }
            | Self::ContextLengthExceeded { param, .. }
            | Self::NotPositive { param, .. }
            | Self::InvalidType { param, .. }
            | Self::UnsupportedValue { param, .. } => Some(param),
            Self::ModelNotFound(_) | Self::DoesNotTranslate(_) => Some("model"),
            Self::IncompatibleFormat { .. } => Some("response_format"),
            Self::LogprobsNotSupported { .. } => Some("include"),
            Self::InvalidFileFormat(_) | Self::InvalidAudio => Some("file"),
            Self::TokenOutOfRange { .. } => Some("input"),
            Self::UnknownDocumentField { .. } => Some("documents"),
            Self::DimensionsTooLarge { .. } | Self::DimensionsNotSupported => Some("dimensions"),
            _ => None,
        }
    }

    /// The OpenAI `error.code`, for the failures OpenAI gives a code to.
    pub fn code(&self) -> Option<&'static str> {
        match self {
            Self::InvalidApiKey => Some("invalid_api_key"),
            Self::ModelNotFound(_) => Some("model_not_found"),
            Self::ContextLengthExceeded { .. } => Some("context_length_exceeded"),
            Self::IncompatibleFormat { .. }
            | Self::DoesNotTranslate(_)
            | Self::LogprobsNotSupported { .. } => Some("unsupported_value"),
            _ => None,
        }
    }

    /// The OpenAI `error.type`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Internal(_) => "server_error",
            _ => "invalid_request_error",
        }
    }

    /// Response headers the status requires: RFC 9110 asks for `Allow` on 405 and
    /// `WWW-Authenticate` on 401.
    fn headers(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::MethodNotAllowed { allow, .. } => vec![("allow", (*allow).to_owned())],
            Self::InvalidApiKey => vec![("www-authenticate", "Bearer".to_owned())],
            _ => Vec::new(),
        }
    }
}

/// The wire shape of an error, `{"error": {...}}`.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorObject<'a>,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    message: String,
    #[serde(rename = "type")]
    kind: &'static str,
    param: Option<&'a str>,
    code: Option<&'static str>,
}

impl From<ApiError> for HttpResponse {
    fn from(error: ApiError) -> Self {
        let body = ErrorBody {
            error: ErrorObject {
                message: error.to_string(),
                kind: error.kind(),
                param: error.param(),
                code: error.code(),
            },
        };
        let mut response = HttpResponse::json(error.status(), &body);
        response.headers = error.headers();
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn rendered(error: ApiError) -> (HttpResponse, Value) {
        let response = HttpResponse::from(error);
        let body = serde_json::from_slice(&response.body).expect("error body is JSON");
        (response, body)
    }

    #[test]
    fn errors_render_the_openai_shape_as_json() {
        let (response, body) = rendered(ApiError::ModelNotFound("gpt-x".to_owned()));
        assert_eq!(response.status, 404);
        assert_eq!(response.content_type, "application/json");
        assert_eq!(
            body,
            json!({"error": {
                "message": "The model `gpt-x` does not exist",
                "type": "invalid_request_error",
                "param": "model",
                "code": "model_not_found",
            }})
        );
    }

    #[test]
    fn absent_param_and_code_are_null_not_missing() {
        let (_, body) = rendered(ApiError::MalformedJson("eof".to_owned()));
        assert_eq!(body["error"]["param"], Value::Null);
        assert_eq!(body["error"]["code"], Value::Null);
    }

    #[test]
    fn method_not_allowed_carries_an_allow_header() {
        let (response, _) = rendered(ApiError::MethodNotAllowed {
            method: "GET".to_owned(),
            path: "/v1/embeddings".to_owned(),
            allow: "POST",
        });
        assert_eq!(response.status, 405);
        assert_eq!(response.headers, [("allow", "POST".to_owned())]);
    }

    #[test]
    fn unauthorized_carries_a_bearer_challenge() {
        let (response, body) = rendered(ApiError::InvalidApiKey);
        assert_eq!(response.status, 401);
        assert_eq!(
            response.headers,
            [("www-authenticate", "Bearer".to_owned())]
        );
        assert_eq!(body["error"]["code"], "invalid_api_key");
    }

    #[test]
    fn only_internal_errors_are_server_errors() {
        let (response, body) = rendered(ApiError::Internal("boom".to_owned()));
        assert_eq!(response.status, 500);
        assert_eq!(body["error"]["type"], "server_error");
        assert_eq!(
            ApiError::EmptyArray("input").kind(),
            "invalid_request_error"
        );
    }
}
