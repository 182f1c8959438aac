//! What the user declares about a speech-to-text server, which the session keeps among
//! each contract's settings.

use super::reference::SpeechReference;
use crate::session::Session;
use std::sync::Arc;

/// The speech contract's settings.
#[derive(Clone, Debug, Default)]
pub struct SpeechSettings {
    /// The model to transcribe with (`--speech-model`), else the run's: a server that
    /// serves embeddings and speech (the study's, a LiteLLM proxy) names a model for
    /// each.
    pub model: Option<String>,
    /// The model's own transcripts of the suite's clip (`--speech-reference`).
    pub reference: Option<Arc<SpeechReference>>,
}

/// The run's speech settings (the defaults where the user declared none).
pub(crate) fn of(s: &Session) -> SpeechSettings {
    s.settings()
        .contracts
        .get::<SpeechSettings>()
        .cloned()
        .unwrap_or_default()
}
