//! The rerank contract (`specs/rerank/clauses.json`): `POST /v1/rerank`, `/rerank` and
//! `/v2/rerank` in Cohere's dialect and in the dialects of TEI, NVIDIA NIM and Voyage.

pub(crate) mod clauses;
pub(crate) mod profiles;
pub(crate) mod requests;
