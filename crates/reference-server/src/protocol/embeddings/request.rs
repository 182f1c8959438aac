//! Parsing and validating a `POST /v1/embeddings` body into an [`EmbeddingRequest`].
//!
//! Validation is strict in the way OpenAI's is: the schema has `additionalProperties:
//! false`, so every field is checked for presence, type and value, and the first problem
//! is reported with the parameter it concerns (with the helpers every contract's request
//! shares, `protocol/fields.rs`).

use serde_json::{Number, Value};

use crate::config::Config;
use crate::protocol::ApiError;
use crate::protocol::fields::{
    check_batch_size, check_model, expect_string, invalid_type, json_integer, json_object,
    reject_unknown_fields, required,
};

/// The top-level fields of OpenAI's `CreateEmbeddingRequest`, plus `input_type`, the
/// vendor field this server honours to show what honouring it looks like.
pub const KNOWN_FIELDS: [&str; 6] = [
    "model",
    "input",
    "encoding_format",
    "dimensions",
    "user",
    "input_type",
];

const INPUT_EXPECTED: &str =
    "a string, an array of strings, an array of integers or an array of arrays of integers";

/// A validated embeddings request.
#[derive(Debug, PartialEq)]
pub(crate) struct EmbeddingRequest {
    /// The inputs in request order; a lone string or token array is a batch of one.
    pub(crate) inputs: Vec<Input>,
    pub(crate) encoding: EncodingFormat,
    /// The length of the returned vectors, between 1 and the native size.
    pub(crate) dimensions: usize,
    pub(crate) input_type: InputType,
}

/// One input, as text or as ids of the server's own tokenizer (already range-checked).
#[derive(Debug, PartialEq)]
pub(crate) enum Input {
    Text(String),
    Tokens(Vec<u32>),
}

/// How vectors are written in the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EncodingFormat {
    /// A JSON array of numbers.
    Float,
    /// Base64 of the little-endian IEEE-754 float32 bytes, as the OpenAI SDKs decode it.
    Base64,
}

/// Which side of an asymmetric retrieval pair the inputs are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputType {
    /// Inputs get the configured query instruction prepended.
    Query,
    /// Inputs are embedded as they are (`passage`, `document`, or no `input_type`).
    Passage,
}

impl EmbeddingRequest {
    /// Parses `body` and validates it against what `config` serves.
    pub(crate) fn from_json(body: &[u8], config: &Config) -> Result<Self, ApiError> {
        let mut fields = json_object(body)?;
        reject_unknown_fields(&fields, &KNOWN_FIELDS)?;
        check_model(required(&mut fields, "model")?, &config.model_id)?;
        let inputs = parse_input(required(&mut fields, "input")?, config)?;
        let encoding = fields
            .remove("encoding_format")
            .map_or(Ok(EncodingFormat::Float), parse_encoding_format)?;
        let dimensions = fields
            .remove("dimensions")
            .map_or(Ok(config.native_dimensions), |v| {
                parse_dimensions(v, config)
            })?;
        if let Some(user) = fields.remove("user") {
            expect_string(user, "user")?;
        }
        let input_type = fields
            .remove("input_type")
            .map_or(Ok(InputType::Passage), parse_input_type)?;
        Ok(Self {
            inputs,
            encoding,
            dimensions,
            input_type,
        })
    }
}

fn parse_input(value: Value, config: &Config) -> Result<Vec<Input>, ApiError> {
    match value {
        Value::String(text) => Ok(vec![text_input(text, "input")?]),
        Value::Array(items) => parse_input_array(items, config),
        other => Err(invalid_type(
            "input",
            "input".to_owned(),
            INPUT_EXPECTED,
            &other,
        )),
    }
}

/// The first item decides which of the three array forms is meant; every other item must
/// then have the same form, so mixed arrays are rejected item by item.
fn parse_input_array(items: Vec<Value>, config: &Config) -> Result<Vec<Input>, ApiError> {
    match items.first() {
        None => Err(ApiError::EmptyArray("input")),
        Some(Value::String(_)) => {
            check_batch_size("input", items.len(), config.max_batch)?;
            let texts = items.into_iter().enumerate().map(|(index, item)| {
                let location = format!("input[{index}]");
                match item {
                    Value::String(text) => text_input(text, &location),
                    other => Err(invalid_type("input", location, "a string", &other)),
                }
            });
            texts.collect()
        }
        Some(Value::Number(_)) => Ok(vec![Input::Tokens(token_ids(
            &items,
            0,
            config.vocab_size,
        )?)]),
        Some(Value::Array(_)) => {
            check_batch_size("input", items.len(), config.max_batch)?;
            let arrays = items
                .into_iter()
                .enumerate()
                .map(|(index, item)| match item {
                    Value::Array(ids) if ids.is_empty() => Err(ApiError::EmptyInput {
                        param: "input",
                        location: format!("input[{index}]"),
                    }),
                    Value::Array(ids) => {
                        token_ids(&ids, index, config.vocab_size).map(Input::Tokens)
                    }
                    other => Err(invalid_type(
                        "input",
                        format!("input[{index}]"),
                        "an array of integers",
                        &other,
                    )),
                });
            arrays.collect()
        }
        Some(other) => Err(invalid_type(
            "input",
            "input[0]".to_owned(),
            INPUT_EXPECTED,
            other,
        )),
    }
}

fn text_input(text: String, location: &str) -> Result<Input, ApiError> {
    if text.is_empty() {
        Err(ApiError::EmptyInput {
            param: "input",
            location: location.to_owned(),
        })
    } else {
        Ok(Input::Text(text))
    }
}

/// The token ids of input `index`, each an integer in `0..vocab_size`.
fn token_ids(items: &[Value], index: usize, vocab_size: u32) -> Result<Vec<u32>, ApiError> {
    items
        .iter()
        .map(|item| match item {
            Value::Number(number) => token_id(number, index, vocab_size),
            other => Err(invalid_type(
                "input",
                format!("input[{index}]"),
                "an array of integers",
                other,
            )),
        })
        .collect()
}

fn token_id(number: &Number, index: usize, vocab_size: u32) -> Result<u32, ApiError> {
    let id = json_integer(number).ok_or_else(|| ApiError::InvalidType {
        param: "input",
        location: format!("input[{index}]"),
        expected: "an array of integers",
        actual: "a fractional number",
    })?;
    u32::try_from(id)
        .ok()
        .filter(|&id| id < vocab_size)
        .ok_or_else(|| ApiError::TokenOutOfRange {
            index,
            token: number.to_string(),
            vocab_size,
        })
}

fn parse_encoding_format(value: Value) -> Result<EncodingFormat, ApiError> {
    match expect_string(value, "encoding_format")?.as_str() {
        "float" => Ok(EncodingFormat::Float),
        "base64" => Ok(EncodingFormat::Base64),
        other => Err(ApiError::UnsupportedValue {
            param: "encoding_format",
            value: other.to_owned(),
            supported: "'float' and 'base64'",
        }),
    }
}

/// Accepts `1..=native`; below native only when Matryoshka truncation is configured.
fn parse_dimensions(value: Value, config: &Config) -> Result<usize, ApiError> {
    let requested = match &value {
        Value::Number(number) => json_integer(number).map(|d| (d, number.to_string())),
        _ => None,
    };
    let Some((dims, shown)) = requested else {
        return Err(invalid_type(
            "dimensions",
            "dimensions".to_owned(),
            "an integer",
            &value,
        ));
    };
    if dims < 1 {
        return Err(ApiError::NotPositive {
            param: "dimensions",
            value: shown,
        });
    }
    let native = config.native_dimensions;
    match usize::try_from(dims) {
        Ok(dims) if dims == native => Ok(dims),
        Ok(dims) if dims < native && config.matryoshka => Ok(dims),
        Ok(dims) if dims < native => Err(ApiError::DimensionsNotSupported),
        _ => Err(ApiError::DimensionsTooLarge {
            requested: shown,
            native,
        }),
    }
}

fn parse_input_type(value: Value) -> Result<InputType, ApiError> {
    match expect_string(value, "input_type")?.as_str() {
        "query" => Ok(InputType::Query),
        "passage" | "document" => Ok(InputType::Passage),
        other => Err(ApiError::UnsupportedValue {
            param: "input_type",
            value: other.to_owned(),
            supported: "'query', 'passage' and 'document'",
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<EmbeddingRequest, ApiError> {
        parse_with(body, &Config::default())
    }

    fn parse_with(body: Value, config: &Config) -> Result<EmbeddingRequest, ApiError> {
        EmbeddingRequest::from_json(body.to_string().as_bytes(), config)
    }

    fn request(extra: Value) -> Value {
        let mut body = json!({"model": "embedcheck-reference", "input": "hello"});
        if let (Value::Object(base), Value::Object(extra)) = (&mut body, extra) {
            base.extend(extra);
        }
        body
    }

    #[test]
    fn a_minimal_request_gets_the_defaults() {
        let parsed = parse(request(json!({}))).expect("valid request");
        assert_eq!(
            parsed,
            EmbeddingRequest {
                inputs: vec![Input::Text("hello".to_owned())],
                encoding: EncodingFormat::Float,
                dimensions: 256,
                input_type: InputType::Passage,
            }
        );
    }

    #[test]
    fn all_four_input_forms_are_accepted() {
        let cases = [
            (json!("a"), vec![Input::Text("a".to_owned())]),
            (
                json!(["a", "b"]),
                vec![Input::Text("a".to_owned()), Input::Text("b".to_owned())],
            ),
            (json!([1, 2, 3]), vec![Input::Tokens(vec![1, 2, 3])]),
            (
                json!([[1], [2, 3]]),
                vec![Input::Tokens(vec![1]), Input::Tokens(vec![2, 3])],
            ),
        ];
        for (input, expected) in cases {
            let parsed = parse(request(json!({ "input": input }))).expect("valid input");
            assert_eq!(parsed.inputs, expected);
        }
    }

    #[test]
    fn integral_floats_count_as_integers() {
        let parsed = parse(request(json!({"input": [7.0], "dimensions": 64.0}))).expect("valid");
        assert_eq!(parsed.inputs, [Input::Tokens(vec![7])]);
        assert_eq!(parsed.dimensions, 64);
    }

    #[test]
    fn mixed_arrays_name_the_offending_item() {
        let err = parse(request(json!({"input": ["a", 1]}))).unwrap_err();
        assert!(err.to_string().contains("'input[1]'"), "{err}");
        assert_eq!(err.param(), Some("input"));
    }

    #[test]
    fn a_first_item_of_no_input_form_is_rejected() {
        for input in [json!([null]), json!([true]), json!([{"a": 1}])] {
            let err = parse(request(json!({ "input": input }))).unwrap_err();
            assert!(
                matches!(err, ApiError::InvalidType { param: "input", .. }),
                "{err:?}"
            );
        }
    }

    #[test]
    fn the_batch_limit_is_inclusive() {
        let config = Config {
            max_batch: 2,
            ..Config::default()
        };
        assert!(parse_with(request(json!({"input": ["a", "b"]})), &config).is_ok());
        assert_eq!(
            parse_with(request(json!({"input": [[1], [2], [3]]})), &config),
            Err(ApiError::TooManyInputs {
                param: "input",
                len: 3,
                max: 2
            })
        );
    }

    #[test]
    fn a_flat_token_array_is_one_input_not_a_batch() {
        let config = Config {
            max_batch: 2,
            ..Config::default()
        };
        let parsed = parse_with(request(json!({"input": [1, 2, 3]})), &config).expect("valid");
        assert_eq!(parsed.inputs.len(), 1);
    }

    #[test]
    fn the_last_vocabulary_id_is_accepted_and_the_next_rejected() {
        assert!(parse(request(json!({"input": [49_999]}))).is_ok());
        let err = parse(request(json!({"input": [[1], [50_000]]}))).unwrap_err();
        assert_eq!(
            err,
            ApiError::TokenOutOfRange {
                index: 1,
                token: "50000".to_owned(),
                vocab_size: 50_000
            }
        );
    }

    #[test]
    fn huge_token_ids_are_out_of_range_not_a_crash() {
        for id in [json!(u64::MAX), json!(1e300), json!(-1)] {
            let err = parse(request(json!({ "input": [id] }))).unwrap_err();
            assert!(matches!(err, ApiError::TokenOutOfRange { .. }), "{err:?}");
        }
    }

    #[test]
    fn huge_dimensions_are_too_large_not_a_crash() {
        for dims in [json!(u64::MAX), json!(1e300)] {
            let err = parse(request(json!({ "dimensions": dims }))).unwrap_err();
            assert!(
                matches!(err, ApiError::DimensionsTooLarge { .. }),
                "{err:?}"
            );
        }
    }

    #[test]
    fn document_is_a_synonym_of_passage() {
        let parsed = parse(request(json!({"input_type": "document"}))).expect("valid");
        assert_eq!(parsed.input_type, InputType::Passage);
    }
}
