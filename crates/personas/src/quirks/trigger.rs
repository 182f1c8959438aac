//! The requests a [`Quirk::ErrorWhen`](super::Quirk::ErrorWhen) answers with an error.

use super::embeddings::request::OPENAI_FIELDS;
use crate::wire::Incoming;
use serde_json::{Value, json};

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
    /// `input` holds a token id at or above this (outside the vocabulary).
    TokenIdAtLeast(u64),
    /// The body has field `name`, not `null`, with a value other than one of the
    /// strings `allowed`: a vendor's narrower enumeration (Voyage's `encoding_format`
    /// null|base64, Gemini's refusal of base64).
    FieldNotOneOf {
        name: &'static str,
        allowed: &'static [&'static str],
    },
    /// `encoding_format` is present and neither `"float"` nor `"base64"`.
    UnsupportedEncodingFormat,
    /// A batch of several inputs holds one of at least this many tokens (by the
    /// reference tokenizer): llama.cpp's physical batch.
    LongItemInBatch(usize),
    /// A text input contains this: a model whose fp16 activations overflow on
    /// particular texts (ollama/ollama#12921).
    TextContains(&'static str),
    /// Any `POST` to the embeddings path: a server whose model only reranks.
    EmbedPost,
    /// A rerank request of at least this many documents: SGLang 0.5.23 on CPU stopped
    /// answering at 1000 (measured in the lab).
    RerankDocumentsAtLeast(usize),
    /// A rerank request naming this model.
    RerankModel(&'static str),
}

impl Trigger {
    pub(crate) fn fires(self, request: &Incoming) -> bool {
        match self {
            Trigger::WrongMethod => request.is_embeddings_path() && request.method != "POST",
            Trigger::NoCredentials => request.authorization.is_none(),
            Trigger::RerankDocumentsAtLeast(n) => {
                super::rerank::is_rerank(request)
                    && request
                        .json()
                        .and_then(|b| b.get("documents")?.as_array().map(Vec::len))
                        .is_some_and(|len| len >= n)
            }
            Trigger::RerankModel(name) => {
                super::rerank::is_rerank(request)
                    && request
                        .json()
                        .is_some_and(|b| b.get("model") == Some(&json!(name)))
            }
            Trigger::EmbedPost => request.is_embed_post(),
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
            Trigger::FieldNotOneOf { name, allowed } => request.fields().is_some_and(|f| {
                f.get(name).is_some_and(|v| {
                    !v.is_null() && !v.as_str().is_some_and(|s| allowed.contains(&s))
                })
            }),
            Trigger::UnsupportedEncodingFormat => request.fields().is_some_and(|f| {
                f.get("encoding_format")
                    .is_some_and(|v| v != "float" && v != "base64")
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
            Trigger::TextContains(part) => {
                input.as_str().is_some_and(|t| t.contains(part))
                    || items
                        .iter()
                        .filter_map(Value::as_str)
                        .any(|t| t.contains(part))
            }
            Trigger::BatchOver(limit) => items.len() > limit,
            Trigger::TokenIdAtLeast(limit) => token_ids(input).any(|id| id >= limit),
            Trigger::LongItemInBatch(tokens) => {
                items.len() > 1
                    && items
                        .iter()
                        .filter_map(Value::as_str)
                        .any(|text| reference_server::tokenize(text, u32::MAX).len() >= tokens)
            }
            _ => false,
        }
    }
}

/// Every integer in `input` and in its nested arrays: the token ids of `[int]` and
/// `[[int]]` inputs.
fn token_ids(input: &Value) -> Box<dyn Iterator<Item = u64> + '_> {
    match input {
        Value::Number(n) => Box::new(n.as_u64().into_iter()),
        Value::Array(items) => Box::new(items.iter().flat_map(token_ids)),
        _ => Box::new(std::iter::empty()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_outside_the_vendors_list_fires_and_null_or_absence_does_not() {
        let trigger = Trigger::FieldNotOneOf {
            name: "encoding_format",
            allowed: &["base64"],
        };
        let fires = |body: Value| trigger.fires(&Incoming::embed_post(&body));
        assert!(fires(json!({"input": "a", "encoding_format": "float"})));
        assert!(fires(json!({"input": "a", "encoding_format": 1})));
        assert!(!fires(json!({"input": "a", "encoding_format": "base64"})));
        assert!(!fires(json!({"input": "a", "encoding_format": null})));
        assert!(!fires(json!({"input": "a"})));
    }
}
