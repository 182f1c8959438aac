//! The embeddings contract's client profiles: the OpenAI SDKs' default calls (`sdk`) and
//! LangChain's `OpenAIEmbeddings` (`langchain`).

pub(crate) mod langchain;
pub(crate) mod sdk;
