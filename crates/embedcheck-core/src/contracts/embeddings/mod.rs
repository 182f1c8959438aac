//! The embeddings contract (`specs/clauses.json`): `POST /v1/embeddings` as OpenAI's
//! API reference and SDKs describe it.

pub(crate) mod clauses;
pub mod facts;
pub mod profiles;
pub mod reference;
pub(crate) mod reply;
pub(crate) mod requests;
pub mod settings;

pub use requests::ROUTE;
pub use settings::EmbeddingsSettings;

use crate::session::Session;
use facts::EmbeddingsFacts;

/// What the embeddings side has learned of the session's server so far (nothing before
/// its first clause).
pub(crate) fn learned(s: &Session) -> EmbeddingsFacts {
    EmbeddingsFacts::of(&s.facts())
}

/// Writes what an embeddings clause learned, for the other clauses and the report.
pub(crate) fn learn(s: &Session, write: impl FnOnce(&mut EmbeddingsFacts)) {
    s.learn(|facts| write(facts.contracts.get_mut()));
}
