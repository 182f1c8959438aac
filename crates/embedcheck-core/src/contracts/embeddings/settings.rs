//! What the user declares about an embedding server instead of letting the suite detect
//! it, which the session keeps among each contract's settings.

use crate::contracts::embeddings::reference::{self, Reference};
use crate::declared::{DEFAULT_QUERY_TASK, Matryoshka, Overlength, QueryTemplate};
use crate::session::Session;
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
