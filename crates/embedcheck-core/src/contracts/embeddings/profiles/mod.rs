//! The embeddings contract's client profiles: the OpenAI SDKs' default calls (`sdk`) and
//! LangChain's `OpenAIEmbeddings` (`langchain`).

pub(crate) mod decode;
mod findings;
pub(crate) mod langchain;
pub(crate) mod sdk;

pub use decode::Wrong;
pub use findings::{Call, EmbeddingsFinding};

use crate::profiles::{Client, ClientProfile};

impl Client {
    /// The OpenAI Python SDK (PyPI `openai`).
    pub const OPENAI_PYTHON: Client = Client::new("openai-python", "3.57.0");
    /// The OpenAI Node SDK (npm `openai`).
    pub const OPENAI_NODE: Client = Client::new("openai-node", "7.55.0");
    /// LangChain's `OpenAIEmbeddings` (PyPI `langchain-openai`), on the Python SDK.
    pub const LANGCHAIN_OPENAI: Client = Client::new("langchain-openai", "1.7.4");

    /// Every profiled embeddings client, in the order reports show them.
    pub const EMBEDDINGS: [Client; 3] = [
        Client::OPENAI_PYTHON,
        Client::OPENAI_NODE,
        Client::LANGCHAIN_OPENAI,
    ];
}

/// Every embeddings client "not probed", when the audit could not start: nothing is
/// sent (whether the server serves rerank is unknown, so no rerank client is listed).
pub(crate) fn not_probed(why: &str) -> Vec<ClientProfile> {
    Client::EMBEDDINGS
        .into_iter()
        .map(|client| {
            let finding = EmbeddingsFinding::NotProbed {
                call: Call::One,
                why: why.to_owned(),
            };
            ClientProfile::of(client, vec![finding.into()], Vec::new())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unanswered_request_leaves_the_verdict_open() {
        let profiles = not_probed("failed to reach the server");
        assert!(profiles.iter().all(|p| p.works.is_none()));
        assert_eq!(profiles.len(), Client::EMBEDDINGS.len());
    }
}
