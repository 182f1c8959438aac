//! The reference server of embedcheck: a strictly conforming, deterministic
//! `POST /v1/embeddings` + `GET /v1/models` implementation of the OpenAI contract, plus
//! `POST /v1/rerank` in the portable Cohere/Jina shape, served by the same model.
//!
//! It has three jobs. The suite audits it by default, so every clause must pass on it;
//! personas of real servers are built by wrapping or altering its behaviour; and users run
//! it standalone as a conforming fake for their own client tests.
//!
//! The shape follows those jobs: [`Engine`] is the whole behaviour as a pure function over
//! request bytes (reusable behind any HTTP stack), [`server`] is the thin axum adapter, and
//! the toy [`tokenize`] and [`embed_tokens`] make outputs reproducible to the bit while
//! keeping the properties real models have (unit norm, batch-independence, Matryoshka
//! prefixes, roughly four characters per token). [`rerank_score`] does the same for rerank:
//! a score in [0, 1] from the query tokens a document shares, the same whatever else the
//! request holds.
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! use reference_server::{Config, spawn};
//! let server = spawn(Config::default(), "127.0.0.1:0".parse().unwrap()).await?;
//! println!("point your client at {}", server.base_url());
//! server.shutdown().await
//! # }
//! ```

pub mod config;
pub mod embedding;
pub mod protocol;
pub mod server;
pub mod tokenizer;

pub use config::{Config, DEFAULT_QUERY_INSTRUCTION, OverlengthPolicy, ParseOverlengthPolicyError};
pub use embedding::{embed_tokens, truncate_dimensions};
pub use protocol::{
    ApiError, Engine, HttpRequest, HttpResponse, KNOWN_FIELDS, RERANK_FIELDS, pair_logit,
    rerank_logit, rerank_score, transcript,
};
pub use server::{RunningServer, router, spawn};
pub use tokenizer::tokenize;
