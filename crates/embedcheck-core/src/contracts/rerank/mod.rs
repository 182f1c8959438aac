//! The rerank contract (`specs/rerank/clauses.json`): `POST /v1/rerank`, `/rerank` and
//! `/v2/rerank` in Cohere's dialect and in the dialects of TEI, NVIDIA NIM and Voyage.

pub(crate) mod clauses;
pub mod facts;
pub(crate) mod profiles;
pub mod reference;
pub(crate) mod reply;
pub(crate) mod requests;
pub(crate) mod routes;
pub mod settings;

pub use reply::{RerankDialect, RerankShape};
pub use routes::RerankRoute;
pub use settings::RerankSettings;

use crate::session::Session;
use facts::RerankFacts;

/// What the rerank side has learned of the session's server so far (nothing before its
/// first clause).
pub(crate) fn learned(s: &Session) -> RerankFacts {
    RerankFacts::of(&s.facts())
}

/// Writes what a rerank clause learned, for the other clauses and the report.
pub(crate) fn learn(s: &Session, write: impl FnOnce(&mut RerankFacts)) {
    s.learn(|facts| write(facts.contracts.get_mut()));
}
