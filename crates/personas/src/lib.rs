//! Personas: in-process servers that behave like real `/v1/embeddings` servers, or
//! break one embedcheck clause on purpose, to test the tester.
//!
//! "A clause that cannot fail is a defect." Every clause is shown to fail on a server
//! that breaks it and to pass on one that keeps it. A [`Persona`] is the reference
//! engine ([`reference_server::Engine`], under a chosen [`Config`]) plus a list of
//! [`Quirk`]s, each a documented deviation of a real server or a deliberate break;
//! [`Persona::start`] serves it on 127.0.0.1 ([`http`], which also serves the
//! scripted servers of the engine's hostile-server tests):
//!
//! ```no_run
//! # async fn example() {
//! let server = personas::tei().start().await;
//! println!("audit {}", server.base_url()); // http://127.0.0.1:PORT/v1
//! # }
//! ```
//!
//! - [`real`]: OpenAI, the study's old FastAPI server and Dynamo + vLLM, vLLM, TEI,
//!   Infinity, llama.cpp, Ollama and LiteLLM, as far as their sources document them;
//! - [`rerank_servers`]: vLLM and Infinity serving a cross-encoder, as the lab measured
//!   them;
//! - [`asymmetric_cpu`] and [`serial_cpu`]: a server seen outside the lab, whose bare
//!   input is a query and which serves one request at a time;
//! - [`vendors`]: hosted APIs (Azure OpenAI, Gemini, Mistral, Voyage, Cohere, Jina) at
//!   their documented URLs, with their key headers, field names and error bodies;
//!   [`PersonaServer::endpoint_url`] gives the URL to audit. They are not in
//!   [`real_servers`]: no published verdict comes from them;
//! - [`breaker`]: for every clause of the catalogue, a persona that breaks it;
//! - [`known_answers`]: the reference file of a persona's model, for the `reference`
//!   family.
//!
//! [`Config`]: reference_server::Config

mod breakers;
mod crash;
pub mod http;
mod known_answers;
mod persona;
mod python_http;
mod quirks;
pub mod real;
pub mod vendors;
mod wire;

pub use breakers::{breaker, broken_clauses};
pub use known_answers::{known_answers, rerank_known_answers, speech_known_answers};
pub use persona::{API_KEY, Persona, PersonaServer};
pub use quirks::{Quirk, RerankQuirk, SpeechQuirk, Trigger};
pub use real::{
    asymmetric_cpu, dynamo_vllm, in_dialect, infinity, infinity_reranker, litellm,
    litellm_reranker, litserve_reranker, llama_cpp, nim_reranker, old_fastapi, ollama, openai,
    python_http_server, real_servers, reference, rerank_servers, serial_cpu, tei, tei_reranker,
    vllm, vllm_reranker, voyage_reranker,
};
