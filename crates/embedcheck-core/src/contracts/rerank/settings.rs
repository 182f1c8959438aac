//! What the user declares about a reranker, which the session keeps among each
//! contract's settings.

use crate::contracts::rerank::reference::RerankReference;
use crate::session::Session;
use std::sync::Arc;

/// The rerank contract's settings.
#[derive(Clone, Debug, Default)]
pub struct RerankSettings {
    /// The model to rerank with (`--rerank-model`), else the run's.
    pub model: Option<String>,
    /// The reranker's own scores the `rerank-scores` family compares with
    /// (`--rerank-reference`).
    pub reference: Option<Arc<RerankReference>>,
    /// The reranker scores its documents together (`--listwise`, as jina-reranker-v3
    /// does): scores that move with position or neighbours are its design, observed by
    /// RRQ-001, RRQ-002 and RRQ-004, never failed.
    pub listwise: bool,
}

/// The run's rerank settings (the defaults where the user declared none).
pub(crate) fn of(s: &Session) -> RerankSettings {
    s.settings()
        .contracts
        .get::<RerankSettings>()
        .cloned()
        .unwrap_or_default()
}
