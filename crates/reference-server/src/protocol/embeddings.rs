//! `POST /v1/embeddings`: OpenAI's `CreateEmbeddingResponse` for every input, its
//! vector the engine's embedding of its tokens (the query instruction first, the
//! over-length policy applied, cut to `dimensions`), as floats or base64.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Serialize;

mod request;

use super::{ApiError, Engine, HttpRequest, HttpResponse, Usage, require_json};
use crate::config::OverlengthPolicy;
use crate::embedding::{embed_tokens, truncate_dimensions};
use crate::tokenizer::tokenize;
pub use request::KNOWN_FIELDS;
use request::{EmbeddingRequest, EncodingFormat, Input, InputType};

impl Engine {
    pub(super) fn embeddings(&self, request: &HttpRequest<'_>) -> Result<HttpResponse, ApiError> {
        require_json(request.content_type)?;
        let parsed = EmbeddingRequest::from_json(request.body, &self.config)?;
        let token_lists = self.token_lists(parsed.inputs, parsed.input_type)?;
        let data = token_lists
            .iter()
            .enumerate()
            .map(|(index, ids)| EmbeddingItem {
                object: "embedding",
                index,
                embedding: encode(self.vector(ids, parsed.dimensions), parsed.encoding),
            })
            .collect();
        let prompt_tokens = token_lists.iter().map(Vec::len).sum();
        let list = EmbeddingList {
            object: "list",
            data,
            model: &self.config.model_id,
            usage: Usage {
                prompt_tokens,
                total_tokens: prompt_tokens,
            },
        };
        Ok(HttpResponse::json(200, &list))
    }

    /// The ids actually embedded for each input: instruction first, then the input, then
    /// the over-length policy applied to the whole.
    fn token_lists(
        &self,
        inputs: Vec<Input>,
        input_type: InputType,
    ) -> Result<Vec<Vec<u32>>, ApiError> {
        let vocab = self.config.vocab_size;
        let instruction = match input_type {
            InputType::Query => self.config.query_instruction.as_str(),
            InputType::Passage => "",
        };
        let instruction_ids = tokenize(instruction, vocab);
        let lists = inputs.into_iter().enumerate().map(|(index, input)| {
            let ids = match input {
                Input::Text(text) => tokenize(&format!("{instruction}{text}"), vocab),
                Input::Tokens(ids) => [instruction_ids.as_slice(), &ids].concat(),
            };
            self.fit_length(index, ids)
        });
        lists.collect()
    }

    fn fit_length(&self, index: usize, mut ids: Vec<u32>) -> Result<Vec<u32>, ApiError> {
        let max = self.config.max_input_tokens;
        if ids.len() <= max {
            return Ok(ids);
        }
        match self.config.overlength {
            OverlengthPolicy::Reject => Err(ApiError::ContextLengthExceeded {
                param: "input",
                location: format!("input[{index}]"),
                tokens: ids.len(),
                max,
            }),
            OverlengthPolicy::Truncate => {
                ids.truncate(max);
                Ok(ids)
            }
            OverlengthPolicy::Aggregate => Ok(ids),
        }
    }

    /// The native vector, cut to `dimensions` when fewer are asked for.
    fn vector(&self, ids: &[u32], dimensions: usize) -> Vec<f32> {
        let native = embed_tokens(ids, self.config.native_dimensions);
        if dimensions < native.len() {
            truncate_dimensions(&native, dimensions)
        } else {
            native
        }
    }
}

fn encode(vector: Vec<f32>, encoding: EncodingFormat) -> EmbeddingData {
    match encoding {
        EncodingFormat::Float => EmbeddingData::Float(vector),
        EncodingFormat::Base64 => {
            let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
            EmbeddingData::Base64(BASE64.encode(bytes))
        }
    }
}

/// `CreateEmbeddingResponse`.
#[derive(Serialize)]
struct EmbeddingList<'a> {
    object: &'static str,
    data: Vec<EmbeddingItem>,
    model: &'a str,
    usage: Usage,
}

#[derive(Serialize)]
struct EmbeddingItem {
    object: &'static str,
    index: usize,
    embedding: EmbeddingData,
}

#[derive(Serialize)]
#[serde(untagged)]
enum EmbeddingData {
    Float(Vec<f32>),
    Base64(String),
}
