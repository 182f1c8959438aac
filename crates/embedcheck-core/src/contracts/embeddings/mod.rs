//! The embeddings contract (`specs/clauses.json`): `POST /v1/embeddings` as OpenAI's
//! API reference and SDKs describe it.

pub(crate) mod clauses;
pub(crate) mod profiles;
pub(crate) mod reply;
pub(crate) mod requests;
pub mod settings;

pub use requests::ROUTE;
pub use settings::EmbeddingsSettings;
