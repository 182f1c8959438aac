//! The embeddings contract's client profiles: the OpenAI SDKs' default calls (`sdk`) and
//! LangChain's `OpenAIEmbeddings` (`langchain`).

pub(crate) mod decode;
mod findings;
pub(crate) mod langchain;
pub(crate) mod sdk;

pub use decode::Wrong;
pub use findings::{Call, EmbeddingsFinding};

use crate::profiles::{Client, ClientProfile};

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
