//! What the reference server impersonates (model id, native size, limits) and how strictly
//! it treats over-length input. Every knob has a conforming default so `Config::default()`
//! is the server the suite audits.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Prepended to every input of a request with `input_type: "query"`, in the style of
/// instruction-tuned embedders (E5-mistral, GTE-Qwen), so that honouring `input_type` is
/// observable both in the vectors and in `usage`.
pub const DEFAULT_QUERY_INSTRUCTION: &str =
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: ";

/// Configuration of one reference server.
///
/// `Debug` redacts `api_key`, so a config can be logged without leaking the secret.
#[derive(Clone)]
pub struct Config {
    /// The only model id the server serves; any other `model` is answered with 404.
    pub model_id: String,
    /// Length of the vectors when the request sends no `dimensions`.
    pub native_dimensions: usize,
    /// Per-input token limit, counted after the query instruction is prepended.
    /// Must be at least 1: a limit of 0 would truncate every input to an empty one.
    pub max_input_tokens: usize,
    /// Whether `dimensions` below the native size is honoured (Matryoshka truncation).
    pub matryoshka: bool,
    /// What to do with an input longer than `max_input_tokens`.
    pub overlength: OverlengthPolicy,
    /// When set, every request needs `Authorization: Bearer <key>`.
    pub api_key: Option<String>,
    /// Maximum number of inputs in one request (OpenAI's limit is 2048).
    pub max_batch: usize,
    /// Maximum number of `documents` in one rerank request: 1000, the most Cohere
    /// recommends and Voyage accepts, so a client that stays within those limits is never
    /// refused here. Must be at least 1.
    pub max_rerank_documents: usize,
    /// Text prepended to each input when the request has `input_type: "query"`.
    pub query_instruction: String,
    /// Size of the toy tokenizer's vocabulary; token-id inputs must be below it.
    pub vocab_size: u32,
    /// Largest accepted request body; larger bodies are answered with 413.
    pub max_body_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            model_id: "embedcheck-reference".to_owned(),
            native_dimensions: 256,
            max_input_tokens: 512,
            matryoshka: true,
            overlength: OverlengthPolicy::default(),
            api_key: None,
            max_batch: 2048,
            max_rerank_documents: 1000,
            query_instruction: DEFAULT_QUERY_INSTRUCTION.to_owned(),
            vocab_size: 50_000,
            max_body_bytes: 16 * 1024 * 1024,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("model_id", &self.model_id)
            .field("native_dimensions", &self.native_dimensions)
            .field("max_input_tokens", &self.max_input_tokens)
            .field("matryoshka", &self.matryoshka)
            .field("overlength", &self.overlength)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("max_batch", &self.max_batch)
            .field("max_rerank_documents", &self.max_rerank_documents)
            .field("query_instruction", &self.query_instruction)
            .field("vocab_size", &self.vocab_size)
            .field("max_body_bytes", &self.max_body_bytes)
            .finish()
    }
}

/// What happens to an input with more tokens than `Config::max_input_tokens`.
///
/// Both are conforming (clause EMB-LEN-01); real servers differ (OpenAI and vLLM reject,
/// TEI, Ollama and Infinity truncate), so personas need both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OverlengthPolicy {
    /// Answer 400 `context_length_exceeded`, as OpenAI does.
    Reject,
    /// Keep the first `max_input_tokens` tokens and embed those.
    #[default]
    Truncate,
    /// Embed the whole input, as vLLM's chunked processing pools its chunks: the
    /// vector of every token, over the limit or not.
    Aggregate,
}

impl fmt::Display for OverlengthPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Reject => "reject",
            Self::Truncate => "truncate",
            Self::Aggregate => "aggregate",
        })
    }
}

/// A string that names no [`OverlengthPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown overlength policy `{0}` (expected `reject`, `truncate` or `aggregate`)")]
pub struct ParseOverlengthPolicyError(String);

impl FromStr for OverlengthPolicy {
    type Err = ParseOverlengthPolicyError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "reject" => Ok(Self::Reject),
            "aggregate" => Ok(Self::Aggregate),
            "truncate" => Ok(Self::Truncate),
            other => Err(ParseOverlengthPolicyError(other.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_describe_the_audited_server() {
        let config = Config::default();
        assert_eq!(config.model_id, "embedcheck-reference");
        assert_eq!(config.native_dimensions, 256);
        assert_eq!(config.max_input_tokens, 512);
        assert!(config.matryoshka);
        assert_eq!(config.overlength, OverlengthPolicy::Truncate);
        assert_eq!(config.api_key, None);
        assert_eq!(config.max_batch, 2048);
        assert_eq!(config.max_rerank_documents, 1000);
        assert!(config.query_instruction.ends_with("\nQuery: "));
        assert_eq!(config.vocab_size, 50_000);
        assert_eq!(config.max_body_bytes, 16 * 1024 * 1024);
    }

    #[test]
    fn debug_redacts_the_api_key() {
        let config = Config {
            api_key: Some("sk-very-secret".to_owned()),
            ..Config::default()
        };
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }

    #[test]
    fn overlength_policy_round_trips_through_its_name() {
        for policy in [OverlengthPolicy::Reject, OverlengthPolicy::Truncate] {
            assert_eq!(policy.to_string().parse(), Ok(policy));
        }
    }

    #[test]
    fn unknown_overlength_policy_is_an_error_naming_the_value() {
        let err = "Truncate".parse::<OverlengthPolicy>().unwrap_err();
        assert!(err.to_string().contains("`Truncate`"), "{err}");
    }
}
