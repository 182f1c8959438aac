//! Quirks of embeddings servers: what real ones do at `/v1/embeddings` that the reference
//! engine does not (vendor fields, request parsing, answers, errors, token ids).

pub(super) mod errors;
pub(super) mod fields;
pub(super) mod request;
mod shape;
pub(crate) mod success;
pub(super) mod vocabulary;
