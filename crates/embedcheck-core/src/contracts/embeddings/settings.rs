//! What the user declares about an embedding server instead of letting the suite detect
//! it, which the session keeps among each contract's settings.

use crate::contracts::contract::ServerOptionError;
use crate::contracts::embeddings::reference::{self, Reference};
use crate::declared::{DEFAULT_QUERY_TASK, Matryoshka, Overlength, QueryTemplate, Words, words};
use crate::reference::ReferenceError;
use crate::session::Session;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The embeddings contract's settings.
#[derive(Clone, Debug)]
pub struct EmbeddingsSettings {
    /// The batch size the large-batch clause tries.
    pub large_batch: usize,
    /// Declared Matryoshka support, or `Auto` to detect it.
    pub matryoshka: Matryoshka,
    /// The over-length policy the client relies on.
    pub overlength: Overlength,
    /// The per-input token limit, when declared instead of searched for.
    pub max_input_tokens: Option<u64>,
    /// The query instruction the client expects `input_type: "query"` to prepend.
    pub query_instruction: Option<QueryTemplate>,
    /// What `{task}` stands for in `query_instruction`.
    pub query_task: String,
    /// The model's own vectors the `reference` family compares with (`--reference`).
    pub reference: Option<Arc<Reference>>,
    /// Cosine with the reference a vector must reach (`--reference-threshold`).
    pub reference_threshold: f64,
}

impl Default for EmbeddingsSettings {
    /// The command line's defaults.
    fn default() -> Self {
        EmbeddingsSettings {
            large_batch: 2048,
            matryoshka: Matryoshka::Auto,
            overlength: Overlength::Any,
            max_input_tokens: None,
            query_instruction: None,
            query_task: DEFAULT_QUERY_TASK.to_owned(),
            reference: None,
            reference_threshold: reference::DEFAULT_THRESHOLD,
        }
    }
}

/// The run's embeddings settings (the defaults where the user declared none).
pub(crate) fn of(s: &Session) -> EmbeddingsSettings {
    s.settings()
        .contracts
        .get::<EmbeddingsSettings>()
        .cloned()
        .unwrap_or_default()
}

/// The embeddings contract's command-line options, read by the one parser of the
/// command line (each also from its `EMBEDCHECK_*` variable).
#[derive(Clone, Debug, clap::Args)]
pub struct EmbeddingsOptions {
    /// Batch size the large-batch clauses send (IN-008 embeds it, CONS-006 compares its
    /// deep positions with their texts alone).
    #[arg(long, env = "EMBEDCHECK_LARGE_BATCH", value_name = "N", default_value_t = 2048,
          value_parser = clap::value_parser!(u64).range(2..=100_000))]
    pub large_batch: u64,

    /// Whether the model supports Matryoshka truncation (dimensions below the native
    /// size); auto detects it from one request and the report says which.
    #[arg(long, env = "EMBEDCHECK_MATRYOSHKA", value_name = "WHEN", default_value = "auto",
          value_parser = words::<Matryoshka>())]
    pub matryoshka: Matryoshka,

    /// The over-length policy your client relies on; a server with the other policy
    /// fails LEN-003.
    #[arg(long, env = "EMBEDCHECK_OVERLENGTH", value_name = "POLICY", default_value = "any",
          value_parser = words::<Overlength>())]
    pub overlength: Overlength,

    /// Per-input token limit of the model; without it the suite searches for the limit.
    #[arg(long, env = "EMBEDCHECK_MAX_INPUT_TOKENS", value_name = "N",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_input_tokens: Option<u64>,

    /// Query instruction your client expects `input_type: "query"` to prepend, with
    /// {text} and optionally {task} (e.g. 'Instruct: {task}\nQuery: {text}'; \n is a newline).
    #[arg(long, env = "EMBEDCHECK_QUERY_INSTRUCTION", value_name = "TEMPLATE")]
    pub query_instruction: Option<QueryTemplate>,

    /// What {task} stands for in --query-instruction.
    #[arg(long, env = "EMBEDCHECK_QUERY_TASK", value_name = "TEXT",
          default_value = DEFAULT_QUERY_TASK)]
    pub query_task: String,

    /// Known answers (JSON Lines: a header, then {"text", "embedding", "tokens"} per text, as
    /// lab/reference.py writes them from the model's own library): the reference family
    /// holds the server's vectors against them. Without it that family skips.
    #[arg(long, env = "EMBEDCHECK_REFERENCE", value_name = "FILE")]
    pub reference: Option<PathBuf>,

    /// Cosine with the reference a vector must reach (engines on the same weights agree
    /// above 0.999; broken pooling falls far below).
    #[arg(long, env = "EMBEDCHECK_REFERENCE_THRESHOLD", value_name = "COSINE",
          default_value_t = reference::DEFAULT_THRESHOLD,
          value_parser = threshold)]
    pub reference_threshold: f64,
}

impl EmbeddingsOptions {
    /// The settings these options declare; fails on an unreadable reference file.
    pub fn settings(&self) -> Result<EmbeddingsSettings, ReferenceError> {
        Ok(EmbeddingsSettings {
            large_batch: self.large_batch as usize,
            matryoshka: self.matryoshka,
            overlength: self.overlength,
            max_input_tokens: self.max_input_tokens,
            query_instruction: self.query_instruction.clone(),
            query_task: self.query_task.clone(),
            reference: self.reference.as_deref().map(load).transpose()?,
            reference_threshold: self.reference_threshold,
        })
    }
}

/// A known-answers file, read once and shared by every session that uses it.
fn load(path: &Path) -> Result<Arc<Reference>, ReferenceError> {
    Ok(Arc::new(Reference::load(path)?))
}

/// A cosine threshold: a number in (0, 1].
fn threshold(word: &str) -> Result<f64, String> {
    match word.parse::<f64>() {
        Ok(t) if t > 0.0 && t <= 1.0 => Ok(t),
        _ => Err(format!("expected a cosine in (0, 1], got {word:?}")),
    }
}

/// One matrix server's own embeddings values (its `[[server]]` entry), over the run's.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
pub struct EmbeddingsServer {
    matryoshka: Option<String>,
    overlength: Option<String>,
    max_input_tokens: Option<u64>,
    query_instruction: Option<String>,
    /// This server's known answers (`--reference`), when they differ from the run's.
    reference: Option<PathBuf>,
}

impl EmbeddingsServer {
    /// `settings` with this server's values over them.
    pub fn over(&self, settings: &mut EmbeddingsSettings) -> Result<(), ServerOptionError> {
        if let Some(path) = &self.reference {
            settings.reference = Some(load(path)?);
        }
        if let Some(word) = &self.matryoshka {
            settings.matryoshka = declared(word, "matryoshka")?;
        }
        if let Some(word) = &self.overlength {
            settings.overlength = declared(word, "overlength")?;
        }
        settings.max_input_tokens = self.max_input_tokens.or(settings.max_input_tokens);
        if let Some(template) = &self.query_instruction {
            settings.query_instruction = Some(template.parse().map_err(
                |e: crate::declared::TemplateError| ServerOptionError::Value {
                    field: "query_instruction",
                    why: e.to_string(),
                },
            )?);
        }
        Ok(())
    }
}

/// A declared word of a server's entry, with the words' own error (what it expects,
/// what it got) and the field it was found in.
fn declared<T: Words>(word: &str, field: &'static str) -> Result<T, ServerOptionError> {
    T::parse_word(word).map_err(|e| ServerOptionError::Value {
        field,
        why: e.to_string(),
    })
}
