//! The requests a [`Quirk::ErrorWhen`](super::Quirk::ErrorWhen) answers with an error.

use super::request::OPENAI_FIELDS;
use crate::wire::Incoming;
use serde_json::Value;

/// A property of a request, checked before the engine runs.
///
/// Except for [`Trigger::WrongMethod`] and [`Trigger::NoCredentials`], only a `POST` to
/// the embeddings path can fire a trigger, so `GET /models` keeps working.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trigger {
    /// The body is not JSON (llama.cpp's `json::parse` throws, contract-notes §2.6.5).
    MalformedJson,
    /// The body is a JSON object without `input`.
    MissingInput,
    /// `input` is a number, an object, a boolean or null.
    IllTypedInput,
    /// The `Content-Type` is not `application/json`.
    NotJsonContentType,
    /// A method other than `POST` on the embeddings path.
    WrongMethod,
    /// `input` holds token ids (`[int]` or `[[int]]`).
    TokenIds,
    /// `input` is an empty string or an array holding one.
    EmptyString,
    /// `input` is one string rather than an array.
    SingleString,
    /// The body has this top-level field.
    Field(&'static str),
    /// The body has a top-level field outside OpenAI's `CreateEmbeddingRequest` and
    /// `known`.
    UnknownField { known: &'static [&'static str] },
    /// `input` is an array of more than this many items.
    BatchOver(usize),
    /// `dimensions` is an integer above this.
    DimensionsAbove(usize),
    /// No `Authorization` header.
    NoCredentials,
}

impl Trigger {
    pub(crate) fn fires(self, request: &Incoming) -> bool {
        match self {
            Trigger::WrongMethod => request.is_embeddings_path() && request.method != "POST",
            Trigger::NoCredentials => request.authorization.is_none(),
            Trigger::MalformedJson => request.is_embed_post() && request.json().is_none(),
            Trigger::NotJsonContentType => {
                request.is_embed_post() && !request.has_json_content_type()
            }
            Trigger::MissingInput => request.fields().is_some_and(|f| !f.contains_key("input")),
            Trigger::Field(name) => request.fields().is_some_and(|f| f.contains_key(name)),
            Trigger::UnknownField { known } => request.fields().is_some_and(|f| {
                f.keys()
                    .any(|k| !OPENAI_FIELDS.contains(&k.as_str()) && !known.contains(&k.as_str()))
            }),
            Trigger::DimensionsAbove(native) => request.fields().is_some_and(|f| {
                f.get("dimensions")
                    .and_then(Value::as_u64)
                    .is_some_and(|d| d > native as u64)
            }),
            input_trigger => request
                .input()
                .is_some_and(|input| input_trigger.fires_on_input(&input)),
        }
    }

    fn fires_on_input(self, input: &Value) -> bool {
        let items = input.as_array().map_or(&[][..], Vec::as_slice);
        match self {
            Trigger::IllTypedInput => !matches!(input, Value::String(_) | Value::Array(_)),
            Trigger::TokenIds => items.iter().any(|i| i.is_number() || i.is_array()),
            Trigger::EmptyString => input == "" || items.iter().any(|i| i == ""),
            Trigger::SingleString => input.is_string(),
            Trigger::BatchOver(limit) => items.len() > limit,
            _ => false,
        }
    }
}
