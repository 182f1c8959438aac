//! What the speech side of an audit learns about a server: the model class its
//! clauses judge by. The session keeps it among each contract's facts.

use super::class::Classified;
use crate::session::facts::{Fact, Facts};
use serde::Serialize;

/// What the speech side of an audit learned about the server.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SpeechFacts {
    /// The class of OpenAI transcription model whose contract the clauses judge by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_class: Option<Fact<Classified>>,
}

impl SpeechFacts {
    /// What the speech side learned (nothing where its clauses did not run).
    pub(crate) fn of(facts: &Facts) -> SpeechFacts {
        facts.contracts.get().cloned().unwrap_or_default()
    }

    /// Whether the speech side learned nothing (the report then shows no `speech`).
    pub(crate) fn is_empty(&self) -> bool {
        *self == SpeechFacts::default()
    }

    /// Each fact as one line, under the names of the report's `observations`.
    pub(crate) fn observations(&self, put: &mut dyn FnMut(&str, Option<String>)) {
        put(
            "speech_model_class",
            self.model_class.as_ref().map(|f| f.value.line()),
        );
    }
}
